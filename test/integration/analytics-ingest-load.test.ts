import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoTelemetryStore } from '#adapters/telemetry-store';
import { INGEST_CONCURRENCY, ingestTelemetry } from '#domain/analytics/ingest';
import { createTestTable, seedOwner, type TestTable } from '#test-support/fixtures';

const NOW = 1_700_000_000;
const RECORDS = 1_000;

let table: TestTable;
let store: DynamoTelemetryStore;
/** Requests the store sent (retries of one request not counted), by DynamoDB operation, and the most in flight at once. */
const traffic = { byCommand: new Map<string, number>(), inFlight: 0, maxInFlight: 0 };

const roundTrips = () => [...traffic.byCommand.values()].reduce((sum, n) => sum + n, 0);
function resetTraffic(): void {
  traffic.byCommand.clear();
  traffic.maxInFlight = 0;
}

beforeAll(async () => {
  table = await createTestTable('analytics-load');
  table.db.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      traffic.byCommand.set(name, (traffic.byCommand.get(name) ?? 0) + 1);
      traffic.maxInFlight = Math.max(traffic.maxInFlight, ++traffic.inFlight);
      try {
        return await next(args);
      } finally {
        traffic.inFlight--;
      }
    },
    { step: 'initialize', name: 'countRoundTrips' },
  );
  store = new DynamoTelemetryStore(table.db, table.tableName);
});

afterAll(async () => {
  await table?.drop();
});

/**
 * What a loader sends in a busy minute: 600 executions of 5 projects by 10 executors each, each project's
 * script seen with 2 hashes, and 400 validations of 40 keys from 10 clients each, all within one hour.
 */
function busyBatch({ projects, keys }: SeededProjects): unknown[] {
  const executions = Array.from({ length: 600 }, (_, i) => ({
    kind: 'execution',
    projectId: projects[i % 5],
    executor: `executor-${Math.floor(i / 5) % 10}`,
    scriptHash: i % 7 === 0 ? 'c10e0000' : '0a1a0000',
    at: NOW - (i % 600),
  }));
  const validations = Array.from({ length: 400 }, (_, i) => ({
    kind: 'validation',
    projectId: projects[i % 5],
    // Key j belongs to project j % 5, as i % 40 and i % 5 agree.
    keyId: keys[i % 40],
    result: 'ok',
    executor: 'executor-0',
    fingerprint: (Math.floor(i / 40) % 10).toString(16).padStart(64, '0'),
    at: NOW - (i % 600),
  }));
  return [...executions, ...validations];
}

interface SeededProjects {
  projects: string[];
  keys: string[];
}

/** Five projects with eight keys each (ingest refuses telemetry of unknown projects and keys); key j is project j % 5's. */
async function seedProjects(): Promise<SeededProjects> {
  const { ownerId } = await seedOwner(table.stores);
  const projects = await Promise.all(
    Array.from({ length: 5 }, () => table.stores.dashboard.createProject({ ownerId, name: 'Load', plan: 'business', now: NOW })),
  );
  const issued = await Promise.all(
    projects.map((projectId) => table.stores.dashboard.issueKeys({ projectId, count: 8, tier: 'standard', maxUses: null, now: NOW })),
  );
  return { projects, keys: Array.from({ length: 40 }, (_, j) => issued[j % 5]![Math.floor(j / 5)]!.id) };
}

describe(`ingest of ${RECORDS} records`, () => {
  it('costs a few requests per distinct aggregate, not one per record, sent in parallel', async () => {
    const projects = await seedProjects();
    const batch = busyBatch(projects);
    expect(batch).toHaveLength(RECORDS);

    resetTraffic();
    const first = await ingestTelemetry(store, batch, NOW);
    const firstTrips = roundTrips();
    console.info(`first ingest: ${firstTrips} requests, at most ${traffic.maxInFlight} in flight`, Object.fromEntries(traffic.byCommand));

    expect(first).toMatchObject({ accepted: RECORDS, rejected: 0 });
    // 10 new executors and 8 abused keys per project: more than 5 of a kind for a project, so each project gets one
    // summary of each (standing for 10 and 8); 1 clone per project, fired alone.
    const fired = (name: string) => first.events.filter((event) => event.name === name);
    expect(fired('new_executor').map((event) => event.summarizes)).toEqual([10, 10, 10, 10, 10]);
    expect(fired('clone_detected')).toHaveLength(5);
    expect(fired('key_abuse').map((event) => event.summarizes)).toEqual([8, 8, 8, 8, 8]);
    // Per distinct aggregate, not per record: 5 project reads and 1 batch read of key records (only known
    // projects and keys are ingested); 5 day counters; 1 batch read and 50 last-seen for the executors, whose 50
    // conditions cost 5 batch reads, 5 summaries and 50 remembered conditions; 10 hash upserts, 5 script tallies,
    // 5 events and 10 judged marks; 40 windows and 40 reported marks, the 40 conditions 5 batch reads, 5 summaries
    // and 40 remembered conditions. The hourly alert budget: 1 claim per project and kind that fired (15), and for
    // the clones, fired alone, 5 batch reads of whether they already fired; 1 batch read of which hashes are new.
    // The stats: per project (and day), 1 batch read of the counters that keep names and 1 transaction.
    expect(firstTrips).toBeLessThanOrEqual(5 + 1 + 5 + (1 + 50 + (5 + 5 + 50)) + (1 + 10 + 5 + 5 + 10) + (40 + 40 + (5 + 5 + 40)) + (15 + 5) + (5 + 5));
    expect(traffic.maxInFlight).toBeGreaterThan(INGEST_CONCURRENCY / 2);
    expect(traffic.maxInFlight).toBeLessThanOrEqual(4 * INGEST_CONCURRENCY + 2);

    // The steady state: everything already known, nothing fires, and no hash list is ever read.
    resetTraffic();
    const again = await ingestTelemetry(store, busyBatch(projects), NOW);
    console.info(`repeat ingest: ${roundTrips()} requests`, Object.fromEntries(traffic.byCommand));
    expect(again.events).toEqual([]);
    expect(traffic.byCommand.get('QueryCommand') ?? 0).toBe(0);
    expect(traffic.byCommand.get('PutItemCommand') ?? 0).toBe(0);
    // 5 project reads and 1 key batch read, 5 day counters, 1 batch read and 50 last-seen, 1 batch read of which
    // hashes are new, 10 hash upserts and 5 script tallies, 40 windows; the stats' 5 reads and 5 transactions.
    expect(roundTrips()).toBeLessThanOrEqual(5 + 1 + 5 + (1 + 50) + (1 + 10 + 5) + 40 + (5 + 5));
  });

  it('keeps even a batch of 1,000 distinct executors to bounded parallel requests', async () => {
    const [projectId = ''] = (await seedProjects()).projects;
    const batch = Array.from({ length: RECORDS }, (_, i) => ({ kind: 'execution', projectId, executor: `executor-${i}`, at: NOW }));
    resetTraffic();
    const result = await ingestTelemetry(store, batch, NOW);
    console.info(`distinct executors: ${roundTrips()} requests, at most ${traffic.maxInFlight} in flight`, Object.fromEntries(traffic.byCommand));
    // One summary stands for them all; each condition and last-seen is still one write, INGEST_CONCURRENCY at a time.
    expect(result.events).toEqual([{ name: 'new_executor', projectId, dedupKey: expect.stringMatching(/^summary#/), summarizes: RECORDS }]);
    // Last-seen times, then which conditions already fired: 100 keys per batch read each; and the stats' counters.
    expect(traffic.byCommand.get('BatchGetItemCommand')).toBe(2 * (RECORDS / 100) + 1);
    expect(traffic.maxInFlight).toBeLessThanOrEqual(INGEST_CONCURRENCY + 10);
  });
});
