import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { DynamoProjectStore } from '#adapters/project-store';
import { addStatsUnits } from '#adapters/stats-store';
import { TELEMETRY_QUEUE } from '#adapters/telemetry-queue';
import { DynamoTelemetryStore } from '#adapters/telemetry-store';
import { ingestTelemetry } from '#domain/analytics/ingest';
import { bucketStart, GRANULARITY, type StatsDelta, type StatsDimension, type StatsGranularity, type StatsUnit } from '#domain/analytics/stats';
import type { Project } from '#domain/model';
import { projectStats } from '#domain/project-api';
import { DAY_SECONDS, HOUR_SECONDS } from '#domain/time';
import { STATS_DIMENSIONS } from '#schemas/requests';
import { meterCapacity } from '#test-support/capacity-meter';
import { BENCH_REGION, type BenchTable } from './support/dynamodb';
import { createBusinessProject, nowSeconds } from './support/fixtures';
import { itemBytes, transactionalWriteUnits } from './support/item-size';
import { type BenchResult, type Row, row } from './support/report';
import { median, percentile, round } from './support/stats';

const NAME = 'stats';
const STATS_BENCH = {
  /** Checks the project's counters hold, spread evenly over the last 90 days. */
  checks: 1_000_000,
  days: 90,
  /** Answers timed per window. */
  answers: 50,
  /** Executor names and versions the checks are spread over. */
  executors: 12,
  versions: 4,
  /** Share of checks by result; the rest are `ok` (executions). */
  refused: { revoked: 0.03, expired: 0.01, hwid_locked: 0.005, over_limit: 0.005 },
  /** Steady load: counted checks per stream batch (CHECK_STREAM.batchSize when the load fills it) and batches measured. */
  streamBatches: [1_000, 250],
  queueBatch: TELEMETRY_QUEUE.batchSize,
  batchesMeasured: 10,
  /** Issue 28's targets. */
  targetRequestsPerAnswer: 1,
  targetAddedWriteUnitsPerCheck: 0.2,
} as const;

/**
 * The stats answer and the counters' cost (issue 28): a project whose counters hold 1,000,000 checks over 90 days
 * (written through the counter store in bulk, a unit a day, not by running a million checks), then the answer's
 * p50, requests and read units for a 7-day hourly and a 90-day daily window, and what the counters add per check
 * when batches of counted checks are ingested as the stream hands them over.
 */
export async function benchStats(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = STATS_BENCH;
  const now = nowSeconds();
  const { projectId } = await createBusinessProject(table.stores, 'bench stats');
  const { ingested, writeUnits: seedUnits } = await seedCounters(table, projectId, now);
  log(`${NAME}: counters of ${ingested.toLocaleString('en-US')} checks written (${round(seedUnits, 0)} WCU)`);

  const db = createDocumentClient({ ...localDynamoConfig(table.endpoint), region: BENCH_REGION });
  const meter = meterCapacity(db);
  const priced = priceTransactions(db, table);
  const projects = new DynamoProjectStore(db, table.tableName);
  const project = (await projects.getProject(projectId)) as Project;
  const rows: Row[] = [];
  const details: Record<string, unknown> = { checks: ingested };
  try {
    const windows = [
      { label: '7-day hourly by result', query: { granularity: 'hour', by: 'result', from: now - 7 * DAY_SECONDS, to: now } },
      { label: '7-day hourly by executor', query: { granularity: 'hour', by: 'executor', from: now - 7 * DAY_SECONDS, to: now } },
      { label: '90-day daily by result', query: { granularity: 'day', by: 'result', from: now - 90 * DAY_SECONDS, to: now } },
      { label: '90-day daily by version', query: { granularity: 'day', by: 'version', from: now - 90 * DAY_SECONDS, to: now } },
    ] as const;
    for (const { label, query } of windows) {
      const samples: number[] = [];
      meter.reset();
      let summed = 0;
      for (let i = 0; i < s.answers; i++) {
        const start = performance.now();
        const answer = await projectStats(projects, project, query, now);
        samples.push(performance.now() - start);
        summed = answer.buckets.reduce((sum, bucket) => sum + bucket.total, 0);
      }
      const requests = (meter.byCommand().QueryCommand?.requests ?? 0) / s.answers;
      const readUnits = meter.readUnits / s.answers;
      log(`${NAME}: ${label}: p50 ${round(median(samples), 2)} ms, ${requests} request(s), ${readUnits} RCU, ${summed.toLocaleString('en-US')} counted`);
      rows.push(
        row(NAME, `answer p50, ${label}`, round(median(samples), 2), 'ms', {
          note: `p95 ${round(percentile(samples, 95), 2)} ms; the buckets sum to ${summed.toLocaleString('en-US')}`,
        }),
        row(NAME, `requests per answer, ${label}`, requests, '', { target: { op: '<=', limit: s.targetRequestsPerAnswer } }),
        row(NAME, `read units per answer, ${label}`, round(readUnits, 1), 'RCU'),
      );
      details[label] = { samplesMs: samples, requests, readUnits, summed };
    }

    const telemetry = new DynamoTelemetryStore(db, table.tableName);
    const loads = [
      ...s.streamBatches.map((size) => ({ size, what: `stream batches of ${size} counted checks`, refusals: false })),
      { size: s.queueBatch, what: `queue batches of ${s.queueBatch} refusals (a message each)`, refusals: true },
    ];
    for (const { size, what, refusals } of loads) {
      const loaded = await createBusinessProject(table.stores, `bench stats ${what}`);
      const [key] = await table.stores.dashboard.issueKeys({ projectId: loaded.projectId, count: 1, tier: 'standard', maxUses: null, now });
      if (!key) throw new Error('no key issued');
      meter.reset();
      priced.reset();
      for (let batch = 0; batch < s.batchesMeasured; batch++) {
        const at = now - 60 + batch;
        // A counted check is a validation and an execution, as the stream reads them off the key item; a refusal a validation.
        const checks = Array.from({ length: size }, (_, i) => {
          const executor = `Executor ${i % s.executors}`;
          const validation = {
            kind: 'validation',
            projectId: loaded.projectId,
            keyId: key.id,
            result: refusals ? 'revoked' : 'ok',
            executor,
            fingerprint: 'f'.repeat(64),
            at,
          };
          return refusals ? [validation] : [validation, { kind: 'execution', projectId: loaded.projectId, keyId: key.id, executor, at }];
        });
        // The stream's batch is one delivery unit; each queue message is one.
        const units = refusals ? checks.flatMap((records, i) => records.map(() => `bench-message-${batch}-${i}`)) : `bench-stream-${batch}`;
        await ingestTelemetry(telemetry, checks.flat(), now, units);
      }
      const counters = { write: priced.writeUnits(), requests: priced.transactions() };
      const reads = meter.byCommand().BatchGetItemCommand?.read ?? 0;
      const perCheck = counters.write / (size * s.batchesMeasured);
      log(`${NAME}: ${what}: ${round(perCheck, 3)} WCU per check from the counters, ${counters.requests} transactions, ${counters.write} WCU`);
      rows.push(
        row(NAME, `added write units per check, ${what}`, round(perCheck, 4), 'WCU', {
          ...(refusals ? {} : { target: { op: '<=', limit: s.targetAddedWriteUnitsPerCheck } }),
          note: `${counters.requests / s.batchesMeasured} transaction(s) and ${round(counters.write / s.batchesMeasured, 1)} WCU a batch (2 WCU a KB of each item written, from its size); the ingest's reads (names kept, keys, project) ${round(reads / (size * s.batchesMeasured), 3)} RCU per check`,
        }),
      );
      details[what] = { writeUnits: counters.write, transactions: counters.requests, byCommand: meter.byCommand() };
    }
  } finally {
    db.destroy();
  }
  return { rows, details };
}

/** Daily counters for every one of the 90 days, hourly ones for the last 8 (as long as they are kept), a unit a day. */
async function seedCounters(table: BenchTable, projectId: string, now: number): Promise<{ ingested: number; writeUnits: number }> {
  const s = STATS_BENCH;
  const db = createDocumentClient({ ...localDynamoConfig(table.endpoint), region: BENCH_REGION });
  const meter = meterCapacity(db);
  const today = bucketStart(now, 'day');
  const hourLimit = now - GRANULARITY.hour.keptSeconds;
  let ingested = 0;
  try {
    for (let d = 0; d < s.days; d++) {
      const day = today - d * DAY_SECONDS;
      const checks = Math.floor(s.checks / s.days) + (d === 0 ? s.checks % s.days : 0);
      const deltas: StatsDelta[] = STATS_DIMENSIONS.map((dimension) => delta('day', dimension, day, checks));
      for (let hour = day; hour < day + DAY_SECONDS && hour <= now; hour += HOUR_SECONDS) {
        if (hour < hourLimit) continue;
        deltas.push(...STATS_DIMENSIONS.map((dimension) => delta('hour', dimension, hour, Math.round(checks / 24))));
      }
      const unit: StatsUnit = { unitId: `bench-seed-${projectId}-${day}`, projectId, day, deltas };
      await addStatsUnits(db, table.tableName, [unit], now);
      ingested += checks;
    }
  } finally {
    db.destroy();
  }
  return { ingested, writeUnits: meter.writeUnits };
}

/** A bucket's counts for `checks` checks: by result at the bench's shares, executions spread over executors or versions. */
function delta(granularity: StatsGranularity, dimension: StatsDimension, t: number, checks: number): StatsDelta {
  const s = STATS_BENCH;
  const refused = Object.entries(s.refused).map(([result, share]) => [result, Math.round(checks * share)] as const);
  const executions = checks - refused.reduce((sum, [, n]) => sum + n, 0);
  const spread = (names: string[]) => names.map((name, i) => [name, Math.floor(executions / names.length) + (i < executions % names.length ? 1 : 0)] as const);
  const counts =
    dimension === 'result'
      ? [['ok', executions] as const, ...refused]
      : dimension === 'executor'
        ? spread(Array.from({ length: s.executors }, (_, i) => `Executor ${i}`))
        : spread(Array.from({ length: s.versions }, (_, i) => `ver_bench${i}`));
  return { granularity, dimension, t, total: dimension === 'result' ? checks : executions, counts: new Map(counts) };
}

/**
 * What each TransactWriteItems of `db` costs in AWS: 2 WCU per KB of each item it writes, the item's size read back
 * after the write (counters only grow, so that is the larger of before and after). DynamoDB Local's own figure for
 * a transaction is a flat 4 WCU, whatever it writes.
 */
function priceTransactions(db: DynamoDBDocumentClient, table: BenchTable) {
  let writeUnits = 0;
  let transactions = 0;
  // The key as the command holds it: plain before the document client marshalls it, `{ S: … }` after.
  const plain = (value: unknown) => (typeof value === 'object' && value !== null && 'S' in value ? (value as { S: unknown }).S : value);
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName !== 'TransactWriteItemsCommand') return result;
      transactions += 1;
      const items =
        (args.input as { TransactItems?: { Put?: { Item?: Record<string, unknown> }; Update?: { Key?: Record<string, unknown> } }[] }).TransactItems ?? [];
      for (const item of items) {
        const key = item.Put?.Item ?? item.Update?.Key ?? {};
        const { Item } = await table.db.send(
          new GetCommand({ TableName: table.tableName, Key: { pk: plain(key.pk), sk: plain(key.sk) }, ConsistentRead: true }),
        );
        writeUnits += transactionalWriteUnits(itemBytes(Item ?? {}));
      }
      return result;
    },
    { step: 'initialize', name: 'priceTransactions' },
  );
  return {
    writeUnits: () => writeUnits,
    transactions: () => transactions,
    reset: () => {
      writeUnits = 0;
      transactions = 0;
    },
  };
}
