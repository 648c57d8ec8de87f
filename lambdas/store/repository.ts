import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '#domain/ids';
import type { EventName, Key, Plan, Project, Version, Webhook } from '#domain/model';
import type { ProjectStore, RateLimitStore, RevokeOutcome, TokenStore } from '#domain/ports';
import { TABLE } from './table-definition';

/**
 * Every read and write of the table. Item layout (one table, see table-definition.ts):
 *
 * | item            | pk                | sk                | notes                                        |
 * |-----------------|-------------------|-------------------|----------------------------------------------|
 * | owner           | OWNER#<ownerId>   | OWNER             |                                              |
 * | API token       | TOKEN#<sha256>    | TOKEN             | only the hash of the token is stored         |
 * | project         | PROJECT#<id>      | PROJECT           | plan, current version, key and version counts|
 * | script version  | PROJECT#<id>      | VERSION#<verId>   | spec §2.2 fields                             |
 * | webhook config  | PROJECT#<id>      | WEBHOOK#<whkId>   | spec §2.3 fields                             |
 * | key             | KEY#<keyId>       | KEY               | spec §2.1 fields + issueSeq, index keys      |
 * | rate window     | RATE#<bucket>     | WINDOW#<start>    | request count, TTL                           |
 * | analytics event | PROJECT#<id>      | EVENT#<name>#<dedup> | written by the detectors (telemetry-store.ts), TTL |
 * | delivery claim  | DELIVERY#<id>     | DELIVERY          | one per delivery id (delivery-store.ts), TTL |
 *
 * Telemetry aggregates (daily execution counters, executor and hash sightings, validation windows) are laid
 * out in telemetry-store.ts, the only module that reads or writes them.
 * Keys get a partition each, so a bulk revoke's writes spread over the table instead of heating one partition.
 */
export type Entity = 'OWNER' | 'TOKEN' | 'PROJECT' | 'VERSION' | 'WEBHOOK' | 'KEY' | 'RATE';

export const keyOf = {
  owner: (ownerId: string) => ({ pk: `OWNER#${ownerId}`, sk: 'OWNER' }),
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),
  project: (projectId: string) => ({ pk: `PROJECT#${projectId}`, sk: 'PROJECT' }),
  version: (projectId: string, versionId: string) => ({ pk: `PROJECT#${projectId}`, sk: `VERSION#${versionId}` }),
  webhook: (projectId: string, webhookId: string) => ({ pk: `PROJECT#${projectId}`, sk: `WEBHOOK#${webhookId}` }),
  key: (keyId: string) => ({ pk: `KEY#${keyId}`, sk: 'KEY' }),
  rateWindow: (bucket: string, windowStart: number) => ({ pk: `RATE#${bucket}`, sk: `WINDOW#${windowStart}` }),
};

const watermarkKey = (projectId: string, watermark: string) => `${projectId}#${watermark}`;

/** Keys per transaction when issuing: DynamoDB allows 100 actions, one of which moves the project's counter. */
const KEYS_PER_TRANSACTION = 99;
const TRANSACTION_ATTEMPTS = 8;

type Item = Record<string, unknown>;

export interface NewKeys {
  projectId: string;
  count: number;
  /** Every key gets this watermark; otherwise each gets its own random one. */
  watermark?: string;
  tier: string;
  maxUses: number | null;
  /** Defaults to 30 days after issue. */
  expiresAt?: number;
  now: number;
}

export interface NewVersion {
  projectId: string;
  sizeBytes: number;
  notes: string;
  now: number;
}

export interface NewWebhook {
  projectId: string;
  url: string;
  events: EventName[];
  enabled: boolean;
  now: number;
}

export const KEY_LIFETIME_SECONDS = 30 * 24 * 3600;

export class Repository implements ProjectStore, TokenStore, RateLimitStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  // ---- API reads and writes ----

  async getProject(projectId: string): Promise<Project | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ConsistentRead: true }));
    return item ? toProject(item) : undefined;
  }

  async listKeysAfter(projectId: string, afterSeq: number, limit: number): Promise<Key[]> {
    const index = TABLE.indexes.byIssueOrder;
    const { Items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#p = :p AND #s > :after',
        ExpressionAttributeNames: { '#p': index.partitionKey, '#s': index.sortKey },
        ExpressionAttributeValues: { ':p': projectId, ':after': afterSeq },
        Limit: limit,
      }),
    );
    return Items.map(toKey);
  }

  async revokeKey(projectId: string, keyId: string, now: number): Promise<RevokeOutcome> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.key(keyId),
          UpdateExpression: 'SET revoked = :one, revokedAt = :now REMOVE watermarkKey',
          ConditionExpression: 'projectId = :p AND revoked = :zero',
          ExpressionAttributeValues: { ':p': projectId, ':one': 1, ':zero': 0, ':now': now },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'revoked';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item;
      // A key of another project is as unknown to this caller as a key that does not exist.
      if (!old || old.projectId?.S !== projectId) return 'not_found';
      return 'already_revoked';
    }
  }

  async *activeKeyIdsWithWatermark(projectId: string, watermark: string): AsyncIterable<string[]> {
    const index = TABLE.indexes.byWatermark;
    yield* this.queryPages(
      {
        TableName: this.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#w = :w',
        ExpressionAttributeNames: { '#w': index.partitionKey },
        ExpressionAttributeValues: { ':w': watermarkKey(projectId, watermark) },
      },
      (item) => String(item.pk).slice('KEY#'.length),
    );
  }

  async revokeIfActive(projectId: string, keyId: string, now: number): Promise<boolean> {
    return (await this.revokeKey(projectId, keyId, now)) === 'revoked';
  }

  async listVersions(projectId: string): Promise<Version[]> {
    return this.queryAll(this.childrenQuery(projectId, 'VERSION#'), toVersion);
  }

  async setCurrentVersion(projectId: string, versionId: string): Promise<boolean> {
    try {
      await this.transact({
        TransactItems: [
          { ConditionCheck: { TableName: this.tableName, Key: keyOf.version(projectId, versionId), ConditionExpression: 'attribute_exists(pk)' } },
          {
            Update: {
              TableName: this.tableName,
              Key: keyOf.project(projectId),
              UpdateExpression: 'SET currentVersionId = :v',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':v': versionId },
            },
          },
        ],
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async listWebhooks(projectId: string): Promise<Webhook[]> {
    return this.queryAll(this.childrenQuery(projectId, 'WEBHOOK#'), toWebhook);
  }

  async findTokenOwner(tokenHash: string): Promise<string | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.token(tokenHash) }));
    return typeof item?.ownerId === 'string' ? item.ownerId : undefined;
  }

  async countRequest(bucket: string, windowStart: number, limit: number, expiresAt: number): Promise<number | undefined> {
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.rateWindow(bucket, windowStart),
          UpdateExpression: 'ADD requests :one SET #ttl = :ttl, entity = :entity',
          ConditionExpression: 'attribute_not_exists(requests) OR requests < :limit',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':ttl': expiresAt, ':entity': 'RATE' satisfies Entity },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(Attributes?.requests);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  // ---- Dashboard writes (the dashboard owns these; the CLI, the local stack and tests use them) ----

  async createOwner(now: number): Promise<string> {
    const ownerId = newId('own');
    await this.putNew({ ...keyOf.owner(ownerId), entity: 'OWNER', id: ownerId, createdAt: now });
    return ownerId;
  }

  async ownerExists(ownerId: string): Promise<boolean> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.owner(ownerId), ConsistentRead: true }));
    return Item !== undefined;
  }

  async saveTokenHash(ownerId: string, tokenHash: string, now: number): Promise<void> {
    await this.putNew({ ...keyOf.token(tokenHash), entity: 'TOKEN', ownerId, createdAt: now });
  }

  async createProject(input: { ownerId: string; name: string; plan: Plan; now: number }): Promise<string> {
    const projectId = newId('prj');
    await this.putNew({
      ...keyOf.project(projectId),
      entity: 'PROJECT',
      id: projectId,
      ownerId: input.ownerId,
      name: input.name,
      plan: input.plan,
      currentVersionId: null,
      keyCount: 0,
      versionCount: 0,
      createdAt: input.now,
    });
    return projectId;
  }

  /**
   * Issue keys with the next numbers of the project's dense issue sequence. The counter moves in the same
   * transaction as the keys, conditioned on its old value, so the sequence never has a gap or a repeat.
   */
  async issueKeys(input: NewKeys): Promise<{ id: string; watermark: string }[]> {
    const issued: { id: string; watermark: string }[] = [];
    for (let start = 0; start < input.count; start += KEYS_PER_TRANSACTION) {
      const batch = Array.from({ length: Math.min(KEYS_PER_TRANSACTION, input.count - start) }, () => ({
        id: newId('key'),
        watermark: input.watermark ?? randomBytes(8).toString('hex'),
      }));
      await this.withSequence(input.projectId, 'keyCount', batch.length, (first) =>
        batch.map((key, i) => ({
          Put: {
            TableName: this.tableName,
            Item: {
              ...keyOf.key(key.id),
              entity: 'KEY',
              projectId: input.projectId,
              id: key.id,
              user_hash: createHash('sha256').update(newId('own')).digest('hex'),
              tier: input.tier,
              watermark: key.watermark,
              issued_at: input.now,
              expires_at: input.expiresAt ?? input.now + KEY_LIFETIME_SECONDS,
              max_uses: input.maxUses,
              current_uses: 0,
              revoked: 0,
              issueSeq: first + i,
              issueOrderKey: input.projectId,
              watermarkKey: watermarkKey(input.projectId, key.watermark),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        })),
      );
      issued.push(...batch);
    }
    return issued;
  }

  /** A dashboard upload: the next version number, made current in the same transaction. */
  async uploadVersion(input: NewVersion): Promise<{ id: string; version_number: number }> {
    const id = newId('ver');
    const versionNumber = await this.withSequence(
      input.projectId,
      'versionCount',
      1,
      (number) => [
        {
          Put: {
            TableName: this.tableName,
            Item: {
              ...keyOf.version(input.projectId, id),
              entity: 'VERSION',
              projectId: input.projectId,
              id,
              version_number: number,
              uploaded_at: input.now,
              size_bytes: input.sizeBytes,
              notes: input.notes,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
      { currentVersionId: id },
    );
    return { id, version_number: versionNumber };
  }

  async addWebhook(input: NewWebhook): Promise<string> {
    const id = newId('whk');
    await this.putNew({
      ...keyOf.webhook(input.projectId, id),
      entity: 'WEBHOOK',
      projectId: input.projectId,
      id,
      url: input.url,
      events: JSON.stringify(input.events),
      enabled: input.enabled ? 1 : 0,
      created_at: input.now,
      updated_at: input.now,
    });
    return id;
  }

  // ---- helpers ----

  /**
   * Reserve `count` numbers of the project's counter `counter` and write `items(first)` in one transaction,
   * retrying when another writer moved the counter first. Returns the first number reserved.
   */
  private async withSequence(
    projectId: string,
    counter: 'keyCount' | 'versionCount',
    count: number,
    items: (first: number) => NonNullable<TransactWriteCommandInput['TransactItems']>,
    alsoSet: Record<string, unknown> = {},
  ): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const project = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ConsistentRead: true }));
      if (!project.Item) throw new Error(`Project ${projectId} does not exist`);
      const current = Number(project.Item[counter] ?? 0);
      const extraNames = Object.fromEntries(Object.keys(alsoSet).map((name, i) => [`#x${i}`, name]));
      const extraValues = Object.fromEntries(Object.values(alsoSet).map((value, i) => [`:x${i}`, value]));
      const extraSets = Object.keys(alsoSet).map((_, i) => `, #x${i} = :x${i}`).join('');
      try {
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.tableName,
                  Key: keyOf.project(projectId),
                  UpdateExpression: `SET #c = :next${extraSets}`,
                  ConditionExpression: '#c = :current',
                  ExpressionAttributeNames: { '#c': counter, ...extraNames },
                  ExpressionAttributeValues: { ':current': current, ':next': current + count, ...extraValues },
                },
              },
              ...items(current + 1),
            ],
          }),
        );
        return current + 1;
      } catch (error) {
        if (attempt >= TRANSACTION_ATTEMPTS || !(isConditionFailure(error) || isTransactionConflict(error))) throw error;
        await backoff(attempt);
      }
    }
  }

  /** A transaction retried on conflicts with other transactions (which DynamoDB Local reports more often than AWS). */
  private async transact(input: TransactWriteCommandInput): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.db.send(new TransactWriteCommand(input));
        return;
      } catch (error) {
        if (attempt >= TRANSACTION_ATTEMPTS || !isTransactionConflict(error)) throw error;
        await backoff(attempt);
      }
    }
  }

  private async putNew(item: Item): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  }

  private childrenQuery(projectId: string, skPrefix: string): QueryCommandInput {
    return {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keyOf.project(projectId).pk, ':prefix': skPrefix },
    };
  }

  private async *queryPages<T>(input: QueryCommandInput, map: (item: Item) => T): AsyncIterable<T[]> {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
      yield (page.Items ?? []).map(map);
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  private async queryAll<T>(input: QueryCommandInput, map: (item: Item) => T): Promise<T[]> {
    const all: T[] = [];
    for await (const page of this.queryPages(input, map)) all.push(...page);
    return all;
  }
}

function isConditionFailure(error: unknown): boolean {
  if (error instanceof ConditionalCheckFailedException) return true;
  return error instanceof TransactionCanceledException && (error.CancellationReasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed');
}

function isTransactionConflict(error: unknown): boolean {
  if (error instanceof TransactionCanceledException) return (error.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict');
  return error instanceof Error && error.name === 'TransactionConflictException';
}

const backoff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * 2 ** attempt));

// Responses carry exactly the spec's fields: internal attributes (pk, sk, issueSeq, index keys) never leave.

function toKey(item: Item): Key {
  return {
    id: String(item.id),
    user_hash: String(item.user_hash),
    tier: String(item.tier),
    watermark: String(item.watermark),
    issued_at: Number(item.issued_at),
    expires_at: Number(item.expires_at),
    max_uses: item.max_uses === null || item.max_uses === undefined ? null : Number(item.max_uses),
    current_uses: Number(item.current_uses),
    revoked: item.revoked === 1 ? 1 : 0,
  };
}

function toVersion(item: Item): Version {
  return {
    id: String(item.id),
    version_number: Number(item.version_number),
    uploaded_at: Number(item.uploaded_at),
    size_bytes: Number(item.size_bytes),
    notes: String(item.notes ?? ''),
  };
}

function toWebhook(item: Item): Webhook {
  return {
    id: String(item.id),
    url: String(item.url),
    events: String(item.events),
    enabled: item.enabled === 1 ? 1 : 0,
    created_at: Number(item.created_at),
    updated_at: Number(item.updated_at),
  };
}

function toProject(item: Item): Project {
  return {
    id: String(item.id),
    ownerId: String(item.ownerId),
    name: String(item.name),
    plan: item.plan as Plan,
    currentVersionId: typeof item.currentVersionId === 'string' ? item.currentVersionId : null,
    keyCount: Number(item.keyCount ?? 0),
    createdAt: Number(item.createdAt),
  };
}
