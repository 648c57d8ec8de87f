import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventItem, keyOf } from '#adapters/layout';
import { DynamoTelemetryStore } from '#adapters/telemetry-store';
import { parseFlags } from '#dashboard/args';
import { detectDaily, type TelemetryCommand, type TelemetryContext, telemetryExecution, telemetryValidation } from '#dashboard/commands/telemetry';
import { ALERTS_PER_HOUR } from '#domain/analytics/alert-budget';
import { summarize } from '#domain/analytics/coalesce';
import { runDailyDetection } from '#domain/analytics/daily';
import { detectNewExecutor, NEW_EXECUTOR_ABSENCE_SECONDS } from '#domain/analytics/detectors';
import { fireEvents, ingestTelemetry } from '#domain/analytics/ingest';
import { dayStart, utcDate } from '#domain/time';
import { EVENT_DATA, type SingleEventData } from '#schemas/events';
import { MAX_CLOCK_SKEW_SECONDS, MAX_RECORD_AGE_SECONDS } from '#schemas/telemetry';
import { createTestTable, seedOwner, type TestTable } from '#test-support/fixtures';

const NOW = 1_700_000_000; // 2023-11-14T22:13:20Z
const DAY = 86_400;
const FP = (n: number) => n.toString(16).padStart(64, '0');

let table: TestTable;
let store: DynamoTelemetryStore;
let ownerId: string;

beforeAll(async () => {
  table = await createTestTable('analytics');
  store = new DynamoTelemetryStore(table.db, table.tableName);
  ({ ownerId } = await seedOwner(table.stores));
});

/** A Business project: ingest refuses telemetry of a project that does not exist. */
const newProject = () => table.stores.dashboard.createProject({ ownerId, name: 'Analytics', plan: 'business', now: NOW });
/** A key of the project: ingest refuses validations of a key the project does not have. */
async function newKey(projectId: string): Promise<string> {
  const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, now: NOW });
  if (!key) throw new Error('no key issued');
  return key.id;
}

afterAll(async () => {
  await table?.drop();
});

const eventsPartition = (projectId: string) => keyOf.event(projectId, 'new_executor', '').pk;

/** Every event item of a project, each checked against the contract the delivery path reads it by. */
async function eventItems(projectId: string): Promise<EventItem[]> {
  const { Items = [] } = await table.db.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :events)',
      ExpressionAttributeValues: { ':pk': eventsPartition(projectId), ':events': 'EVENT#' },
      ConsistentRead: true,
    }),
  );
  // Conditions a summary stood for are kept beside them as dedup memory (entity EVENT_COALESCED), not posted.
  return Items.filter((item) => item.entity !== 'EVENT_COALESCED').map((item) => {
    expect(item).toMatchObject({ pk: eventsPartition(projectId), entity: 'EVENT', projectId, ttl: expect.any(Number), occurredAt: expect.any(Number) });
    const name = item.name as EventItem['name'];
    expect(EVENT_DATA[name].safeParse(item.data)).toEqual({ success: true, data: item.data });
    return item as EventItem;
  });
}

const execution = (projectId: string, fields: Record<string, unknown> = {}) => ({ kind: 'execution', projectId, executor: 'Synapse X', at: NOW, ...fields });
const validation = (projectId: string, keyId: string, fields: Record<string, unknown> = {}) => ({
  kind: 'validation',
  projectId,
  keyId,
  result: 'ok',
  executor: 'Synapse X',
  fingerprint: FP(1),
  at: NOW,
  ...fields,
});
const times = <T>(n: number, make: (i: number) => T) => Array.from({ length: n }, (_, i) => make(i));

describe('what ingest refuses before writing anything', () => {
  const itemsIn = async (pk: string) =>
    (
      await table.db.send(
        new QueryCommand({ TableName: table.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }),
      )
    ).Items ?? [];

  it("refuses records of a project that does not exist and validations of a key that is not the project's, writing nothing for them", async () => {
    const projectId = await newProject();
    const keyId = await newKey(projectId);
    const othersKey = await newKey(await newProject());
    const ghost = 'prj_neverexisted';
    const result = await ingestTelemetry(
      store,
      [
        execution(ghost, { scriptHash: 'abcdef01' }),
        validation(ghost, keyId),
        validation(projectId, othersKey),
        validation(projectId, 'key_forged'),
        execution(projectId),
      ],
      NOW,
    );
    expect(result).toMatchObject({ accepted: 1, rejected: 4 });
    expect(result.rejections).toEqual([
      { index: 0, reason: `project ${ghost} does not exist` },
      { index: 1, reason: `project ${ghost} does not exist` },
      { index: 2, reason: `key ${othersKey} is not a key of project ${projectId}` },
      { index: 3, reason: `key key_forged is not a key of project ${projectId}` },
    ]);
    expect(result.events.every((event) => event.projectId === projectId)).toBe(true);
    for (const pk of [
      keyOf.executor(ghost, 'x').pk,
      keyOf.event(ghost, 'new_executor', 'x').pk,
      ...[keyId, othersKey, 'key_forged'].map((id) => keyOf.validationWindow(id, projectId, 0).pk),
    ]) {
      expect(await itemsIn(pk)).toEqual([]);
    }
    expect((await store.executionsOn('2023-11-14')).has(ghost)).toBe(false);
  });

  it(`refuses records dated more than ${MAX_RECORD_AGE_SECONDS / DAY} days back or more than ${MAX_CLOCK_SKEW_SECONDS} s ahead, and keeps the rest`, async () => {
    const projectId = await newProject();
    const edges = [NOW - MAX_RECORD_AGE_SECONDS - 1, NOW - MAX_RECORD_AGE_SECONDS, NOW + MAX_CLOCK_SKEW_SECONDS, NOW + MAX_CLOCK_SKEW_SECONDS + 1];
    const result = await ingestTelemetry(
      store,
      edges.map((at, i) => execution(projectId, { executor: `edge-${i}`, at })),
      NOW,
    );
    expect(result).toMatchObject({ accepted: 2, rejected: 2 });
    expect(result.rejections.map((rejection) => rejection.index)).toEqual([0, 3]);
    expect(result.events.map((event) => event.dedupKey).sort()).toEqual([`edge-1#${utcDate(edges[1] ?? 0)}`, `edge-2#${utcDate(edges[2] ?? 0)}`]);
  });
});

describe('execution_drop (daily detector)', () => {
  // Days of their own: the daily detector reads every project's counter of a day.
  const today = '2023-06-10';
  const day = dayStart('2023-06-09') ?? 0;
  const dayBefore = dayStart('2023-06-08') ?? 0;
  const drops = async (projectId: string) => (await eventItems(projectId)).filter((item) => item.name === 'execution_drop').map((item) => item.data);

  it('fires above a 30 % fall only, never from an empty day before, and once per day however often it runs', async () => {
    const [exact, above, fromZero, toZero] = await Promise.all([newProject(), newProject(), newProject(), newProject()]);
    // Ingested as the day goes: a record more than 8 days old is refused.
    const ingest = (projectId: string, count: number, at: number) =>
      ingestTelemetry(
        store,
        times(count, () => execution(projectId, { at: at + 3600 })),
        at + 7200,
      );
    await Promise.all([ingest(exact, 100, dayBefore), ingest(exact, 70, day), ingest(toZero, 3, dayBefore), ingest(fromZero, 5, day)]);
    await store.addExecutions({ projectId: above, date: '2023-06-08', executions: 10_000 });
    await store.addExecutions({ projectId: above, date: '2023-06-09', executions: 6_999 });

    const first = await runDailyDetection(store, today, NOW);
    expect(first.date).toBe('2023-06-09');
    expect(first.projectsJudged).toBe(3);
    expect(first.events.sort((a, b) => a.projectId.localeCompare(b.projectId))).toEqual(
      [above, toZero].sort().map((projectId) => ({ name: 'execution_drop', projectId, dedupKey: '2023-06-09' })),
    );
    expect(await drops(above)).toEqual([{ date: '2023-06-09', executions: 6_999, previousExecutions: 10_000, dropPercent: 30.01 }]);
    expect(await drops(toZero)).toEqual([{ date: '2023-06-09', executions: 0, previousExecutions: 3, dropPercent: 100 }]);
    expect(await drops(exact)).toEqual([]);
    expect(await drops(fromZero)).toEqual([]);

    const rerun = await runDailyDetection(store, today, NOW + 60);
    expect(rerun.events).toEqual([]);
    expect(await drops(above)).toHaveLength(1);
  });
});

describe('new_executor (at ingest)', () => {
  it('fires for a first sighting, not after exactly 7 days away, and again after 7 days and 1 second', async () => {
    const projectId = await newProject();
    const t0 = NOW - 30 * DAY;
    const t1 = t0 + NEW_EXECUTOR_ABSENCE_SECONDS;
    const t2 = t1 + NEW_EXECUTOR_ABSENCE_SECONDS + 1;
    // Each reported as it happens: a record more than 8 days old is refused.
    const first = await ingestTelemetry(store, [execution(projectId, { at: t0 })], t0 + 60);
    const exactlyWeek = await ingestTelemetry(store, [execution(projectId, { at: t1 })], t1 + 60);
    const weekAndSecond = await ingestTelemetry(store, [execution(projectId, { at: t2 })], t2 + 60);

    expect(first.events).toEqual([{ name: 'new_executor', projectId, dedupKey: 'Synapse X#2023-10-15' }]);
    expect(exactlyWeek.events).toEqual([]);
    expect(weekAndSecond.events).toHaveLength(1);
    expect((await eventItems(projectId)).map((item) => item.data)).toEqual([
      { executor: 'Synapse X', firstSeenAt: t0, previouslySeenAt: null },
      { executor: 'Synapse X', firstSeenAt: t2, previouslySeenAt: t1 },
    ]);
  });

  it('fires once when the same appearance is reported twice at the same time', async () => {
    const projectId = await newProject();
    const record = execution(projectId, { executor: 'KRNL' });
    const results = await Promise.all([ingestTelemetry(store, [record], NOW), ingestTelemetry(store, [record], NOW)]);
    expect(results.flatMap((result) => result.events)).toHaveLength(1);
    expect(await eventItems(projectId)).toHaveLength(1);
    expect((await ingestTelemetry(store, [record], NOW)).events).toEqual([]);
  });

  it('keeps executors of different projects apart', async () => {
    const [a, b] = await Promise.all([newProject(), newProject()]);
    await ingestTelemetry(store, [execution(a, { executor: 'Delta' })], NOW);
    expect((await ingestTelemetry(store, [execution(b, { executor: 'Delta' })], NOW)).events).toEqual([
      { name: 'new_executor', projectId: b, dedupKey: 'Delta#2023-11-14' },
    ]);
  });
});

describe('key_abuse (at ingest)', () => {
  const patternsOf = async (projectId: string) =>
    (await eventItems(projectId))
      .filter((item) => item.name === 'key_abuse')
      .map((item) => item.data as { keyId: string; pattern: string; count: number; threshold: number });

  it('fires many_fingerprints when a sixth distinct fingerprint joins the hour, across batches, once', async () => {
    const projectId = await newProject();
    const keyId = await newKey(projectId);
    const five = await ingestTelemetry(
      store,
      times(5, (i) => validation(projectId, keyId, { fingerprint: FP(i + 1), at: NOW - 600 })),
      NOW,
    );
    expect(five.events).toEqual([]);
    const sixth = await ingestTelemetry(
      store,
      [validation(projectId, keyId, { fingerprint: FP(6) }), validation(projectId, keyId, { fingerprint: FP(1) })],
      NOW,
    );
    expect(sixth.events).toEqual([{ name: 'key_abuse', projectId, dedupKey: `${keyId}#many_fingerprints#2023-11-14T22` }]);
    const seventh = await ingestTelemetry(store, [validation(projectId, keyId, { fingerprint: FP(7) })], NOW);
    expect(seventh.events).toEqual([]);
    expect(await patternsOf(projectId)).toEqual([{ keyId, pattern: 'many_fingerprints', count: 6, threshold: 5, windowSeconds: 3600 }]);
  });

  it('counts a validation standing for several refusals (count) as that many: one record of 12 revoked fires revoked_key_burst', async () => {
    const projectId = await newProject();
    const keyId = await newKey(projectId);
    const summary = await ingestTelemetry(store, [validation(projectId, keyId, { result: 'revoked', count: 12 })], NOW);
    expect(summary.events).toHaveLength(1);
    expect(await patternsOf(projectId)).toEqual([{ keyId, pattern: 'revoked_key_burst', count: 12, threshold: 10, windowSeconds: 3600 }]);
  });

  it('fires revoked_key_burst at the tenth revoked validation of an hour, once per hour', async () => {
    const projectId = await newProject();
    const keyId = await newKey(projectId);
    const revoked = (n: number, at: number) => times(n, () => validation(projectId, keyId, { result: 'revoked', at }));
    expect((await ingestTelemetry(store, revoked(9, NOW), NOW)).events).toEqual([]);
    expect((await ingestTelemetry(store, revoked(1, NOW), NOW)).events).toHaveLength(1);
    expect((await ingestTelemetry(store, revoked(5, NOW), NOW)).events).toEqual([]);
    const nextHour = await ingestTelemetry(store, revoked(10, NOW - 3600), NOW);
    expect(nextHour.events).toEqual([{ name: 'key_abuse', projectId, dedupKey: `${keyId}#revoked_key_burst#2023-11-14T21` }]);
  });

  it('fires expired_key_burst for ten expired validations in one batch', async () => {
    const projectId = await newProject();
    const keyId = await newKey(projectId);
    const result = await ingestTelemetry(
      store,
      times(10, () => validation(projectId, keyId, { result: 'expired' })),
      NOW,
    );
    expect(result.events).toEqual([{ name: 'key_abuse', projectId, dedupKey: `${keyId}#expired_key_burst#2023-11-14T22` }]);
  });

  describe('over_max_uses, read against the key record', () => {
    let projectId: string;

    beforeAll(async () => {
      const owner = await seedOwner(table.stores);
      projectId = await table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: 'Capped', plan: 'business', now: NOW });
    });

    const issueCappedKey = async (maxUses: number, currentUses: number) => {
      const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses, now: NOW });
      if (!key) throw new Error('no key issued');
      await table.db.send(
        new UpdateCommand({
          TableName: table.tableName,
          Key: keyOf.key(key.id),
          UpdateExpression: 'SET current_uses = :u',
          ExpressionAttributeValues: { ':u': currentUses },
        }),
      );
      return key.id;
    };

    it('fires when an hour has max_uses + 1 ok validations, not max_uses', async () => {
      const id = await issueCappedKey(3, 0);
      expect(
        (
          await ingestTelemetry(
            store,
            times(3, () => validation(projectId, id)),
            NOW,
          )
        ).events,
      ).toEqual([]);
      const fourth = await ingestTelemetry(store, [validation(projectId, id)], NOW);
      expect(fourth.events).toEqual([{ name: 'key_abuse', projectId, dedupKey: `${id}#over_max_uses#2023-11-14T22` }]);
      expect((await patternsOf(projectId)).find((data) => data.keyId === id)).toMatchObject({ count: 4, threshold: 3 });
    });

    it('fires on an over_limit validation when current_uses = max_uses, not max_uses - 1', async () => {
      const oneLeft = await issueCappedKey(3, 2);
      expect((await ingestTelemetry(store, [validation(projectId, oneLeft, { result: 'over_limit' })], NOW)).events).toEqual([]);
      const spent = await issueCappedKey(3, 3);
      const result = await ingestTelemetry(store, [validation(projectId, spent, { result: 'over_limit' })], NOW);
      expect(result.events).toEqual([{ name: 'key_abuse', projectId, dedupKey: `${spent}#over_max_uses#2023-11-14T22` }]);
    });

    it('ignores the use cap of a key reported under another project', async () => {
      const id = await issueCappedKey(1, 1);
      const otherProject = await newProject();
      const result = await ingestTelemetry(
        store,
        times(3, () => validation(otherProject, id, { result: 'over_limit' })),
        NOW,
      );
      expect(result.events).toEqual([]);
    });
  });
});

describe('clone_detected (at ingest)', () => {
  const hashes = async (projectId: string) =>
    (await eventItems(projectId)).filter((item) => item.name === 'clone_detected').map((item) => item.data as SingleEventData<'clone_detected'>);

  it("fires once for each new hash but the version's uploaded one (its original), whatever came first", async () => {
    const projectId = await newProject();
    // The versions' uploaded hashes are the originals: ver_1's is aaaa1111, ver_2's dddd4444.
    for (const [id, sha256] of [
      ['ver_1', 'aaaa1111'],
      ['ver_2', 'dddd4444'],
    ] as const) {
      await table.stores.dashboard.uploadVersion({ id, projectId, sizeBytes: 64, sha256, notes: '', now: NOW });
    }
    const run = (hash: string, fields: Record<string, unknown> = {}) =>
      ingestTelemetry(store, [execution(projectId, { scriptHash: hash, versionId: 'ver_1', ...fields })], NOW);
    expect((await run('aaaa1111')).events.filter((e) => e.name === 'clone_detected')).toEqual([]);
    expect((await run('aaaa1111')).events).toEqual([]);
    expect((await run('bbbb2222', { at: NOW + 1 })).events).toEqual([{ name: 'clone_detected', projectId, dedupKey: `${projectId}#ver_1#bbbb2222` }]);
    expect((await run('bbbb2222', { at: NOW + 2 })).events).toEqual([]);
    expect((await run('cccc3333', { at: NOW + 3 })).events).toHaveLength(1);
    // Another version has an original of its own.
    expect((await run('dddd4444', { versionId: 'ver_2' })).events).toEqual([]);
    expect(await hashes(projectId)).toEqual([
      { scriptId: projectId, versionId: 'ver_1', newHash: 'bbbb2222', originalHash: 'aaaa1111', distinctHashes: 2, sampleHashes: ['aaaa1111', 'bbbb2222'] },
      { scriptId: projectId, versionId: 'ver_1', newHash: 'cccc3333', originalHash: 'aaaa1111', distinctHashes: 3, sampleHashes: ['aaaa1111', 'cccc3333'] },
    ]);
  });

  it('fires exactly one event when two new hashes of a new script arrive at once', async () => {
    const projectId = await newProject();
    const record = (hash: string) => execution(projectId, { scriptId: 'scr_1', scriptHash: hash });
    await Promise.all([ingestTelemetry(store, [record('eeee5555')], NOW), ingestTelemetry(store, [record('ffff6666')], NOW)]);
    // Which of the two counts as the original depends on which ingest tallied first; either way one event.
    const events = await hashes(projectId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ scriptId: 'scr_1', versionId: null, distinctHashes: 2 });
    expect(new Set([events[0]?.newHash, events[0]?.originalHash])).toEqual(new Set(['eeee5555', 'ffff6666']));
  });

  it('fires one event per new hash when many ingests report the same new hashes at once, and counts each hash once', async () => {
    const projectId = await newProject();
    const script = { projectId, scriptId: 'scr_2', versionId: null };
    // Four hashes: one original and as many clones as the hourly alert budget posts one by one.
    const reported = times(ALERTS_PER_HOUR + 1, (i) => (0xa0000000 + i).toString(16));
    const record = (hash: string) => execution(projectId, { scriptId: script.scriptId, scriptHash: hash });
    // Six ingests, each reporting all the hashes in its own order: one original, the others clones, each fired once.
    const results = await Promise.all(times(6, (i) => ingestTelemetry(store, [...reported.slice(i), ...reported.slice(0, i)].map(record), NOW)));
    const fired = results.flatMap((result) => result.events).filter((event) => event.name === 'clone_detected');
    // Once each: posted, or (when concurrent ingests spent the hour's slots on the same clones) held for the digest.
    expect(fired.reduce((sum, event) => sum + (event.held ?? 1), 0)).toBe(ALERTS_PER_HOUR);
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :clones)',
        ExpressionAttributeValues: { ':pk': eventsPartition(projectId), ':clones': 'EVENT#clone_detected#' },
        ConsistentRead: true,
      }),
    );
    const events = Items.map((item) => item.data as SingleEventData<'clone_detected'>);
    expect(events).toHaveLength(ALERTS_PER_HOUR);
    expect((await hashes(projectId)).length).toBeLessThanOrEqual(ALERTS_PER_HOUR);
    const original = events[0]?.originalHash;
    expect(events.every((data) => data.originalHash === original)).toBe(true);
    expect(new Set(events.map((data) => data.newHash))).toEqual(new Set(reported.filter((hash) => hash !== original)));
    // Counted once each, by the one write that created the hash's record.
    const { Item: tally } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.scriptTally(script), ConsistentRead: true }));
    expect(tally).toMatchObject({ original, distinctHashes: ALERTS_PER_HOUR + 1 });
  });

  it('fires exactly one event when a batch brings the first two hashes of a script', async () => {
    const projectId = await newProject();
    const result = await ingestTelemetry(
      store,
      [execution(projectId, { scriptHash: '12345678', at: NOW - 5 }), execution(projectId, { scriptHash: '87654321' })],
      NOW,
    );
    expect(result.events.filter((event) => event.name === 'clone_detected')).toEqual([
      { name: 'clone_detected', projectId, dedupKey: `${projectId}##87654321` },
    ]);
  });
});

describe('alert storms (more than 5 of one event for one project in one batch)', () => {
  /** Items of a project's conditions a summary stood for: dedup memory, never posted. */
  async function coalescedItems(projectId: string) {
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': eventsPartition(projectId) },
        ConsistentRead: true,
      }),
    );
    return Items.filter((item) => item.entity === 'EVENT_COALESCED');
  }

  it('makes 500 new executors in one batch one summary event with the count and a sample, and remembers each', async () => {
    const projectId = await newProject();
    const result = await ingestTelemetry(
      store,
      times(500, (i) => execution(projectId, { executor: `storm-${i}`, at: NOW - 500 + i })),
      NOW,
    );
    expect(result.events).toEqual([{ name: 'new_executor', projectId, dedupKey: expect.stringMatching(/^summary#/), summarizes: 500 }]);
    const [summary, ...others] = await eventItems(projectId);
    expect(others).toEqual([]);
    expect(summary?.data).toMatchObject({
      count: 500,
      firstAt: NOW - 500,
      lastAt: NOW - 1,
      sample: times(5, (i) => ({ executor: `storm-${i}`, firstSeenAt: NOW - 500 + i, previouslySeenAt: null })),
    });
    const remembered = await coalescedItems(projectId);
    expect(remembered).toHaveLength(500);
    expect(new Set(remembered.map((item) => item.summarizedBy))).toEqual(new Set([result.events[0]?.dedupKey]));
  });

  it('fires 5 alone (the hourly budget posts 3, holds 2 for the digest) and summarizes 6', async () => {
    const [five, six] = await Promise.all([newProject(), newProject()]);
    const batch = (projectId: string, n: number) => times(n, (i) => execution(projectId, { executor: `n-${i}` }));
    expect((await ingestTelemetry(store, batch(five, 5), NOW)).events.map((event) => event.summarizes ?? event.held)).toEqual([
      undefined,
      undefined,
      undefined,
      2,
    ]);
    expect((await ingestTelemetry(store, batch(six, 6), NOW)).events.map((event) => event.summarizes)).toEqual([6]);
  });

  it('fires neither the conditions nor the summary again when the batch is retried, even after failing between the two', async () => {
    const projectId = await newProject();
    const events = times(8, (i) => detectNewExecutor({ projectId, executor: `retry-${i}`, lastSeenAt: null, sightings: [NOW] }).events).flat();
    // The first attempt wrote its summary and died before remembering any condition.
    expect(await store.putEvent(summarize(events), NOW)).toBe(true);
    expect(await fireEvents(store, events, NOW)).toEqual([]);
    expect(await coalescedItems(projectId)).toHaveLength(8);
    expect(await fireEvents(store, events, NOW)).toEqual([]);
    expect(await eventItems(projectId)).toHaveLength(1);
  });

  it('lets a later condition fire by itself, and a later storm make a summary of its own', async () => {
    const projectId = await newProject();
    await ingestTelemetry(
      store,
      times(10, (i) => execution(projectId, { executor: `first-${i}` })),
      NOW,
    );
    const single = await ingestTelemetry(store, [execution(projectId, { executor: 'later' })], NOW);
    expect(single.events).toEqual([{ name: 'new_executor', projectId, dedupKey: 'later#2023-11-14' }]);
    const storm = await ingestTelemetry(
      store,
      times(10, (i) => execution(projectId, { executor: `second-${i}` })),
      NOW,
    );
    expect(storm.events.map((event) => event.summarizes)).toEqual([10]);
    expect((await eventItems(projectId)).filter((item) => item.name === 'new_executor')).toHaveLength(3);
  });

  it('summarizes key_abuse across many keys of one project', async () => {
    const projectId = await newProject();
    const keys = await Promise.all(times(7, () => newKey(projectId)));
    const result = await ingestTelemetry(
      store,
      keys.flatMap((keyId) => times(10, () => validation(projectId, keyId, { result: 'revoked' }))),
      NOW,
    );
    expect(result.events).toEqual([{ name: 'key_abuse', projectId, dedupKey: expect.stringMatching(/^summary#/), summarizes: 7 }]);
    const [summary] = await eventItems(projectId);
    expect(summary?.data).toMatchObject({ count: 7, sample: expect.arrayContaining([expect.objectContaining({ pattern: 'revoked_key_burst' })]) });
  });

  it('summarizes clone_detected when a batch brings many new hashes of one project', async () => {
    const projectId = await newProject();
    const result = await ingestTelemetry(
      store,
      times(9, (i) => execution(projectId, { scriptHash: (0xc0000000 + i).toString(16), at: NOW - 9 + i })),
      NOW,
    );
    expect(result.events.filter((event) => event.name === 'clone_detected')).toEqual([
      { name: 'clone_detected', projectId, dedupKey: expect.stringMatching(/^summary#/), summarizes: 8 },
    ]);
  });
});

describe('dashboard telemetry commands', () => {
  let projectId: string;
  let context: TelemetryContext;
  let clock = NOW;

  beforeAll(async () => {
    const owner = await seedOwner(table.stores);
    projectId = await table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: 'CLI', plan: 'business', now: NOW });
    context = { stores: { telemetry: store }, now: () => clock };
  });

  const run = <Input, Result extends object>(command: TelemetryCommand<Input, Result>, argv: string[]) =>
    command.run(context, command.validate(parseFlags(command.name, argv, command.flags)));

  it('telemetry execution writes N executions and reports the events it fired', async () => {
    const result = await run(telemetryExecution, ['--project', projectId, '--executor', 'Fluxus', '--count', '5', '--hash', 'abcdef01']);
    expect(result).toEqual({ accepted: 5, events: [{ name: 'new_executor', projectId, dedupKey: 'Fluxus#2023-11-14' }] });
    expect((await store.executionsOn('2023-11-14')).get(projectId)).toBe(5);
  });

  it('telemetry validation without --fingerprint sends N different clients, with --fingerprint one client', async () => {
    const [one, many] = [await newKey(projectId), await newKey(projectId)];
    const oneClient = await run(telemetryValidation, [
      '--project',
      projectId,
      '--key',
      one,
      '--result',
      'ok',
      '--executor',
      'Fluxus',
      '--fingerprint',
      'client-a',
      '--count',
      '6',
    ]);
    expect(oneClient).toEqual({ accepted: 6, events: [] });
    const manyClients = await run(telemetryValidation, ['--project', projectId, '--key', many, '--result', 'ok', '--executor', 'Fluxus', '--count', '6']);
    expect(manyClients.events).toEqual([{ name: 'key_abuse', projectId, dedupKey: `${many}#many_fingerprints#2023-11-14T22` }]);
  });

  it('telemetry validation refuses a key the project does not have, and writes nothing', async () => {
    await expect(run(telemetryValidation, ['--project', projectId, '--key', 'key_nope', '--result', 'ok', '--executor', 'Fluxus'])).rejects.toThrow(
      `Key key_nope is not a key of project ${projectId}: issue one with "keys issue"`,
    );
  });

  it('detect daily judges the day before --date', async () => {
    clock = NOW + 2 * DAY;
    const result = await run(detectDaily, ['--date', '2023-11-16']);
    expect(result).toEqual({
      date: '2023-11-15',
      projectsJudged: expect.any(Number),
      events: expect.arrayContaining([{ name: 'execution_drop', projectId, dedupKey: '2023-11-15' }]),
    });
    expect((await run(detectDaily, ['--date', '2023-11-16'])).events).toEqual([]);
  });
});
