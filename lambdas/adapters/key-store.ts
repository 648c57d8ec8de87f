import { createHash, randomBytes } from 'node:crypto';
import { type AttributeValue, ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { KeyBan } from '#domain/key-check';
import { noteWords } from '#domain/key-search';
import type { KeyDetail } from '#domain/model';
import type { IssueOrder, IssueOutcome, KeyBatch, KeyEdit, KeyStore, NewOrder } from '#domain/ports';
import { batchGetConsistent, itemKeyId } from './batch-get';
import { backoff, ifCondition, isConditionFailure, isTransactionConflict, TRANSACTION_ATTEMPTS } from './conditions';
import {
  banOf,
  boundFingerprints,
  discordIndexAttributes,
  discordKeyOf,
  ENTITY,
  type ItemKey,
  keyIdOfPartition,
  keyItem,
  keyOf,
  noteWordItems,
} from './layout';
import { type Item, queryAll } from './paging';
import { toKey } from './project-store';
import { inTurn } from './sequence';
import { TABLE } from './table-definition';

/** BatchWriteItem takes at most 25 puts per request. */
const BATCH_WRITE_LIMIT = 25;
const BATCH_WRITE_ATTEMPTS = 8;
/** Batches in flight at once: 100 keys go out in one round, the dashboard's 10,000 without a burst of 400 requests. */
const BATCH_WRITES_IN_FLIGHT = 16;

/**
 * Keys as the API and the dashboard issue them, shop orders, and the key detail and machine reset.
 *
 * Issuing costs one write per key, with no read per key: the project's counter moves (with the order, when there
 * is one) in one small transaction while the writer holds the project's sequence lease, and then the keys go out
 * in plain BatchWriteItem puts of 25, 1 WCU each, all at once. A transaction of the keys themselves would charge
 * 2 WCU a key. The puts need no condition: every key's id is new (a random value's, or one derived from an order
 * that the transaction just recorded as new), so a put overwrites nothing.
 */
/** A machine reset reads back the fingerprints it emptied, and nothing else of the key (lib/constructs/table-access.ts). */
export const FINGERPRINT_RESET_RETURN_VALUES = ['UPDATED_OLD'] as const;
/** An extension reads back the expiry it wrote, and nothing else of the key. */
export const KEY_EXTEND_RETURN_VALUES = ['UPDATED_NEW'] as const;
/** What an extension whose condition failed reads to tell an expired key from none of the project's. */
export const KEY_EXTEND_FAILURE_READ = ['projectId', 'expires_at'] as const;

export class DynamoKeyStore implements KeyStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async findOrder(projectId: string, orderId: string): Promise<IssueOrder | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.order(projectId, orderId), ConsistentRead: true }));
    return item && toOrder(item);
  }

  async issue(batch: KeyBatch, order?: NewOrder): Promise<IssueOutcome> {
    const reserved = await inTurn(this.db, this.tableName, batch.projectId, () => this.reserve(batch, order));
    if (reserved.outcome === 'issued') await this.putKeys(batch, reserved.firstSeq);
    return reserved;
  }

  async completeOrder(batch: KeyBatch, firstSeq: number): Promise<number> {
    const items = this.itemsOf(batch, firstSeq);
    const found = await batchGetConsistent(this.db, this.tableName, items, { expression: 'id' });
    const missing = items.filter((item) => !found.has(itemKeyId(item)));
    // Conditional, one by one: the first call may still be writing these, and a key it wrote may be in use already.
    const written = await Promise.all(
      missing.map((item) =>
        ifCondition(this.db.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }))),
      ),
    );
    // Keys, not items: a key's note-word items are written with it but are not keys of the order.
    return written.filter((wrote, i) => wrote && missing[i]?.entity === ENTITY.key).length;
  }

  async getKey(projectId: string, keyId: string): Promise<KeyDetail | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.key(keyId), ConsistentRead: true }));
    if (!item || item.projectId !== projectId) return undefined;
    return toKeyDetail(item);
  }

  /** One conditional write on the key item alone: the ban's attributes set, or removed to lift it. */
  async setBan(projectId: string, keyId: string, ban: KeyBan | null): Promise<boolean> {
    const update =
      ban === null
        ? { UpdateExpression: 'REMOVE ban_reason, ban_until' }
        : ban.until === null
          ? { UpdateExpression: 'SET ban_reason = :reason REMOVE ban_until', ExpressionAttributeValues: { ':reason': ban.reason } }
          : { UpdateExpression: 'SET ban_reason = :reason, ban_until = :until', ExpressionAttributeValues: { ':reason': ban.reason, ':until': ban.until } };
    return ifCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.key(keyId),
          ...update,
          ConditionExpression: 'projectId = :p',
          ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':p': projectId },
        }),
      ),
    );
  }

  /** The project's keys among `keyIds` in detail, in the order given (100 a consistent BatchGetItem); others left out. */
  async keyDetails(projectId: string, keyIds: readonly string[]): Promise<KeyDetail[]> {
    const keys = keyIds.map((keyId) => keyOf.key(keyId));
    const items = await batchGetConsistent(this.db, this.tableName, keys);
    return keys.flatMap((key) => {
      const item = items.get(itemKeyId(key));
      return item && item.projectId === projectId ? [toKeyDetail(item)] : [];
    });
  }

  /** Ids of the project's keys linked to the Discord id, in issue order: one query of the sparse byDiscordId index. */
  async keyIdsByDiscordId(projectId: string, discordId: string): Promise<string[]> {
    const index = TABLE.indexes.byDiscordId;
    return queryAll(
      this.db,
      {
        TableName: this.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#d = :d',
        ExpressionAttributeNames: { '#d': index.partitionKey },
        ExpressionAttributeValues: { ':d': discordIndexAttributes(projectId, discordId)[index.partitionKey] },
      },
      (entry) => keyIdOfPartition(String(entry.pk)),
    );
  }

  /**
   * No read first: the write guesses that the key has not expired (the usual extension) and adds to `expires_at` on
   * that condition; a failed condition's old item says whether the key had expired (then the write counts from
   * now) or is no key of the project. A check that races it sees the old or the new expiry, never a mix.
   */
  async extendExpiry(projectId: string, keyId: string, extension: { seconds: number; now: number } | { lifetimeAt: number }): Promise<number | undefined> {
    const write = async (update: string, condition: string, values: Record<string, unknown>): Promise<{ written: number } | { old: Item | undefined }> => {
      try {
        const { Attributes } = await this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keyOf.key(keyId),
            UpdateExpression: update,
            ConditionExpression: `projectId = :p${condition}`,
            ExpressionAttributeValues: { ':p': projectId, ...values },
            ReturnValues: KEY_EXTEND_RETURN_VALUES[0],
          }),
        );
        return { written: Number(Attributes?.expires_at) };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        // Only what says why (issue 31: no whole item under a grant that lists attributes).
        const { Item } = await this.db.send(
          new GetCommand({ TableName: this.tableName, Key: keyOf.key(keyId), ConsistentRead: true, ProjectionExpression: KEY_EXTEND_FAILURE_READ.join(', ') }),
        );
        return { old: Item };
      }
    };
    if ('lifetimeAt' in extension) {
      const written = await write('SET expires_at = :at', '', { ':at': extension.lifetimeAt });
      return 'written' in written ? written.written : undefined;
    }
    const { seconds, now } = extension;
    let expired = false;
    for (let attempt = 1; attempt <= EXTEND_WRITES; attempt++) {
      const written: { written: number } | { old: Item | undefined } = expired
        ? await write('SET expires_at = :later', ' AND expires_at <= :now', { ':later': now + seconds, ':now': now })
        : await write('SET expires_at = expires_at + :seconds', ' AND expires_at > :now', { ':seconds': seconds, ':now': now });
      if ('written' in written) return written.written;
      if (written.old?.projectId !== projectId) return undefined;
      expired = Number(written.old.expires_at) <= now;
    }
    throw new Error(`Extending key ${keyId} did not settle in ${EXTEND_WRITES} writes`);
  }

  /** One conditional write of the fields the edit names (null removes one), then the key as it is after it. */
  async editKey(projectId: string, keyId: string, edit: KeyEdit): Promise<KeyDetail | undefined> {
    const set: string[] = [];
    const remove: string[] = [];
    const values: Record<string, unknown> = { ':p': projectId };
    if (edit.note === null) remove.push('note');
    else if (edit.note !== undefined) {
      set.push('note = :note');
      values[':note'] = edit.note;
    }
    if (edit.discordId !== undefined) {
      if (edit.discordId === null) remove.push('discord_id', 'discordKey');
      else {
        set.push('discord_id = :discordId', 'discordKey = :discordKey');
        Object.assign(values, { ':discordId': edit.discordId, ':discordKey': discordKeyOf(projectId, edit.discordId) });
      }
    }
    if (edit.maxUses !== undefined) {
      set.push('max_uses = :maxUses');
      values[':maxUses'] = edit.maxUses;
    }
    if (edit.maxFingerprints !== undefined) {
      // A key given a machine limit gets its empty map (machines bound so far stay); one made unbound loses both.
      if (edit.maxFingerprints === null) remove.push('max_fingerprints', 'fingerprints');
      else {
        set.push('max_fingerprints = :maxFingerprints', 'fingerprints = if_not_exists(fingerprints, :noMachines)');
        Object.assign(values, { ':maxFingerprints': edit.maxFingerprints, ':noMachines': {} });
      }
    }
    if (set.length === 0 && remove.length === 0) throw new Error('An edit of a key must change something');
    const edited = await ifCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.key(keyId),
          UpdateExpression: [set.length > 0 ? `SET ${set.join(', ')}` : '', remove.length > 0 ? `REMOVE ${remove.join(', ')}` : ''].join(' ').trim(),
          ConditionExpression: 'projectId = :p',
          ExpressionAttributeValues: values,
        }),
      ),
    );
    // Asked for apart, as get-key reads it: the edit's grant lists attributes, so its write returns none.
    return edited ? this.getKey(projectId, keyId) : undefined;
  }

  /**
   * One conditional write: the map emptied on a bound key of this project. The old map says how many machines it
   * held; when the condition failed, a read of the key's projectId says whether the key is this project's at all
   * (an unbound key clears 0). Neither asks for more of the item than that (FINGERPRINT_RESET_RETURN_VALUES).
   */
  async resetFingerprints(projectId: string, keyId: string): Promise<number | undefined> {
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.key(keyId),
          UpdateExpression: 'SET fingerprints = :none',
          ConditionExpression: 'projectId = :p AND attribute_exists(fingerprints)',
          ExpressionAttributeValues: { ':p': projectId, ':none': {} },
          ReturnValues: FINGERPRINT_RESET_RETURN_VALUES[0],
        }),
      );
      return boundFingerprints(Attributes ?? {}).length;
    } catch (error) {
      if (!isConditionFailure(error) || error instanceof TransactionCanceledException) throw error;
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.tableName, Key: keyOf.key(keyId), ConsistentRead: true, ProjectionExpression: 'projectId' }),
      );
      return Item?.projectId === projectId ? 0 : undefined;
    }
  }

  /**
   * Reserve the batch's numbers: the counter moves from the value just read, conditioned on it, so numbers stay
   * dense and unique; with an order, the order item is put in the same transaction, conditioned on being new.
   */
  private async reserve(batch: KeyBatch, order?: NewOrder): Promise<IssueOutcome> {
    const projectKey = keyOf.project(batch.projectId);
    for (let attempt = 1; ; attempt++) {
      const { Item: project } = await this.db.send(
        new GetCommand({ TableName: this.tableName, Key: projectKey, ConsistentRead: true, ProjectionExpression: 'keyCount' }),
      );
      if (!project) throw new Error(`Project ${batch.projectId} does not exist`);
      const current = Number(project.keyCount ?? 0);
      const firstSeq = current + 1;
      const counter = {
        TableName: this.tableName,
        Key: projectKey,
        UpdateExpression: 'SET keyCount = :next',
        ConditionExpression: 'keyCount = :current',
        ExpressionAttributeValues: { ':current': current, ':next': current + batch.keys.length },
      };
      try {
        if (!order) {
          await this.db.send(new UpdateCommand(counter));
          return { outcome: 'issued', firstSeq };
        }
        const recorded: IssueOrder = {
          projectId: batch.projectId,
          ...order,
          firstSeq,
          count: batch.keys.length,
          issuedAt: batch.issuedAt,
          firstKeyId: batch.keys[0]?.id ?? '',
        };
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              { Update: counter },
              {
                Put: {
                  TableName: this.tableName,
                  Item: { ...keyOf.order(batch.projectId, order.orderId), entity: ENTITY.order, ...recorded },
                  ConditionExpression: 'attribute_not_exists(pk)',
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                },
              },
            ],
          }),
        );
        return { outcome: 'issued', firstSeq };
      } catch (error) {
        const existing = error instanceof TransactionCanceledException ? error.CancellationReasons?.[1] : undefined;
        if (existing?.Code === 'ConditionalCheckFailed' && existing.Item) {
          return { outcome: 'order_exists', order: toOrder(unmarshall(existing.Item as Record<string, AttributeValue>)) };
        }
        if (attempt >= TRANSACTION_ATTEMPTS || !(isConditionFailure(error) || isTransactionConflict(error))) throw error;
        await backoff(attempt);
      }
    }
  }

  /** Each key's item and, when the batch has a note, its note's search items (#domain/key-search). */
  private itemsOf(batch: KeyBatch, firstSeq: number): (Item & ItemKey)[] {
    const words = noteWords(batch.note ?? '');
    return batch.keys.flatMap((key, index) => [
      keyItem(batch, key, firstSeq + index, createHash('sha256').update(randomBytes(16)).digest('hex')),
      ...noteWordItems(batch.projectId, key.id, words),
    ]);
  }

  /** Every key in puts of 25, BATCH_WRITES_IN_FLIGHT requests at a time, unprocessed puts retried with backoff. */
  private async putKeys(batch: KeyBatch, firstSeq: number): Promise<void> {
    const items = this.itemsOf(batch, firstSeq);
    const chunks = Array.from({ length: Math.ceil(items.length / BATCH_WRITE_LIMIT) }, (_, i) =>
      items.slice(i * BATCH_WRITE_LIMIT, (i + 1) * BATCH_WRITE_LIMIT),
    );
    let next = 0;
    const writer = async () => {
      for (let chunk = chunks[next++]; chunk; chunk = chunks[next++]) await this.putChunk(chunk);
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_WRITES_IN_FLIGHT, chunks.length) }, writer));
  }

  private async putChunk(chunk: readonly Item[]): Promise<void> {
    let pending: { PutRequest: { Item: Item } }[] = chunk.map((item) => ({ PutRequest: { Item: item } }));
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > BATCH_WRITE_ATTEMPTS) throw new Error(`BatchWriteItem left ${pending.length} keys unwritten after ${BATCH_WRITE_ATTEMPTS} attempts`);
      if (attempt > 1) await backoff(attempt);
      const { UnprocessedItems } = await this.db.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }));
      pending = (UnprocessedItems?.[this.tableName] ?? []).flatMap((request) =>
        request.PutRequest?.Item ? [{ PutRequest: { Item: request.PutRequest.Item } }] : [],
      );
    }
  }
}

/** Writes an extension may take: one usually, two when the key had expired, a few more only if others extend it at once. */
const EXTEND_WRITES = 6;

/** A conditional update's returned attributes, or, when its condition failed, the item as it was (undefined: none). */
/** A key item in detail (DESIGN.md, "Selling keys" and "Key lifecycle"): the spec's fields and what the API adds, null where unset. */
function toKeyDetail(item: Item): KeyDetail {
  return {
    ...toKey(item),
    note: typeof item.note === 'string' ? item.note : null,
    discord_id: typeof item.discord_id === 'string' ? item.discord_id : null,
    max_fingerprints: typeof item.max_fingerprints === 'number' ? item.max_fingerprints : null,
    fingerprints: boundFingerprints(item),
    last_check_at: typeof item.last_check_at === 'number' ? item.last_check_at : null,
    ban: banOf(item),
    revoked_by: item.revoked === 1 && typeof item.revokedBy === 'string' ? item.revokedBy : null,
  };
}

function toOrder(item: Item): IssueOrder {
  return {
    projectId: String(item.projectId),
    orderId: String(item.orderId),
    bodyHash: String(item.bodyHash),
    firstSeq: Number(item.firstSeq),
    count: Number(item.count),
    issuedAt: Number(item.issuedAt),
    firstKeyId: String(item.firstKeyId),
    ...(typeof item.tokenId === 'string' && { tokenId: item.tokenId }),
  };
}
