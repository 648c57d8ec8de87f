import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { BLACKLIST_LIMITS } from '#domain/blacklist';
import type { BlacklistAdd, BlacklistEntry, BlacklistKind, BlacklistTarget } from '#domain/blacklist-model';
import { mapPagesBounded } from '#domain/concurrency';
import type { BlacklistStore } from '#domain/ports';
import { backoff, ifCondition, isConditionFailure, isTransactionConflict, TRANSACTION_ATTEMPTS } from './conditions';
import { blacklistSlotSortKey, discordIndexAttributes, ENTITY, type ItemKey, keyIdOfPartition, keyOf } from './layout';
import { type Item, queryPages } from './paging';
import { TABLE } from './table-definition';

/**
 * The buyer blacklist on the one table. A project's entries live in its partition `BLACKLIST#<projectId>`:
 * - one entry item per buyer, `ENTRY#<kind>#<value>`, so the loader, a redeem or a shop finds a buyer with one GetItem;
 * - the same entry at a dense position `SLOT#<n>` (1..count), so a page is one Query of a sort-key range at any
 *   offset (as keys page by their issue sequence); a remove moves the last position into the freed one, so the
 *   positions stay dense and a list shows entries in the order they were added, except that a remove moves the
 *   newest entry into its place;
 * - the count item `COUNT`, which every add and remove moves on the condition of its old value, in the same
 *   transaction as the items: it is `total`, and it keeps the bound on entries.
 *
 * The keys a machine was bound to are items of their own, `MACHINE#<projectId>#<fingerprint>` / `<keyId>`, put by the
 * loader before a binding (machineBinding below): a key's machines are a map on the key item, which no index can
 * hold, so blacklisting a machine finds its keys with one Query of that partition instead of reading the project.
 */
export class DynamoBlacklistStore implements BlacklistStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async findEntry(projectId: string, target: BlacklistTarget): Promise<BlacklistEntry | undefined> {
    const item = await this.get(keyOf.blacklistEntry(projectId, target.kind, target.value));
    return item && toEntry(item);
  }

  async addEntry(projectId: string, entry: BlacklistEntry, maxEntries: number): Promise<BlacklistAdd> {
    for (let attempt = 1; ; attempt++) {
      const [existing, count] = await Promise.all([this.findEntry(projectId, entry), this.count(projectId)]);
      if (existing) return { outcome: 'exists', entry: existing };
      if (count >= maxEntries) return { outcome: 'full' };
      const slot = count + 1;
      try {
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              { Update: this.countUpdate(projectId, count, slot) },
              {
                Put: {
                  TableName: this.tableName,
                  Item: { ...keyOf.blacklistEntry(projectId, entry.kind, entry.value), ...entryAttributes(entry), entity: ENTITY.blacklistEntry, slot },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Put: { TableName: this.tableName, Item: { ...keyOf.blacklistSlot(projectId, slot), ...entryAttributes(entry), entity: ENTITY.blacklistSlot } },
              },
            ],
          }),
        );
        return { outcome: 'added' };
      } catch (error) {
        // Another add or remove moved the count (or added this buyer) in between: read again and retry.
        if (attempt >= TRANSACTION_ATTEMPTS || !(isConditionFailure(error) || isTransactionConflict(error))) throw error;
        await backoff(attempt);
      }
    }
  }

  async removeEntry(projectId: string, target: BlacklistTarget): Promise<BlacklistEntry | undefined> {
    for (let attempt = 1; ; attempt++) {
      const [item, count] = await Promise.all([this.get(keyOf.blacklistEntry(projectId, target.kind, target.value)), this.count(projectId)]);
      if (!item) return undefined;
      const slot = Number(item.slot);
      const last = slot === count ? undefined : await this.get(keyOf.blacklistSlot(projectId, count));
      const moves: NonNullable<TransactWriteCommandInput['TransactItems']> = last
        ? [
            { Put: { TableName: this.tableName, Item: { ...last, ...keyOf.blacklistSlot(projectId, slot) } } },
            {
              Update: {
                TableName: this.tableName,
                Key: keyOf.blacklistEntry(projectId, String(last.kind), String(last.value)),
                UpdateExpression: 'SET slot = :slot',
                ConditionExpression: 'slot = :last',
                ExpressionAttributeValues: { ':slot': slot, ':last': count },
              },
            },
            { Delete: { TableName: this.tableName, Key: keyOf.blacklistSlot(projectId, count) } },
          ]
        : [{ Delete: { TableName: this.tableName, Key: keyOf.blacklistSlot(projectId, slot) } }];
      try {
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              { Update: this.countUpdate(projectId, count, count - 1) },
              {
                Delete: {
                  TableName: this.tableName,
                  Key: keyOf.blacklistEntry(projectId, target.kind, target.value),
                  ConditionExpression: 'slot = :slot',
                  ExpressionAttributeValues: { ':slot': slot },
                },
              },
              ...moves,
            ],
          }),
        );
        return toEntry(item);
      } catch (error) {
        if (attempt >= TRANSACTION_ATTEMPTS || !(isConditionFailure(error) || isTransactionConflict(error))) throw error;
        await backoff(attempt);
      }
    }
  }

  async listEntries(projectId: string, offset: number, limit: number): Promise<{ entries: BlacklistEntry[]; total: number }> {
    const [total, page] = await Promise.all([
      this.count(projectId),
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
          ExpressionAttributeValues: {
            ':pk': keyOf.blacklistPartition(projectId),
            ':first': blacklistSlotSortKey(offset + 1),
            ':last': blacklistSlotSortKey(offset + limit),
          },
          ConsistentRead: true,
        }),
      ),
    ]);
    return { entries: (page.Items ?? []).map(toEntry), total };
  }

  async keyIdsOfBuyer(projectId: string, target: BlacklistTarget, limit: number): Promise<string[]> {
    if (target.kind === 'email_sha256') return [];
    const index = TABLE.indexes.byDiscordId;
    const query =
      target.kind === 'fingerprint'
        ? {
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': keyOf.machinePartition(projectId, target.value) },
            ConsistentRead: true,
          }
        : {
            IndexName: index.name,
            KeyConditionExpression: '#d = :d',
            ExpressionAttributeNames: { '#d': index.partitionKey },
            ExpressionAttributeValues: { ':d': discordIndexAttributes(projectId, target.value)[index.partitionKey] },
          };
    const ids: string[] = [];
    const keyIdOf = (item: Item) => (target.kind === 'fingerprint' ? String(item.sk) : keyIdOfPartition(String(item.pk)));
    for await (const page of queryPages(this.db, { TableName: this.tableName, ...query, Limit: limit }, keyIdOf)) {
      ids.push(...page);
      if (ids.length >= limit) break;
    }
    return ids.slice(0, limit);
  }

  async banKeys(projectId: string, keyIds: readonly string[], reason: string): Promise<number> {
    const ban = (keyId: string) =>
      ifCondition(
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keyOf.key(keyId),
            UpdateExpression: 'SET ban_reason = :reason REMOVE ban_until',
            // Not revoked (revoked wins anyway), and not banned for good already: that ban and its reason stay.
            ConditionExpression: 'projectId = :p AND revoked = :zero AND (attribute_not_exists(ban_reason) OR attribute_exists(ban_until))',
            ExpressionAttributeValues: { ':reason': reason, ':p': projectId, ':zero': 0 },
          }),
        ),
      );
    const pages = (async function* () {
      yield [...keyIds];
    })();
    const { results } = await mapPagesBounded(pages, BLACKLIST_LIMITS.banConcurrency, ban);
    return results.filter(Boolean).length;
  }

  private async get(key: ItemKey): Promise<Item | undefined> {
    return (await this.db.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
  }

  private async count(projectId: string): Promise<number> {
    return Number((await this.get(keyOf.blacklistCount(projectId)))?.entries ?? 0);
  }

  /** The count moved from `from` to `to`, on the condition that it still is `from` (none is 0). */
  private countUpdate(projectId: string, from: number, to: number) {
    return {
      TableName: this.tableName,
      Key: keyOf.blacklistCount(projectId),
      UpdateExpression: 'SET entries = :to, entity = :entity',
      ConditionExpression: from === 0 ? 'attribute_not_exists(entries) OR entries = :from' : 'entries = :from',
      ExpressionAttributeValues: { ':to': to, ':from': from, ':entity': ENTITY.blacklistCount },
    };
  }
}

function entryAttributes(entry: BlacklistEntry) {
  return { id: entry.id, kind: entry.kind, value: entry.value, reason: entry.reason, addedBy: entry.addedBy, created_at: entry.createdAt };
}

function toEntry(item: Item): BlacklistEntry {
  return {
    id: String(item.id),
    kind: String(item.kind) as BlacklistKind,
    value: String(item.value),
    reason: String(item.reason),
    addedBy: String(item.addedBy),
    createdAt: Number(item.created_at),
  };
}

/** What the loader names when it records a machine's key (its grant lists these besides the keys). */
export const MACHINE_RECORD_ATTRIBUTES = ['entity', 'bound_at'] as const;
/** What the loader reads of a fingerprint's entry: the reason its refusal carries. */
export const MACHINE_ENTRY_READ = ['reason'] as const;

/**
 * Before a check binds a new machine to a key (DESIGN.md, "Buyer blacklist"): record that the machine holds the key,
 * then read the machine's blacklist entry; the reason when it is listed (the binding must not happen), undefined
 * otherwise. In this order, so an add that races a binding cannot miss its key: when this read comes before the
 * entry's put, the record's put came before it too, and the add's Query after its put finds the record and bans the
 * key. A record is kept when the binding then fails (a full key): that machine held the key all the same.
 */
export async function machineBinding(
  db: DynamoDBDocumentClient,
  tableName: string,
  binding: { projectId: string; keyId: string; fingerprint: string; now: number },
): Promise<string | undefined> {
  const { projectId, keyId, fingerprint, now } = binding;
  await db.send(
    new PutCommand({ TableName: tableName, Item: { ...keyOf.machineKey(projectId, fingerprint, keyId), entity: ENTITY.machineKey, bound_at: now } }),
  );
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: keyOf.blacklistEntry(projectId, 'fingerprint', fingerprint),
      ConsistentRead: true,
      ProjectionExpression: '#reason',
      ExpressionAttributeNames: { '#reason': MACHINE_ENTRY_READ[0] },
    }),
  );
  return typeof Item?.reason === 'string' ? Item.reason : undefined;
}
