import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '#adapters/layout';
import { DynamoTelemetryStore } from '#adapters/telemetry-store';
import { ALERTS_PER_HOUR, NEW_EXECUTORS_PER_KEY_PER_HOUR, NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR } from '#domain/analytics/alert-budget';
import { runAlertDigest } from '#domain/analytics/alert-digest';
import { ingestTelemetry } from '#domain/analytics/ingest';
import { EVENT_DATA } from '#schemas/events';
import { createTestTable, seedOwner, type TestTable } from '#test-support/fixtures';

/**
 * The hourly alert budget and the per-key bound on new names, on DynamoDB Local through the ingest entry point:
 * each ingest here is its own batch, as paced checks make them, so coalescing within a batch never applies.
 */

const NOW = 1_700_000_000; // 2023-11-14T22:13:20Z
const HOUR_START = NOW - (NOW % 3600);
/** When the digest of NOW's hour runs: 2 minutes into the next hour. */
const DIGEST_AT = HOUR_START + 3600 + 120;

let table: TestTable;
let store: DynamoTelemetryStore;
let ownerId: string;

beforeAll(async () => {
  table = await createTestTable('alert-budget');
  store = new DynamoTelemetryStore(table.db, table.tableName);
  ({ ownerId } = await seedOwner(table.stores));
});

afterAll(async () => {
  await table?.drop();
});

const newProject = () => table.stores.dashboard.createProject({ ownerId, name: 'Budget', plan: 'business', now: NOW });
const times = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));
const execution = (projectId: string, fields: Record<string, unknown>) => ({ kind: 'execution', projectId, executor: 'Synapse X', at: NOW, ...fields });

/** The project's items of the events partition by entity: EVENT (posted) and EVENT_COALESCED (dedup memory only). */
async function eventsOf(projectId: string) {
  const { Items = [] } = await table.db.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keyOf.event(projectId, 'new_executor', '').pk },
      ConsistentRead: true,
    }),
  );
  return { posted: Items.filter((item) => item.entity === 'EVENT'), remembered: Items.filter((item) => item.entity === 'EVENT_COALESCED') };
}

async function executorItems(projectId: string) {
  const { Items = [] } = await table.db.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :executor)',
      ExpressionAttributeValues: { ':pk': keyOf.executor(projectId, '').pk, ':executor': 'EXECUTOR#' },
      ConsistentRead: true,
    }),
  );
  return Items;
}

describe('the hourly alert budget, across ingest batches', () => {
  it('posts the first 3 of 200 new executors reported one ingest at a time, holds the other 197, and the digest after the hour tells the count', async () => {
    const projectId = await newProject();
    const fired = [];
    for (let i = 0; i < 200; i++)
      fired.push(...(await ingestTelemetry(store, [execution(projectId, { executor: `Paced-${i}`, at: NOW - 200 + i })], NOW)).events);
    expect(fired.filter((event) => event.held === undefined)).toHaveLength(ALERTS_PER_HOUR);
    expect(fired.reduce((sum, event) => sum + (event.held ?? 0), 0)).toBe(200 - ALERTS_PER_HOUR);
    const { posted, remembered } = await eventsOf(projectId);
    expect(posted).toHaveLength(ALERTS_PER_HOUR);
    // Every held condition is remembered, so none fires later by itself.
    expect(remembered).toHaveLength(200 - ALERTS_PER_HOUR);

    const digest = await runAlertDigest(store, DIGEST_AT, DIGEST_AT);
    expect(digest).toEqual({ hourStart: HOUR_START, events: [{ name: 'new_executor', projectId, dedupKey: 'digest#2023-11-14T22', summarizes: 197 }] });
    const [item] = (await eventsOf(projectId)).posted.filter((event) => event.sk === 'EVENT#new_executor#digest#2023-11-14T22');
    expect(EVENT_DATA.new_executor.parse(item?.data)).toEqual({
      hour: '2023-11-14T22',
      posted: ALERTS_PER_HOUR,
      held: 197,
      untracked: 0,
      firstAt: NOW,
      lastAt: NOW,
      sample: times(5, (i) => ({ executor: `Paced-${ALERTS_PER_HOUR + i}`, firstSeenAt: NOW - 200 + ALERTS_PER_HOUR + i, previouslySeenAt: null })),
    });
    // A rerun of the digest (a retried schedule) posts nothing again.
    expect((await runAlertDigest(store, DIGEST_AT, DIGEST_AT + 60)).events).toEqual([]);
  });

  it('posts no more than the budget when 20 ingests with a new executor each run at once', async () => {
    const projectId = await newProject();
    const results = await Promise.all(times(20, (i) => ingestTelemetry(store, [execution(projectId, { executor: `Burst-${i}` })], NOW)));
    const events = results.flatMap((result) => result.events);
    expect(events.filter((event) => event.held === undefined)).toHaveLength(ALERTS_PER_HOUR);
    expect((await eventsOf(projectId)).posted).toHaveLength(ALERTS_PER_HOUR);
  });

  it('starts a new budget in the next hour, and posts no digest for an hour that stayed within it', async () => {
    const projectId = await newProject();
    const ingestAt = async (now: number, executor: string) => (await ingestTelemetry(store, [execution(projectId, { executor, at: now })], now)).events;
    for (let i = 0; i < ALERTS_PER_HOUR; i++)
      expect(await ingestAt(NOW + 3600, `Next-${i}`)).toEqual([expect.not.objectContaining({ held: expect.anything() })]);
    expect(await ingestAt(NOW + 3600, 'Next-over')).toEqual([expect.objectContaining({ held: 1 })]);
    expect((await runAlertDigest(store, DIGEST_AT, DIGEST_AT)).events.filter((event) => event.projectId === projectId)).toEqual([]);
  });
});

describe('the per-key bound on new names', () => {
  it(`tracks at most ${NEW_EXECUTORS_PER_KEY_PER_HOUR} new executor names per key an hour; the rest are counted for the digest, and another key has its own`, async () => {
    const projectId = await newProject();
    for (let i = 0; i < 12; i++) await ingestTelemetry(store, [execution(projectId, { keyId: 'key_flood', executor: `Flood-${i}` })], NOW);
    await ingestTelemetry(store, [execution(projectId, { keyId: 'key_other', executor: 'Honest' })], NOW);
    const tracked = (await executorItems(projectId)).map((item) => item.executor);
    expect(tracked.sort()).toEqual([...times(NEW_EXECUTORS_PER_KEY_PER_HOUR, (i) => `Flood-${i}`), 'Honest'].sort());
    // A name already tracked is not new, so it costs the key nothing.
    expect((await ingestTelemetry(store, [execution(projectId, { keyId: 'key_flood', executor: 'Flood-0' })], NOW)).events).toEqual([]);

    const [digest] = (await runAlertDigest(store, DIGEST_AT, DIGEST_AT)).events.filter((event) => event.projectId === projectId);
    expect(digest).toEqual({ name: 'new_executor', projectId, dedupKey: 'digest#2023-11-14T22', summarizes: 12 - NEW_EXECUTORS_PER_KEY_PER_HOUR + 3 });
    const [item] = (await eventsOf(projectId)).posted.filter((event) => String(event.sk).includes('digest#'));
    expect(item?.data).toMatchObject({
      posted: ALERTS_PER_HOUR,
      held: NEW_EXECUTORS_PER_KEY_PER_HOUR + 1 - ALERTS_PER_HOUR,
      untracked: 12 - NEW_EXECUTORS_PER_KEY_PER_HOUR,
    });
  });

  it(`judges at most ${NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR} new script hashes per key an hour; the rest are counted for the clone_detected digest`, async () => {
    const projectId = await newProject();
    const hashes = times(8, (i) => (0xb0000000 + i).toString(16));
    for (const hash of hashes) await ingestTelemetry(store, [execution(projectId, { keyId: 'key_hashes', scriptHash: hash })], NOW);
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :hash)',
        ExpressionAttributeValues: { ':pk': keyOf.executor(projectId, '').pk, ':hash': 'SCRIPT_HASH#' },
        ConsistentRead: true,
      }),
    );
    expect(Items.map((item) => item.hash).sort()).toEqual(hashes.slice(0, NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR));
    const [digest] = (await runAlertDigest(store, DIGEST_AT, DIGEST_AT)).events.filter((event) => event.projectId === projectId);
    expect(digest).toEqual({ name: 'clone_detected', projectId, dedupKey: 'digest#2023-11-14T22', summarizes: 8 - NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR });
  });
});
