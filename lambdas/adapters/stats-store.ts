import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { GRANULARITY, STORED_NAMES_PER_BUCKET, type StatsDelta, type StatsUnit, type StoredStatsBucket } from '#domain/analytics/stats';
import type { StatsBucketsQuery } from '#domain/ports';
import { batchGetConsistent, itemKeyId } from './batch-get';
import { backoff, isTransactionConflict, TRANSACTION_ATTEMPTS } from './conditions';
import { ENTITY, type ItemKey, keyOf, RETENTION_SECONDS, STATS_NAME_PREFIX, statsSortKey } from './layout';
import { type Item, queryAll } from './paging';
import { TABLE } from './table-definition';

/** Items one TransactWriteItems may hold. */
const TRANSACTION_ITEMS = 100;

/**
 * The project's counters of one granularity and dimension with bucket starts in [first, last]: one Query of one
 * sort-key range (a second page only if the range's items pass 1 MB, which STORED_NAMES_PER_BUCKET keeps them from
 * unless buyers name executors with a hundred 4-byte characters). Eventually consistent: the contract counts a
 * check within 60 seconds, and it halves the read.
 */
export function queryStatsBuckets(db: DynamoDBDocumentClient, tableName: string, query: StatsBucketsQuery): Promise<StoredStatsBucket[]> {
  const { pk } = keyOf.statsCounter(query.projectId, query.granularity, query.by, query.first);
  return queryAll(
    db,
    {
      TableName: tableName,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :first AND :last',
      ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#sk': TABLE.sortKey },
      ExpressionAttributeValues: {
        ':pk': pk,
        ':first': statsSortKey(query.granularity, query.by, query.first),
        ':last': statsSortKey(query.granularity, query.by, query.last),
      },
    },
    toStoredBucket,
  );
}

function toStoredBucket(item: Item): StoredStatsBucket {
  const counts = Object.fromEntries(
    Object.entries(item).flatMap(([name, value]) => (name.startsWith(STATS_NAME_PREFIX) ? [[name.slice(STATS_NAME_PREFIX.length), Number(value)]] : [])),
  );
  return { t: Number(String(item.sk).split('#').at(-1)), total: Number(item.total ?? 0), counts, rest: Number(item.rest ?? 0) };
}

/** One counter's addition from the units of one transaction. */
interface CounterDelta extends StatsDelta {
  key: ItemKey;
  projectId: string;
}

/**
 * Apply units of one project and day, each at most once: a transaction puts each unit's mark (only where none is)
 * and adds the units' counts to their counters, so a redelivered unit fails its mark's condition and the
 * transaction is made again without it. Units are packed into transactions of at most 100 items. The counters of
 * names (executor, version) are read first, so that a bucket keeps at most STORED_NAMES_PER_BUCKET names one by one:
 * an update that adds names is conditioned on there being room for them, and made again (names read anew) if another
 * writer took it meanwhile.
 */
export async function addStatsUnits(db: DynamoDBDocumentClient, tableName: string, units: readonly StatsUnit[], now: number): Promise<void> {
  for (const chunk of packUnits(units)) await applyUnits(db, tableName, chunk, now);
}

const counterId = (projectId: string, delta: StatsDelta) => `${projectId}#${statsSortKey(delta.granularity, delta.dimension, delta.t)}`;

function packUnits(units: readonly StatsUnit[]): StatsUnit[][] {
  const chunks: StatsUnit[][] = [];
  let chunk: StatsUnit[] = [];
  let counters = new Set<string>();
  for (const unit of units) {
    const own = unit.deltas.map((delta) => counterId(unit.projectId, delta));
    const joined = new Set([...counters, ...own]);
    if (chunk.length > 0 && chunk.length + 1 + joined.size > TRANSACTION_ITEMS) {
      chunks.push(chunk);
      chunk = [];
      counters = new Set(own);
    } else counters = joined;
    chunk.push(unit);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

async function applyUnits(db: DynamoDBDocumentClient, tableName: string, units: readonly StatsUnit[], now: number): Promise<void> {
  let pending = units;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const counters = mergeDeltas(pending);
    const named = counters.filter((counter) => counter.dimension !== 'result');
    const stored =
      named.length > 0
        ? await batchGetConsistent(
            db,
            tableName,
            named.map((counter) => counter.key),
          )
        : new Map<string, Item>();
    const marks = pending.map((unit) => ({
      Put: {
        TableName: tableName,
        Item: { ...keyOf.statsUnit(unit.unitId, unit.projectId, unit.day), entity: ENTITY.statsUnit, [TABLE.ttlAttribute]: now + RETENTION_SECONDS.statsUnit },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    }));
    const updates = counters.map((counter) => ({ Update: counterUpdate(tableName, counter, stored.get(itemKeyId(counter.key))) }));
    try {
      await db.send(new TransactWriteCommand({ TransactItems: [...marks, ...updates] }));
      return;
    } catch (error) {
      if (attempt >= TRANSACTION_ATTEMPTS) throw error;
      if (!(error instanceof TransactionCanceledException)) {
        if (!isTransactionConflict(error)) throw error;
        await backoff(attempt);
        continue;
      }
      const reasons = error.CancellationReasons ?? [];
      if (reasons.some((reason) => !['None', 'ConditionalCheckFailed', 'TransactionConflict'].includes(reason.Code ?? 'None'))) throw error;
      // A unit whose mark is there was applied by an earlier delivery; a counter whose condition failed filled up
      // with another writer's names, and is read again on the next attempt.
      pending = pending.filter((_, index) => reasons[index]?.Code !== 'ConditionalCheckFailed');
      if (reasons.some((reason) => reason.Code === 'TransactionConflict')) await backoff(attempt);
    }
  }
}

function mergeDeltas(units: readonly StatsUnit[]): CounterDelta[] {
  const counters = new Map<string, CounterDelta>();
  for (const unit of units) {
    for (const delta of unit.deltas) {
      const id = counterId(unit.projectId, delta);
      const counter = counters.get(id);
      if (!counter) {
        const key = keyOf.statsCounter(unit.projectId, delta.granularity, delta.dimension, delta.t);
        counters.set(id, { ...delta, counts: new Map(delta.counts), key, projectId: unit.projectId });
        continue;
      }
      counter.total += delta.total;
      for (const [name, n] of delta.counts) counter.counts.set(name, (counter.counts.get(name) ?? 0) + n);
    }
  }
  return [...counters.values()];
}

/**
 * The update of one counter. By result every name is kept; by executor or version, names the counter keeps already
 * are added to, new ones are kept (largest first) while it has room, and the rest are added to `rest`.
 */
function counterUpdate(tableName: string, counter: CounterDelta, stored: Item | undefined) {
  const granularity = GRANULARITY[counter.granularity];
  const names: Record<string, string> = { '#entity': 'entity', '#projectId': 'projectId', '#ttl': TABLE.ttlAttribute, '#total': 'total' };
  const values: Item = {
    ':entity': ENTITY.statsCounter,
    ':projectId': counter.projectId,
    ':ttl': counter.t + granularity.seconds + granularity.keptSeconds,
    ':total': counter.total,
  };
  const adds = ['#total :total'];
  let own = [...counter.counts];
  let condition: string | undefined;
  if (counter.dimension !== 'result') {
    const kept = stored ?? {};
    const nameCount = Number(kept.nameCount ?? 0);
    const fresh = own.filter(([name]) => !Object.hasOwn(kept, STATS_NAME_PREFIX + name)).sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0));
    const admitted = fresh.slice(0, Math.max(0, STORED_NAMES_PER_BUCKET - nameCount));
    const overflow = fresh.slice(admitted.length);
    own = [...own.filter(([name]) => Object.hasOwn(kept, STATS_NAME_PREFIX + name)), ...admitted];
    Object.assign(names, { '#nameCount': 'nameCount', '#rest': 'rest' });
    Object.assign(values, { ':nameCount': admitted.length, ':rest': overflow.reduce((sum, [, n]) => sum + n, 0) });
    adds.push('#nameCount :nameCount', '#rest :rest');
    // Room for these names, whatever other writers added meanwhile: two that admit the same new name both count it,
    // which only makes the bound stricter, and writers far from the bound never wait on each other.
    if (admitted.length > 0) {
      condition = 'attribute_not_exists(#nameCount) OR #nameCount <= :room';
      values[':room'] = STORED_NAMES_PER_BUCKET - admitted.length;
    }
  }
  own.forEach(([name, n], i) => {
    names[`#n${i}`] = STATS_NAME_PREFIX + name;
    values[`:n${i}`] = n;
    adds.push(`#n${i} :n${i}`);
  });
  return {
    TableName: tableName,
    Key: counter.key,
    UpdateExpression: `SET #entity = :entity, #projectId = :projectId, #ttl = :ttl ADD ${adds.join(', ')}`,
    ...(condition && { ConditionExpression: condition }),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
