import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStores } from '#adapters/stores';
import { QueueTelemetrySink, TELEMETRY_QUEUE } from '#adapters/telemetry-queue';
import { parseFlags } from '#dashboard/args';
import { type TelemetryCommand, telemetryExecution, telemetryValidation } from '#dashboard/commands/telemetry';
import { AddressTally } from '#domain/address-tally';
import { ingestTelemetry } from '#domain/analytics/ingest';
import { bucketStart, bucketStarts, OTHER_NAME, STATS_RESULTS, type StatsGranularity, TOP_NAMES } from '#domain/analytics/stats';
import type { TelemetrySink, TelemetryStore } from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import { createIngestQueueHandler } from '#functions/ingest-queue';
import { createApiHandler } from '#http/api-handler';
import { createValidateHandler } from '#http/loader-validate';
import { getStatsRoute } from '#http/owner-routes/get-stats';
import { VALIDATE_ROUTE } from '#http/public-routes';
import { InProcessQueue } from '#local/in-process-queue';
import { memoryKeySecret } from '#local/key-secret';
import { buildLoaderEvent } from '#local/proxy-event';
import { type CheckStreamIngest, startCheckStreamIngest } from '#local/telemetry-pipeline';
import { STATS_DIMENSIONS } from '#schemas/requests';
import { invoke } from '#test-support/api-harness';
import { apiEvent, createTestTable, dynamodbEndpoint, FIXED_NOW, type SeededOwner, seedOwner, type TestTable } from '#test-support/fixtures';

/** FIXED_NOW is 2023-11-14T22:13:20Z: its hour starts at 22:00, its day at midnight. */
const HOUR = 3600;
const DAY = 86_400;
const THIS_HOUR = FIXED_NOW - (FIXED_NOW % HOUR);
const TODAY = FIXED_NOW - (FIXED_NOW % DAY);
/** 2023-11-10T07:06:40Z, four days back: a backdated record's hour and day. */
const BACKDATED = 1_699_600_000;
const INGESTED_AT = FIXED_NOW + 5;
const FP = (n: number) => n.toString(16).padStart(64, '0');
const silent = (serviceName = 'stats') => new Logger({ serviceName, logLevel: 'SILENT' });
const zeroResults = Object.fromEntries(STATS_RESULTS.map((result) => [result, 0]));

let table: TestTable;
let reader: SeededOwner;
let addresses = 0;
const streamIngests: CheckStreamIngest[] = [];

beforeAll(async () => {
  table = await createTestTable('stats', { stream: true });
  // A read token is enough for stats.
  reader = await seedOwner(table.stores, FIXED_NOW, 'read');
});

afterAll(async () => {
  await Promise.all(streamIngests.map((ingest) => ingest.stop()));
  await table?.drop();
});

const newProject = () => table.stores.dashboard.createProject({ ownerId: reader.ownerId, name: 'Stats Script', plan: 'business', now: FIXED_NOW });

async function issueKey(projectId: string) {
  const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, now: FIXED_NOW });
  if (!key) throw new Error('no key issued');
  return key;
}

/** The loader's validate handler as one container runs it, at FIXED_NOW, reporting refusals to `telemetry`. */
function loaderContainer(telemetry: TelemetrySink) {
  const stores = createStores(table.db, table.tableName);
  addresses += 1;
  const handler = createValidateHandler({
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry,
    now: () => FIXED_NOW,
    logger: silent('loader-check'),
  });
  return (body: { project_id: string; key: string; executor?: string }) =>
    invoke(
      handler,
      buildLoaderEvent({
        route: VALIDATE_ROUTE,
        body: JSON.stringify({ fingerprint: FP(1), executor: 'Wave', ...body }),
        requestId: randomUUID(),
        timeEpoch: FIXED_NOW * 1000,
        sourceIp: `10.200.${addresses}.1`,
      }),
    );
}

/** The counted checks' stream ingest on `store`, polled by hand. */
async function streamIngest(store: TelemetryStore) {
  const ingest = await startCheckStreamIngest({
    endpoint: dynamodbEndpoint(),
    tableName: table.tableName,
    store,
    now: () => INGESTED_AT,
    autoPoll: false,
    logLevel: 'SILENT',
  });
  streamIngests.push(ingest);
  return ingest;
}

/** The refusals' queue, with a clock a test moves to bring failed messages back. */
function refusalQueue() {
  let nowMs = FIXED_NOW * 1000;
  const queue = new InProcessQueue({
    visibilityTimeoutSeconds: TELEMETRY_QUEUE.visibilityTimeoutSeconds,
    maxReceiveCount: TELEMETRY_QUEUE.maxReceiveCount,
    batchSize: TELEMETRY_QUEUE.batchSize,
    now: () => nowMs,
  });
  return {
    queue,
    sink: new QueueTelemetrySink(queue, silent('loader-check')),
    afterVisibilityTimeout: () => {
      nowMs += (TELEMETRY_QUEUE.visibilityTimeoutSeconds + 1) * 1000;
    },
    /** One receive handed to the queue ingest handler on `store`. */
    pump: (store: TelemetryStore) =>
      queue.pump(async (event) => void (await createIngestQueueHandler({ store, now: () => INGESTED_AT, logger: silent() })(event))),
  };
}

/** `store`, except that its first `addStats` throws after the counters moved: a Lambda dying right after the write. */
function failingOnceAfterStatsWrite(store: TelemetryStore): { store: TelemetryStore; failures: () => number } {
  let failures = 0;
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property === 'addStats') {
        return async (...args: Parameters<TelemetryStore['addStats']>) => {
          await target.addStats(...args);
          if (failures++ === 0) throw new Error('Task timed out after the stats write');
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: wrapped, failures: () => failures };
}

/** GET /v1/projects/{id}/stats with a read token, through the deployed handler's middy chain. */
async function stats(projectId: string, query: Record<string, string>) {
  const handler = createApiHandler(getStatsRoute, {
    stores: table.stores,
    keySecret: memoryKeySecret(),
    now: () => FIXED_NOW + 60,
    logger: silent('developer-api'),
  });
  const reply = await invoke(handler, apiEvent('get-stats', { projectId, caller: reader, query }));
  expect(reply.status, reply.raw).toBe(200);
  return reply.body as { buckets: { t: number; total: number; counts: Record<string, number> }[] };
}

/** Runs a dashboard telemetry command as the CLI does, at FIXED_NOW. */
async function dashboard<Input>(command: TelemetryCommand<Input, object>, argv: string[]) {
  return command.run({ stores: { telemetry: table.stores.telemetry }, now: () => FIXED_NOW }, command.validate(parseFlags(command.name, argv, command.flags)));
}

describe('stats counters, fed by the ingest paths', () => {
  it('counts checks through the loader route and backdated telemetry records in exactly their hour and day buckets', async () => {
    const projectId = await newProject();
    const active = await issueKey(projectId);
    const revoked = await issueKey(projectId);
    await table.stores.projects.revokeKey(projectId, revoked.id, FIXED_NOW);
    const ingest = await streamIngest(table.stores.telemetry);
    const refusals = refusalQueue();
    const check = loaderContainer(refusals.sink);
    for (const executor of ['Wave', 'Wave', 'Delta']) expect((await check({ project_id: projectId, key: active.key, executor })).body.code).toBe('KEY_VALID');
    expect((await check({ project_id: projectId, key: revoked.key })).body.code).toBe('KEY_REVOKED');
    expect((await check({ project_id: projectId, key: 'sdk_unknown' })).body.code).toBe('KEY_INVALID');
    await ingest.drain();
    while ((await refusals.pump(table.stores.telemetry)) > 0);
    const at = String(BACKDATED);
    await dashboard(telemetryExecution, ['--project', projectId, '--executor', 'Solara', '--at', at, '--count', '4']);
    await dashboard(telemetryValidation, ['--project', projectId, '--key', active.id, '--result', 'expired', '--executor', 'Solara', '--at', at]);

    const window = { from: String(FIXED_NOW - HOUR), to: String(FIXED_NOW + 60) };
    expect((await stats(projectId, window)).buckets).toEqual([
      { t: THIS_HOUR - HOUR, total: 0, counts: zeroResults },
      { t: THIS_HOUR, total: 4, counts: { ...zeroResults, ok: 3, revoked: 1 } },
    ]);
    expect((await stats(projectId, { ...window, by: 'executor' })).buckets).toEqual([
      { t: THIS_HOUR - HOUR, total: 0, counts: {} },
      { t: THIS_HOUR, total: 3, counts: { Wave: 2, Delta: 1 } },
    ]);
    expect((await stats(projectId, { ...window, by: 'version' })).buckets.at(-1)).toEqual({ t: THIS_HOUR, total: 3, counts: { '(none)': 3 } });
    const backdatedHour = BACKDATED - (BACKDATED % HOUR);
    expect((await stats(projectId, { by: 'executor', from: String(backdatedHour), to: String(backdatedHour + HOUR) })).buckets).toEqual([
      { t: backdatedHour, total: 4, counts: { Solara: 4 } },
    ]);
    const days = await stats(projectId, { granularity: 'day', from: String(TODAY - 6 * DAY), to: String(FIXED_NOW) });
    expect(days.buckets.map(({ t, total }) => [t, total])).toEqual(Array.from({ length: 7 }, (_, i) => [TODAY - (6 - i) * DAY, [0, 0, 1, 0, 0, 0, 4][i]]));
    expect(days.buckets.map(({ counts }) => counts.expired)).toEqual([0, 0, 1, 0, 0, 0, 0]);
  });

  it('a stream batch retried after its counters moved counts once', async () => {
    const projectId = await newProject();
    const { key } = await issueKey(projectId);
    const flaky = failingOnceAfterStatsWrite(table.stores.telemetry);
    const ingest = await streamIngest(flaky.store);
    const check = loaderContainer({ report: async () => undefined });
    for (let i = 0; i < 5; i++) expect((await check({ project_id: projectId, key })).body.code).toBe('KEY_VALID');
    await ingest.drain();
    // The first ingest wrote, then failed; the poller handed the same batch over again, as the event-source mapping does.
    expect(flaky.failures()).toBe(2);
    const [bucket] = (await stats(projectId, { from: String(THIS_HOUR), to: String(THIS_HOUR + HOUR) })).buckets;
    expect(bucket).toEqual({ t: THIS_HOUR, total: 5, counts: { ...zeroResults, ok: 5 } });
  });

  it('queue messages redelivered in another batch after their counters moved count once', async () => {
    const projectId = await newProject();
    const { id, key } = await issueKey(projectId);
    await table.stores.projects.revokeKey(projectId, id, FIXED_NOW);
    const refusals = refusalQueue();
    const check = loaderContainer(refusals.sink);
    for (let i = 0; i < 2; i++) expect((await check({ project_id: projectId, key })).body.code).toBe('KEY_REVOKED');
    const flaky = failingOnceAfterStatsWrite(table.stores.telemetry);
    expect(await refusals.pump(flaky.store)).toBe(2);
    expect(refusals.queue.depth).toBe(2);
    // A third refusal joins the two that come back: one batch of three, two of them already counted.
    expect((await check({ project_id: projectId, key })).body.code).toBe('KEY_REVOKED');
    refusals.afterVisibilityTimeout();
    expect(await refusals.pump(flaky.store)).toBe(3);
    expect(refusals.queue.depth).toBe(0);
    const [bucket] = (await stats(projectId, { from: String(THIS_HOUR), to: String(THIS_HOUR + HOUR) })).buckets;
    expect(bucket).toEqual({ t: THIS_HOUR, total: 3, counts: { ...zeroResults, revoked: 3 } });
  });

  it(`names a bucket's ${TOP_NAMES} largest executors and sums the rest under "${OTHER_NAME}", however many names buyers make up`, async () => {
    const projectId = await newProject();
    // Executor i runs i + 1 times: 45 names and 1,035 executions in one batch, then a newcomer once the bucket is full.
    const records = Array.from({ length: 45 }, (_, i) =>
      Array.from({ length: i + 1 }, () => ({ kind: 'execution', projectId, executor: `Exec ${i}`, at: FIXED_NOW })),
    ).flat();
    await ingestTelemetry(table.stores.telemetry, records, FIXED_NOW);
    await ingestTelemetry(
      table.stores.telemetry,
      Array.from({ length: 100 }, () => ({ kind: 'execution', projectId, executor: 'Latecomer', at: FIXED_NOW })),
      FIXED_NOW,
    );
    const [bucket] = (await stats(projectId, { by: 'executor', from: String(THIS_HOUR), to: String(THIS_HOUR + HOUR) })).buckets;
    // Exact: the 20 largest (executors 44 down to 25), and the rest (executors 0-24: 325; the newcomer: 100) summed.
    expect(bucket).toEqual({
      t: THIS_HOUR,
      total: 1_135,
      counts: { ...Object.fromEntries(Array.from({ length: TOP_NAMES }, (_, i) => [`Exec ${44 - i}`, 45 - i])), [OTHER_NAME]: 425 },
    });
  });

  it('property: the buckets of any window sum to the records ingested into it, whatever the batches', async () => {
    const start = FIXED_NOW - 7 * DAY;
    const record = fc.record({
      kind: fc.constantFrom('validation', 'execution'),
      offset: fc.integer({ min: 0, max: 7 * DAY }),
      result: fc.constantFrom(...STATS_RESULTS),
      executor: fc.constantFrom('Wave', 'Delta', 'Solara'),
    });
    const window = fc.record({
      granularity: fc.constantFrom<StatsGranularity>('hour', 'day'),
      by: fc.constantFrom(...STATS_DIMENSIONS),
      from: fc.integer({ min: start - 2 * HOUR, max: FIXED_NOW }),
      span: fc.integer({ min: 1, max: 7 * DAY }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 3 }), window, async (drawn, batches, asked) => {
        const projectId = await newProject();
        const { id: keyId } = await issueKey(projectId);
        const records = drawn.map(({ kind, offset, result, executor }) =>
          kind === 'validation'
            ? { kind, projectId, keyId, result, executor, fingerprint: FP(1), at: start + offset }
            : { kind, projectId, executor, at: start + offset },
        );
        const size = Math.ceil(records.length / batches);
        for (let i = 0; i < records.length; i += size) await ingestTelemetry(table.stores.telemetry, records.slice(i, i + size), FIXED_NOW);
        const { granularity, by, from, span } = asked;
        const to = from + span;
        const counted = records.filter((r) => (by === 'result' ? r.kind === 'validation' : r.kind === 'execution'));
        const expected = bucketStarts(from, to, granularity).map((t) => counted.filter((r) => bucketStart(r.at, granularity) === t).length);
        const { buckets } = await stats(projectId, { granularity, by, from: String(from), to: String(to) });
        expect(buckets.map(({ total }) => total)).toEqual(expected);
        for (const bucket of buckets) expect(Object.values(bucket.counts).reduce((sum, n) => sum + n, 0)).toBe(bucket.total);
      }),
      { numRuns: 15 },
    );
  });
});
