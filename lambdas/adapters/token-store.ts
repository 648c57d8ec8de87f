import { type DynamoDBDocumentClient, GetCommand, ScanCommand, type TransactWriteCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditEntry } from '#domain/audit-entry';
import type { TokenStore, TokenWrites } from '#domain/ports';
import type { NewToken, TokenGrant, TokenLimits, TokenScope } from '#domain/token-model';
import { LEGACY_TOKEN_SCOPE, scopeOf, tokenIdOf } from '#domain/tokens';
import { ifCondition, transact } from './conditions';
import { auditPut, CHILD_PREFIX, keyOf, PARTITION, type StoredToken, tokenItems, tokenLimitsOf } from './layout';
import { type Item, queryAll } from './paging';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A token as `token list` shows it: never the value, never its hash. */
export interface TokenSummary extends TokenLimits {
  tokenId: string;
  scope: TokenScope;
  createdAt: number;
}

/**
 * A token found by its id: still working, or revoked (then its hash is gone from the table). A revoked token's
 * `cleanedUp` says whether the gateway's part of the revoke (API key deleted, authorizer cache flushed) is done.
 */
export type TokenRecord = TokenSummary & { ownerId: string } & ({ revokedAt: number; cleanedUp: boolean } | { revokedAt?: undefined; tokenHash: string });

/** A token the migration gave its id and scope. */
export interface MigratedToken {
  ownerId: string;
  tokenId: string;
  scope: TokenScope;
}

/**
 * API tokens, stored only as their SHA-256 (spec §5 leaves issuance open; the dashboard and the console issue and
 * revoke them). Creating and revoking a token each write its items and the owner's audit entry in one transaction.
 */
export class DynamoTokenStore implements TokenStore, TokenWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /** A strongly consistent read, so a token revoked a moment ago is not found again. */
  async findToken(tokenHash: string): Promise<TokenGrant | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.token(tokenHash), ConsistentRead: true }));
    if (typeof item?.ownerId !== 'string') return undefined;
    // Tokens created before ids and scopes existed carry neither: their id is derived, and they read until migrated.
    return {
      ownerId: item.ownerId,
      tokenId: typeof item.tokenId === 'string' ? item.tokenId : tokenIdOf(tokenHash),
      scope: scopeOf(item.scope),
      ...tokenLimitsOf(item),
    };
  }

  /** Put a new token's three items and `entry`, in one transaction (#domain/tokens issueToken makes both). */
  async saveToken(token: NewToken, entry: AuditEntry): Promise<void> {
    const items = tokenItems(token);
    await transact(this.db, {
      TransactItems: [
        ...[items.byHash, items.byId, items.ofOwner].map(
          (item): TransactItem => ({ Put: { TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } }),
        ),
        { Put: auditPut(this.tableName, entry) },
      ],
    });
  }

  /** The owner's working tokens, oldest first. */
  async tokensOf(ownerId: string): Promise<TokenSummary[]> {
    const tokens = await queryAll(
      this.db,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keyOf.owner(ownerId).pk, ':prefix': CHILD_PREFIX.token },
        ConsistentRead: true,
      },
      (item): TokenSummary => ({ tokenId: String(item.tokenId), scope: scopeOf(item.scope), createdAt: Number(item.createdAt), ...tokenLimitsOf(item) }),
    );
    return tokens.sort((a, b) => a.createdAt - b.createdAt || a.tokenId.localeCompare(b.tokenId));
  }

  async tokenById(tokenId: string): Promise<TokenRecord | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.tokenById(tokenId), ConsistentRead: true }));
    return item ? toTokenRecord(item) : undefined;
  }

  /**
   * Revoke a working token: its hash item and its place in the owner's list are deleted, the id item keeps
   * `revokedAt` (so a second revoke can say so), and `entry` is written (#domain/tokens revokeToken makes it), all in
   * one transaction. False when the token was revoked meanwhile; then nothing is written.
   */
  async revokeToken(token: TokenGrant & { tokenHash: string }, now: number, entry: AuditEntry): Promise<boolean> {
    return ifCondition(
      transact(this.db, {
        TransactItems: [
          { Delete: { TableName: this.tableName, Key: keyOf.token(token.tokenHash) } },
          { Delete: { TableName: this.tableName, Key: keyOf.ownerToken(token.ownerId, token.tokenId) } },
          {
            Update: {
              TableName: this.tableName,
              Key: keyOf.tokenById(token.tokenId),
              UpdateExpression: 'SET revokedAt = :now REMOVE tokenHash',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
              ExpressionAttributeValues: { ':now': now },
            },
          },
          { Put: auditPut(this.tableName, entry) },
        ],
      }),
      // The id item's condition (item 2): revoked meanwhile. An audit entry's clash is an error.
      [2],
    );
  }

  /** The gateway's part of a revoke succeeded: a later revoke of the token has nothing left to do. */
  async markRevokeCleanedUp(tokenId: string, now: number): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keyOf.tokenById(tokenId),
        UpdateExpression: 'SET cleanedUpAt = :now',
        ConditionExpression: 'attribute_exists(revokedAt)',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
  }

  /**
   * Give every token stored before token ids existed (a hash item without `tokenId`) its id, its explicit `write`
   * scope (LEGACY_TOKEN_SCOPE: they could always write) and its place in its owner's list, so it can be listed and
   * revoked like any other. One scan of the table, run by `npm run deploy` after `cdk deploy` and at every
   * `npm start`; running it again finds nothing. Returns the tokens it migrated.
   */
  async migrateLegacyTokens(): Promise<MigratedToken[]> {
    const migrated: MigratedToken[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.db.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: 'begins_with(pk, :token) AND attribute_not_exists(tokenId)',
          ExpressionAttributeValues: { ':token': PARTITION.token },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        const tokenHash = String(item.pk).slice(PARTITION.token.length);
        const scope = item.scope === undefined ? LEGACY_TOKEN_SCOPE : scopeOf(item.scope);
        const token: StoredToken = { ownerId: String(item.ownerId), tokenId: tokenIdOf(tokenHash), tokenHash, scope, createdAt: Number(item.createdAt) };
        if (await this.migrateLegacyToken(token)) migrated.push({ ownerId: token.ownerId, tokenId: token.tokenId, scope: token.scope });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return migrated;
  }

  /** False when another run migrated (or a revoke removed) the token meanwhile. */
  private async migrateLegacyToken(token: StoredToken): Promise<boolean> {
    const items = tokenItems(token);
    return ifCondition(
      transact(this.db, {
        TransactItems: [
          {
            Update: {
              TableName: this.tableName,
              Key: keyOf.token(token.tokenHash),
              UpdateExpression: 'SET tokenId = :id, #scope = :scope',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(tokenId)',
              ExpressionAttributeNames: { '#scope': 'scope' },
              ExpressionAttributeValues: { ':id': token.tokenId, ':scope': token.scope },
            },
          },
          ...[items.byId, items.ofOwner].map(
            (item): TransactItem => ({ Put: { TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } }),
          ),
        ],
      }),
    );
  }
}

function toTokenRecord(item: Item): TokenRecord {
  const summary = {
    tokenId: String(item.tokenId),
    ownerId: String(item.ownerId),
    scope: scopeOf(item.scope),
    createdAt: Number(item.createdAt),
    ...tokenLimitsOf(item),
  };
  if (typeof item.revokedAt === 'number') return { ...summary, revokedAt: item.revokedAt, cleanedUp: typeof item.cleanedUpAt === 'number' };
  return { ...summary, tokenHash: String(item.tokenHash) };
}
