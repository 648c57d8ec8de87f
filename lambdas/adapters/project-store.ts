import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand, type QueryCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { StoredStatsBucket } from '#domain/analytics/stats';
import type { AuditEntry } from '#domain/audit';
import type { Key, Plan, Project, Version, Webhook } from '#domain/model';
import type { ProjectStore, RevokeOutcome, StatsBucketsQuery } from '#domain/ports';
import { batchGetConsistent, itemKeyId } from './batch-get';
import { ifCondition, isConditionFailure, transact } from './conditions';
import { auditPut, CHILD_PREFIX, type ItemKey, keyIdOfPartition, keyOf } from './layout';
import { type Item, queryAll, queryPages } from './paging';
import { queryStatsBuckets } from './stats-store';
import { TABLE } from './table-definition';

/** The API's reads and writes of projects, keys, versions and webhooks (the endpoints of spec §4). */
/** The keys-only `byIssueOrder` index's entries of a project after issue number `afterSeq`, in issue order. */
export async function issueOrderEntries(db: DynamoDBDocumentClient, tableName: string, projectId: string, afterSeq: number, limit: number): Promise<Item[]> {
  const index = TABLE.indexes.byIssueOrder;
  const { Items: entries = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: index.name,
      KeyConditionExpression: '#p = :p AND #s > :after',
      ExpressionAttributeNames: { '#p': index.partitionKey, '#s': index.sortKey },
      ExpressionAttributeValues: { ':p': projectId, ':after': afterSeq },
      Limit: limit,
    }),
  );
  return entries;
}

export class DynamoProjectStore implements ProjectStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async getProject(projectId: string): Promise<Project | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ConsistentRead: true }));
    return item ? toProject(item) : undefined;
  }

  /**
   * The index holds only keys (KEYS_ONLY), so that a revoke or a key check, which change no key attribute of it,
   * never write it: the page's ids come from the index, the keys themselves from one consistent BatchGetItem,
   * which also shows a revoke made a moment ago.
   */
  async listKeysAfter(projectId: string, afterSeq: number, limit: number): Promise<Key[]> {
    const entries = await issueOrderEntries(this.db, this.tableName, projectId, afterSeq, limit);
    const keys = entries.map((entry) => ({ pk: String(entry.pk), sk: String(entry.sk) }));
    const items = await batchGetConsistent(this.db, this.tableName, keys);
    return keys.flatMap((key) => {
      const item = items.get(itemKeyId(key));
      return item ? [toKey(item)] : [];
    });
  }

  /**
   * The watermark index's entries for the watermark (keys only, 1 read unit per 4 KB of them, in issue order),
   * then the page's keys from one consistent BatchGetItem: O(matching keys), never the project's whole list.
   */
  async listKeysWithWatermark(projectId: string, watermark: string, offset: number, limit: number): Promise<{ keys: Key[]; total: number }> {
    const index = TABLE.indexes.byWatermark;
    const entries = await queryAll(
      this.db,
      {
        TableName: this.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#w = :w',
        ExpressionAttributeNames: { '#w': index.partitionKey },
        ExpressionAttributeValues: { ':w': `${projectId}#${watermark}` },
      },
      (entry): ItemKey => ({ pk: String(entry.pk), sk: String(entry.sk) }),
    );
    const page = entries.slice(offset, offset + limit);
    const items = await batchGetConsistent(this.db, this.tableName, page);
    const keys = page.flatMap((key) => {
      const item = items.get(itemKeyId(key));
      return item ? [toKey(item)] : [];
    });
    return { keys, total: entries.length };
  }

  async revokeKey(projectId: string, keyId: string, now: number, entry?: AuditEntry, by = entry?.tokenId ?? entry?.source): Promise<RevokeOutcome> {
    const revoke = { ...this.revokeWrite(projectId, keyId, now, by), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
    try {
      if (entry) await transact(this.db, { TransactItems: [{ Update: revoke }, { Put: auditPut(this.tableName, entry) }] });
      else await this.db.send(new UpdateCommand(revoke));
      return 'revoked';
    } catch (error) {
      // The key's condition (item 0); an audit entry's clash is an error, not "already revoked".
      if (!isConditionFailure(error, [0])) throw error;
      const old = error instanceof TransactionCanceledException ? error.CancellationReasons?.[0]?.Item : error.Item;
      // A key of another project is as unknown to this caller as a key that does not exist.
      if (!old || old.projectId?.S !== projectId) return 'not_found';
      return 'already_revoked';
    }
  }

  /** The watermark index, keys only: it keeps revoked keys too (a revoke must not write it). */
  async *keyIdsWithWatermark(projectId: string, watermark: string): AsyncIterable<string[]> {
    for await (const page of this.watermarkIndexPages(projectId, watermark)) yield page.map((key) => keyIdOfPartition(key.pk));
  }

  private watermarkIndexPages(projectId: string, watermark: string): AsyncIterable<ItemKey[]> {
    const index = TABLE.indexes.byWatermark;
    return queryPages(
      this.db,
      {
        TableName: this.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#w = :w',
        ExpressionAttributeNames: { '#w': index.partitionKey },
        ExpressionAttributeValues: { ':w': `${projectId}#${watermark}` },
      },
      (entry) => ({ pk: String(entry.pk), sk: String(entry.sk) }),
    );
  }

  async activeAmong(keyIds: readonly string[]): Promise<string[]> {
    return this.activeOf(keyIds.map((keyId) => keyOf.key(keyId)));
  }

  /** The ids of the keys that are not revoked, read consistently. */
  private async activeOf(keys: ItemKey[]): Promise<string[]> {
    const items = await batchGetConsistent(this.db, this.tableName, keys, { expression: 'revoked' });
    return keys.filter((key) => items.get(itemKeyId(key))?.revoked === 0).map((key) => keyIdOfPartition(key.pk));
  }

  async revokeIfActive(projectId: string, keyId: string, now: number, by?: string): Promise<boolean> {
    // Without the old image on failure (revokeKey's): the condition says all a bulk revoke needs to know.
    return ifCondition(this.db.send(new UpdateCommand(this.revokeWrite(projectId, keyId, now, by))));
  }

  /** The revoke of one key, if it is this project's and active. */
  private revokeWrite(projectId: string, keyId: string, now: number, by: string | undefined) {
    return {
      TableName: this.tableName,
      Key: keyOf.key(keyId),
      // Only attributes no index projects: the revoke writes the key's own item and nothing else (1 WCU).
      UpdateExpression: by === undefined ? 'SET revoked = :one, revokedAt = :now' : 'SET revoked = :one, revokedAt = :now, revokedBy = :by',
      ConditionExpression: 'projectId = :p AND revoked = :zero',
      ExpressionAttributeValues: { ':p': projectId, ':one': 1, ':zero': 0, ':now': now, ...(by === undefined ? {} : { ':by': by }) },
    };
  }

  async listVersions(projectId: string): Promise<Version[]> {
    return queryAll(this.db, this.childrenQuery(projectId, CHILD_PREFIX.version), toVersion);
  }

  async setCurrentVersion(projectId: string, versionId: string, entry?: AuditEntry): Promise<boolean> {
    try {
      await transact(this.db, {
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
          ...(entry ? [{ Put: auditPut(this.tableName, entry) }] : []),
        ],
      });
      return true;
    } catch (error) {
      // The version's or the project's condition; an audit entry's clash is an error.
      if (isConditionFailure(error, [0, 1])) return false;
      throw error;
    }
  }

  async listWebhooks(projectId: string): Promise<Webhook[]> {
    return queryAll(this.db, this.childrenQuery(projectId, CHILD_PREFIX.webhook), toWebhook);
  }

  statsBuckets(query: StatsBucketsQuery): Promise<StoredStatsBucket[]> {
    return queryStatsBuckets(this.db, this.tableName, query);
  }

  private childrenQuery(projectId: string, skPrefix: string): QueryCommandInput {
    return {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keyOf.project(projectId).pk, ':prefix': skPrefix },
    };
  }
}

// Responses carry exactly the spec's fields: internal attributes (pk, sk, issueSeq, index keys) never leave.

export function toKey(item: Item): Key {
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

export function toProject(item: Item): Project {
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
