import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoConfig } from '#adapters/client';
import { type EventItem, keyOf } from '#adapters/layout';
import { createStores } from '#adapters/stores';
import { QueueTelemetrySink, TELEMETRY_QUEUE } from '#adapters/telemetry-queue';
import { AddressTally } from '#domain/address-tally';
import { runDailyDetection } from '#domain/analytics/daily';
import { KEY_ABUSE_THRESHOLDS } from '#domain/analytics/detectors';
import type { IngestResult } from '#domain/analytics/ingest';
import { newId } from '#domain/ids';
import { LOADER_LIMITS } from '#domain/key-check';
import type { TelemetrySink } from '#domain/ports';
import { revokeBulk, revokeKey } from '#domain/project-api';
import { rateWindowAt } from '#domain/rate-limit';
import { REFUSAL_MEMORY, RefusalMemory } from '#domain/refusal-memory';
import { utcDate } from '#domain/time';
import { createIngestQueueHandler } from '#functions/ingest-queue';
import { createValidateHandler } from '#http/loader-validate';
import { VALIDATE_ROUTE } from '#http/public-routes';
import { InProcessQueue } from '#local/in-process-queue';
import { buildLoaderEvent } from '#local/proxy-event';
import { type CheckStreamIngest, startCheckStreamIngest } from '#local/telemetry-pipeline';
import type { LoaderCheckRequest } from '#schemas/loader';
import { invoke, type Reply } from '#test-support/api-harness';
import { capacityRecordingClient } from '#test-support/consumed-capacity';
import { createTestTable, dynamodbEndpoint, FIXED_NOW, NO_DEADLINE, type SeededOwner, seedOwner, type TestTable } from '#test-support/fixtures';

/**
 * The loader key check (DESIGN.md "Loader key check") on DynamoDB Local: the handler with the real stores, each
 * check's telemetry through the same queue sink and queue consumer the local stack runs, into ingest and the
 * detectors. Time is injected, so a minute's window or an hour's abuse window is chosen, never waited for.
 */

const DAY = 86_400;
/** The start of a minute (FIXED_NOW is 20 s into one): tests place checks within a window by offset from here. */
const MINUTE = FIXED_NOW - (FIXED_NOW % 60);
const FP = (n: number) => n.toString(16).padStart(64, '0');
const HASH = (c: string) => c.repeat(64);
const silent = () => new Logger({ serviceName: 'loader-check', logLevel: 'SILENT' });
const noTelemetry: TelemetrySink = { report: async () => undefined };

let table: TestTable;
let owner: SeededOwner;
/** Each test checks from its own address, so the per-address limit of one never counts another's checks. */
let addresses = 0;

beforeAll(async () => {
  // With its stream: counted checks' telemetry comes off it, as in AWS.
  table = await createTestTable('loader-check', { stream: true });
  owner = await seedOwner(table.stores);
});

const streamIngests: CheckStreamIngest[] = [];

afterAll(async () => {
  await Promise.all(streamIngests.map((ingest) => ingest.stop()));
  await table?.drop();
});

const newProject = () => table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: 'Loader Script', plan: 'business', now: FIXED_NOW });

async function issueKey(projectId: string, fields: { maxUses?: number | null; expiresAt?: number; watermark?: string } = {}) {
  const [key] = await table.stores.dashboard.issueKeys({
    projectId,
    count: 1,
    tier: 'standard',
    maxUses: fields.maxUses ?? null,
    expiresAt: fields.expiresAt,
    watermark: fields.watermark,
    now: FIXED_NOW,
  });
  if (!key) throw new Error('no key issued');
  return key;
}

/** The key item as the table holds it, read strongly consistent. */
async function storedKey(keyId: string) {
  const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.key(keyId), ConsistentRead: true }));
  return Item;
}

/** A check's body: the fields a test leaves out get a default fingerprint and executor. */
type CheckBody = Pick<LoaderCheckRequest, 'project_id' | 'key'> & Partial<LoaderCheckRequest>;

/**
 * A loader check handler as one Lambda container runs it: its own store instances (so its memory of open
 * windows is its own) on the shared table, at an injected time, from one client address.
 */
function loaderContainer(options: { telemetry?: TelemetrySink; now?: number; sourceIp?: string; db?: TestTable['db'] } = {}) {
  const stores = createStores(options.db ?? table.db, table.tableName);
  let now = options.now ?? FIXED_NOW;
  // A fresh address per container, never one a test names (those are in 203.0.113.0/24): the races make thousands
  // of checks at one fixed minute, which must not count against another test's address window.
  addresses += 1;
  const sourceIp = options.sourceIp ?? `10.${(addresses >> 8) & 255}.${addresses & 255}.1`;
  const handler = createValidateHandler({
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: options.telemetry ?? noTelemetry,
    now: () => now,
    logger: silent(),
  });
  return {
    setNow: (at: number) => {
      now = at;
    },
    check: (body: CheckBody): Promise<Reply> =>
      invoke(
        handler,
        buildLoaderEvent({
          route: VALIDATE_ROUTE,
          body: JSON.stringify({ fingerprint: FP(1), executor: 'Wave', ...body }),
          requestId: randomUUID(),
          timeEpoch: now * 1000,
          sourceIp,
        }),
      ),
  };
}

const codeOf = (reply: Reply) => (reply.status === 200 ? String(reply.body.code) : `HTTP ${reply.status}`);

describe('concurrent checks of a key with a use cap', () => {
  it('eight concurrent checks of a key at max_uses - 1 admit exactly one: one KEY_VALID with uses_left 0, seven KEY_OVER_LIMIT, current_uses ends at max_uses', async () => {
    const projectId = await newProject();
    const { id, key } = await issueKey(projectId, { maxUses: 5 });
    const first = loaderContainer();
    const before: unknown[] = [];
    for (let i = 0; i < 4; i++) before.push((await first.check({ project_id: projectId, key })).body.uses_left);
    expect(before).toEqual([4, 3, 2, 1]);

    // Each concurrent check on a container of its own, as a burst spreads over Lambda instances.
    const replies = await Promise.all(Array.from({ length: 8 }, () => loaderContainer().check({ project_id: projectId, key })));
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    const valid = replies.filter((reply) => reply.body.code === 'KEY_VALID');
    expect(valid.map((reply) => reply.body)).toEqual([{ valid: true, code: 'KEY_VALID', key_id: id, expires_at: expect.any(Number), uses_left: 0 }]);
    expect(replies.filter((reply) => reply.body.code === 'KEY_OVER_LIMIT').map((reply) => reply.body)).toEqual(
      Array(7).fill({ valid: false, code: 'KEY_OVER_LIMIT' }),
    );
    expect(await storedKey(id)).toMatchObject({ current_uses: 5, max_uses: 5 });
  });

  it('twelve concurrent checks of an unused key with max_uses 5 admit exactly five, each told a different uses_left from 4 down to 0', async () => {
    const projectId = await newProject();
    const { id, key } = await issueKey(projectId, { maxUses: 5 });
    const replies = await Promise.all(Array.from({ length: 12 }, () => loaderContainer().check({ project_id: projectId, key })));
    const usesLeft = replies.filter((reply) => reply.body.code === 'KEY_VALID').map((reply) => reply.body.uses_left);
    expect(usesLeft.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(replies.filter((reply) => reply.body.code === 'KEY_OVER_LIMIT')).toHaveLength(7);
    expect(await storedKey(id)).toMatchObject({ current_uses: 5 });
  });
});

/**
 * Checks of `keys` (round robin) in `workers` concurrent loops while `revoke` runs: the revoke starts once
 * `startRevokeAfter` checks have started, and the loops stop `checksAfter` checks after it resolved. Each check
 * takes a sequence number when it starts, so "started after the revoke resolved" is the order of events in this
 * process, not a clock.
 */
async function checksRacing(options: {
  check: (seq: number) => Promise<Reply>;
  revoke: () => Promise<unknown>;
  startRevokeAfter: number;
  checksAfter: number;
  workers: number;
}) {
  const { check, revoke, startRevokeAfter, checksAfter, workers } = options;
  const answers: { seq: number; code: string }[] = [];
  let started = 0;
  let revokedAt: number | undefined;
  let revoking: Promise<void> | undefined;
  let failed = false;
  // A bound besides the stop condition: a revoke that never resolves ends the loops instead of hanging them.
  const maxChecks = startRevokeAfter + checksAfter + 200;
  const loop = async () => {
    while (!failed && started < maxChecks && (revokedAt === undefined || started < revokedAt + checksAfter)) {
      const seq = started++;
      if (seq === startRevokeAfter) {
        revoking = revoke().then(
          () => {
            revokedAt = started;
          },
          (error: unknown) => {
            failed = true;
            throw error;
          },
        );
      }
      answers.push({ seq, code: codeOf(await check(seq)) });
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
  await revoking;
  if (revokedAt === undefined) throw new Error(`the revoke did not resolve within ${maxChecks} checks`);
  return { answers: answers.sort((a, b) => a.seq - b.seq), revokedAt };
}

/**
 * Every check that started once the revoke had resolved answered KEY_REVOKED, and there were `checksAfter` of them.
 * The revoke starts only once 12 checks started (6 loops), so at least 7 had answered before it: both codes show.
 */
function expectRevokedFromThenOn(answers: { seq: number; code: string }[], revokedAt: number, checksAfter: number) {
  const after = answers.filter((answer) => answer.seq >= revokedAt);
  expect(after.length).toBeGreaterThanOrEqual(checksAfter);
  expect(new Set(after.map((answer) => answer.code))).toEqual(new Set(['KEY_REVOKED']));
  expect(new Set(answers.map((answer) => answer.code))).toEqual(new Set(['KEY_VALID', 'KEY_REVOKED']));
}

describe('a revoke racing a stream of checks', () => {
  it('after revokeKey resolved, every check that starts answers KEY_REVOKED, and only the valid answers counted a use', async () => {
    const projectId = await newProject();
    const project = await table.stores.projects.getProject(projectId);
    const { id, key } = await issueKey(projectId);
    const container = loaderContainer();
    const trail = { log: table.stores.audit, actor: { tokenId: owner.tokenId, requestId: 'req-race' } };
    const { answers, revokedAt } = await checksRacing({
      check: () => container.check({ project_id: projectId, key }),
      revoke: () => revokeKey(table.stores.projects, project!, id, FIXED_NOW, trail),
      startRevokeAfter: 12,
      checksAfter: 30,
      workers: 6,
    });
    expectRevokedFromThenOn(answers, revokedAt, 30);
    expect(await storedKey(id)).toMatchObject({ revoked: 1, current_uses: answers.filter((answer) => answer.code === 'KEY_VALID').length });
  });

  it('after revokeBulk resolved, every check of any key of the watermark that starts answers KEY_REVOKED, and a key without it still answers KEY_VALID', async () => {
    const projectId = await newProject();
    const project = await table.stores.projects.getProject(projectId);
    const watermark = 'feedfacecafebeef';
    const marked = [await issueKey(projectId, { watermark }), await issueKey(projectId, { watermark }), await issueKey(projectId, { watermark })];
    const other = await issueKey(projectId, { watermark: '0123456789abcdef' });
    const container = loaderContainer();
    const { answers, revokedAt } = await checksRacing({
      check: (seq) => container.check({ project_id: projectId, key: marked[seq % marked.length]!.key }),
      revoke: async () =>
        expect(await revokeBulk(table.stores.projects, project!, watermark, FIXED_NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 3, complete: true }),
      startRevokeAfter: 12,
      checksAfter: 45,
      workers: 6,
    });
    expectRevokedFromThenOn(answers, revokedAt, 45);
    expect((await container.check({ project_id: projectId, key: other.key })).body.code).toBe('KEY_VALID');
  });
});

describe('the per-key limit on the real store', () => {
  const limit = LOADER_LIMITS.perKeyPerMinute;
  // Enough at once to race the window's writes; all 125 at once made DynamoDB Local on a busy 2-core machine fail
  // writes to the one key item after the SDK's retries (500s), which DynamoDB itself would serialize.
  const IN_FLIGHT = 25;

  it(`${limit + 5} checks of a key within one minute, ${IN_FLIGHT} at a time from separate containers, admit exactly ${limit}; the rest get 429 with Retry-After and count no use`, async () => {
    const projectId = await newProject();
    const { id, key } = await issueKey(projectId);
    // A minute of its own: no other test's checks share its address windows.
    const now = MINUTE + 5 * 60 + 10;
    // Containers of their own (their first write opens the window and fails for all but one) and one shared.
    const shared = loaderContainer({ now });
    const containers = Array.from({ length: limit + 5 }, (_, i) => (i % 2 === 0 ? loaderContainer({ now, sourceIp: '203.0.113.250' }) : shared));
    const replies: Reply[] = [];
    for (let i = 0; i < containers.length; i += IN_FLIGHT) {
      replies.push(...(await Promise.all(containers.slice(i, i + IN_FLIGHT).map((container) => container.check({ project_id: projectId, key })))));
    }
    // Counted by answer, so a failure shows every answer there was.
    const answers = replies.map((reply) => (reply.status === 200 ? codeOf(reply) : `${reply.status} ${JSON.stringify(reply.body)}`));
    expect(Object.fromEntries([...new Set(answers)].map((answer) => [answer, answers.filter((other) => other === answer).length]))).toEqual({
      KEY_VALID: limit,
      [`429 ${JSON.stringify({ error: `Too many checks of this key: at most ${limit} per minute` })}`]: 5,
    });
    const limited = replies.filter((reply) => reply.status === 429);
    for (const reply of limited) {
      expect(reply.body).toEqual({ error: `Too many checks of this key: at most ${limit} per minute` });
      expect(reply.headers['Retry-After']).toBe(String(rateWindowAt(now).resetSeconds));
    }
    expect(await storedKey(id)).toMatchObject({ current_uses: limit, checkCount: limit });
  });

  it('the check after the limit within one minute gets 429 and counts no use; the next minute admits the key again', async () => {
    const projectId = await newProject();
    const { id, key } = await issueKey(projectId);
    const container = loaderContainer({ now: MINUTE });
    for (let i = 0; i < limit; i++) {
      container.setNow(MINUTE + Math.floor((i * 60) / limit));
      expect(codeOf(await container.check({ project_id: projectId, key }))).toBe('KEY_VALID');
    }
    container.setNow(MINUTE + 59);
    const refused = await container.check({ project_id: projectId, key });
    expect(refused.status).toBe(429);
    expect(refused.headers['Retry-After']).toBe('1');
    expect(await storedKey(id)).toMatchObject({ current_uses: limit });

    container.setNow(MINUTE + 60);
    expect((await container.check({ project_id: projectId, key })).body).toMatchObject({ valid: true, code: 'KEY_VALID', uses_left: null });
    expect(await storedKey(id)).toMatchObject({ current_uses: limit + 1, checkCount: 1, checkWindow: MINUTE + 60 });
  });
});

describe('a key refused past the floor costs no request (issue 33 item 3)', () => {
  it(`400 checks of a revoked key in a minute make ${2 * REFUSAL_MEMORY.floor} DynamoDB requests (the floor's failed writes and their reads), and their telemetry still counts every refusal`, async () => {
    const projectId = await newProject();
    const { id, key } = await issueKey(projectId, {});
    await table.stores.projects.revokeKey(projectId, id, FIXED_NOW);
    const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
    const reports: number[] = [];
    const telemetry: TelemetrySink = {
      report: async (records) => {
        for (const record of records) if (record.kind === 'validation' && record.result === 'revoked') reports.push(record.count ?? 1);
      },
    };
    try {
      const container = loaderContainer({ db: recorder.db, telemetry });
      recorder.take();
      for (let i = 0; i < 400; i++) expect(codeOf(await container.check({ project_id: projectId, key }))).toBe('KEY_REVOKED');
      // Each refusal the table decides is a failed conditional write and the consistent read that says why.
      expect(recorder.take().requests).toBe(2 * REFUSAL_MEMORY.floor);
      container.setNow(FIXED_NOW + 60);
      expect(codeOf(await container.check({ project_id: projectId, key }))).toBe('KEY_REVOKED');
      expect(reports.reduce((sum, count) => sum + count, 0)).toBe(401);
    } finally {
      recorder.db.destroy();
    }
  });
});

describe('refusals on the real store answer the DESIGN codes and count no use', () => {
  it("revoked, expired, spent, unknown key, another project's key and an unknown project each answer their code and leave the key item as it was", async () => {
    const projectId = await newProject();
    const otherProject = await newProject();
    const revoked = await issueKey(projectId);
    await table.stores.projects.revokeKey(projectId, revoked.id, FIXED_NOW);
    const expired = await issueKey(projectId, { expiresAt: FIXED_NOW });
    const spent = await issueKey(projectId, { maxUses: 1 });
    const container = loaderContainer();
    expect((await container.check({ project_id: projectId, key: spent.key })).body.code).toBe('KEY_VALID');
    // Revoked wins over expired and spent: a key that is all three still answers KEY_REVOKED.
    const everything = await issueKey(projectId, { maxUses: 1, expiresAt: FIXED_NOW });
    await table.stores.projects.revokeKey(projectId, everything.id, FIXED_NOW);
    const foreign = await issueKey(otherProject);

    const cases: { body: CheckBody; code: string; keyId?: string }[] = [
      { body: { project_id: projectId, key: revoked.key }, code: 'KEY_REVOKED', keyId: revoked.id },
      { body: { project_id: projectId, key: expired.key }, code: 'KEY_EXPIRED', keyId: expired.id },
      { body: { project_id: projectId, key: spent.key }, code: 'KEY_OVER_LIMIT', keyId: spent.id },
      { body: { project_id: projectId, key: everything.key }, code: 'KEY_REVOKED', keyId: everything.id },
      { body: { project_id: projectId, key: 'sdk_not-a-key-of-anyone' }, code: 'KEY_INVALID' },
      { body: { project_id: projectId, key: foreign.key }, code: 'KEY_INVALID', keyId: foreign.id },
      { body: { project_id: 'prj_nosuchproject', key: revoked.key }, code: 'KEY_INVALID', keyId: revoked.id },
      { body: { project_id: 'prj_nosuchproject', key: foreign.key }, code: 'KEY_INVALID', keyId: foreign.id },
    ];
    for (const { body, code, keyId } of cases) {
      const item = keyId && (await storedKey(keyId));
      const reply = await container.check(body);
      expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: { valid: false, code } });
      if (keyId) expect(await storedKey(keyId)).toEqual(item);
    }
  });
});

// ---- telemetry from checks to the detectors ----

/**
 * The local stack's telemetry path with an injected clock: checks report through the loader's QueueTelemetrySink
 * onto the in-process queue, and `ingest()` hands the queue's batches to the ingest queue handler (the function
 * the telemetry queue's event source runs), at `now`, until the queue is empty.
 */
async function telemetryPath() {
  const queue = new InProcessQueue({
    visibilityTimeoutSeconds: TELEMETRY_QUEUE.visibilityTimeoutSeconds,
    maxReceiveCount: TELEMETRY_QUEUE.maxReceiveCount,
    batchSize: TELEMETRY_QUEUE.batchSize,
  });
  let ingestNow = FIXED_NOW;
  const fromStream: IngestResult[] = [];
  const stream = await startCheckStreamIngest({
    endpoint: dynamodbEndpoint(),
    tableName: table.tableName,
    store: table.stores.telemetry,
    now: () => ingestNow,
    autoPoll: false,
    logLevel: 'SILENT',
    onIngested: (result) => fromStream.push(result),
  });
  streamIngests.push(stream);
  return {
    sink: new QueueTelemetrySink(queue, silent()),
    queue,
    /** The stream's ingest results so far (counted checks). */
    fromStream,
    /** The queue's batches (refusals), then the stream's records (counted checks), all ingested at `now`; the queue's results. */
    ingest: async (now: number) => {
      ingestNow = now;
      const handler = createIngestQueueHandler({ store: table.stores.telemetry, now: () => now, logger: silent() });
      const results: (IngestResult | undefined)[] = [];
      while (queue.depth > 0) {
        let result: IngestResult | undefined;
        const received = await queue.pump(async (event) => {
          result = await handler(event);
        });
        if (received === 0) throw new Error('telemetry messages left that the queue does not hand out');
        results.push(result);
      }
      await stream.drain();
      return results;
    },
  };
}

/** The analytics event items of a project (conditions a summary stood for excluded), strongly consistent. */
async function eventItems(projectId: string, name: EventItem['name']): Promise<EventItem[]> {
  const { Items = [] } = await table.db.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :events)',
      ExpressionAttributeValues: { ':pk': keyOf.event(projectId, name, '').pk, ':events': `EVENT#${name}#` },
      ConsistentRead: true,
    }),
  );
  return Items.filter((item) => item.entity === 'EVENT') as EventItem[];
}

describe('telemetry from checks reaches each detector', () => {
  it('a counted check reaches ingest off the stream, a refusal through the queue, and an unknown key through neither', async () => {
    const projectId = await newProject();
    const { key } = await issueKey(projectId);
    const revoked = await issueKey(projectId);
    await table.stores.projects.revokeKey(projectId, revoked.id, FIXED_NOW);
    const path = await telemetryPath();
    const container = loaderContainer({ telemetry: path.sink });
    await container.check({ project_id: projectId, key, executor: 'Delta' });
    await container.check({ project_id: projectId, key: revoked.key, executor: 'Delta' });
    await container.check({ project_id: projectId, key: 'sdk_unknown', executor: 'Delta' });
    // One message: the revoked key's refusal. The counted check wrote its telemetry on its key item; KEY_INVALID nothing.
    expect(path.queue.depth).toBe(1);
    await path.queue.sendBatch([{ id: 'junk', body: '{"not":"a batch"}' }]);
    const [fromQueue, ...more] = await path.ingest(FIXED_NOW + 5);
    expect(more).toEqual([]);
    expect(fromQueue).toMatchObject({ accepted: 1, rejected: 0 });
    expect(path.fromStream).toEqual([
      expect.objectContaining({ accepted: 2, rejected: 0, events: [{ name: 'new_executor', projectId, dedupKey: expect.any(String) }] }),
    ]);
    expect(path.queue.deadLetters()).toEqual([]);
  });

  it("a counted check's telemetry survives a failing ingest: the stream batch is handed over again and every execution is counted once it succeeds", async () => {
    const projectId = await newProject();
    const { key } = await issueKey(projectId);
    let failures = 1;
    const store = table.stores.telemetry;
    // The first ingest fails on its daily counter, as DynamoDB failing mid-batch would.
    const flaky = new Proxy(store, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property === 'addExecutions') {
          return async (count: Parameters<typeof store.addExecutions>[0]) => {
            if (failures-- > 0) throw new Error('DynamoDB is down');
            return store.addExecutions(count);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const stream = await startCheckStreamIngest({
      endpoint: dynamodbEndpoint(),
      tableName: table.tableName,
      store: flaky,
      now: () => FIXED_NOW + 5,
      autoPoll: false,
      logLevel: 'SILENT',
    });
    streamIngests.push(stream);
    const container = loaderContainer();
    for (let i = 0; i < 5; i++) expect((await container.check({ project_id: projectId, key })).body.code).toBe('KEY_VALID');
    await stream.drain();
    expect(failures).toBeLessThan(0);
    expect((await table.stores.telemetry.executionsOn(utcDate(FIXED_NOW))).get(projectId)).toBe(5);
  });

  it('new_executor: the first valid check by an executor writes one new_executor event naming it; later checks by it write none', async () => {
    const projectId = await newProject();
    const { key } = await issueKey(projectId);
    const path = await telemetryPath();
    const container = loaderContainer({ telemetry: path.sink });
    await container.check({ project_id: projectId, key, executor: 'Solara' });
    await container.check({ project_id: projectId, key, executor: 'Solara' });
    await path.ingest(FIXED_NOW + 5);
    container.setNow(FIXED_NOW + 120);
    await container.check({ project_id: projectId, key, executor: 'Solara' });
    await path.ingest(FIXED_NOW + 125);
    const events = await eventItems(projectId, 'new_executor');
    expect(events.map((event) => event.data)).toEqual([{ executor: 'Solara', firstSeenAt: FIXED_NOW, previouslySeenAt: null }]);
  });

  it('key_abuse: checks of one key from 6 fingerprints within an hour write exactly one key_abuse event, and a 7th fingerprint adds none', async () => {
    const projectId = await newProject();
    const { id, key } = await issueKey(projectId);
    const path = await telemetryPath();
    const container = loaderContainer({ telemetry: path.sink });
    for (let n = 1; n <= 5; n++) await container.check({ project_id: projectId, key, fingerprint: FP(n) });
    await path.ingest(FIXED_NOW + 5);
    expect(await eventItems(projectId, 'key_abuse')).toEqual([]);

    container.setNow(FIXED_NOW + 600);
    await container.check({ project_id: projectId, key, fingerprint: FP(6) });
    await path.ingest(FIXED_NOW + 605);
    container.setNow(FIXED_NOW + 900);
    await container.check({ project_id: projectId, key, fingerprint: FP(7) });
    await path.ingest(FIXED_NOW + 905);
    const events = await eventItems(projectId, 'key_abuse');
    expect(events.map((event) => event.data)).toEqual([expect.objectContaining({ keyId: id, pattern: 'many_fingerprints', count: 6 })]);
  });

  const refusalBursts = [
    {
      pattern: 'revoked_key_burst',
      code: 'KEY_REVOKED',
      checks: KEY_ABUSE_THRESHOLDS.revokedValidationsAtLeast,
      key: async (projectId: string) => {
        const key = await issueKey(projectId);
        await table.stores.projects.revokeKey(projectId, key.id, FIXED_NOW);
        return key;
      },
    },
    {
      pattern: 'expired_key_burst',
      code: 'KEY_EXPIRED',
      checks: KEY_ABUSE_THRESHOLDS.expiredValidationsAtLeast,
      key: (projectId: string) => issueKey(projectId, { expiresAt: FIXED_NOW }),
    },
  ] as const;

  it.each(refusalBursts)(
    'key_abuse: $checks checks answered $code within an hour (the threshold) write one $pattern event',
    async ({ pattern, code, checks, key: make }) => {
      const projectId = await newProject();
      const { id, key } = await make(projectId);
      const path = await telemetryPath();
      const container = loaderContainer({ telemetry: path.sink });
      for (let i = 0; i < checks; i++) expect((await container.check({ project_id: projectId, key })).body.code).toBe(code);
      await path.ingest(FIXED_NOW + 5);
      const events = await eventItems(projectId, 'key_abuse');
      expect(events.map((event) => event.data)).toEqual([expect.objectContaining({ keyId: id, pattern, count: checks })]);
    },
  );

  it('key_abuse: a check of a key whose uses are spent (KEY_OVER_LIMIT) writes one over_max_uses event', async () => {
    const projectId = await newProject();
    const { id, key } = await issueKey(projectId, { maxUses: 2 });
    const path = await telemetryPath();
    const container = loaderContainer({ telemetry: path.sink });
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await container.check({ project_id: projectId, key })).body.code);
    expect(codes).toEqual(['KEY_VALID', 'KEY_VALID', 'KEY_OVER_LIMIT', 'KEY_OVER_LIMIT']);
    await path.ingest(FIXED_NOW + 5);
    const events = await eventItems(projectId, 'key_abuse');
    expect(events.map((event) => event.data)).toEqual([expect.objectContaining({ keyId: id, pattern: 'over_max_uses', count: 2, threshold: 2 })]);
  });

  it("checks naming another project's key or an unknown project feed no detector: ingest refuses their records and neither project gets an event", async () => {
    const projectId = await newProject();
    const keysProject = await newProject();
    const { key } = await issueKey(keysProject);
    const path = await telemetryPath();
    const container = loaderContainer({ telemetry: path.sink });
    for (let n = 1; n <= 6; n++) {
      expect((await container.check({ project_id: projectId, key, fingerprint: FP(n) })).body.code).toBe('KEY_INVALID');
      expect((await container.check({ project_id: 'prj_nosuchproject', key, fingerprint: FP(n) })).body.code).toBe('KEY_INVALID');
    }
    // Not even queued (issue 21): ingest could only refuse them.
    expect(path.queue.depth).toBe(0);
    expect(await path.ingest(FIXED_NOW + 5)).toEqual([]);
    for (const project of [projectId, keysProject]) expect(await eventItems(project, 'key_abuse')).toEqual([]);
  });

  it("clone_detected: the version's uploaded sha256 is the original: a first check reporting another hash already fires, naming the upload's hash", async () => {
    const projectId = await newProject();
    const { key } = await issueKey(projectId);
    const versionId = newId('ver');
    await table.stores.dashboard.uploadVersion({ id: versionId, projectId, sizeBytes: 64, sha256: HASH('a'), notes: '', now: FIXED_NOW });
    const path = await telemetryPath();
    const container = loaderContainer({ telemetry: path.sink });
    await container.check({ project_id: projectId, key, script_hash: HASH('a'), version_id: versionId });
    await path.ingest(FIXED_NOW + 5);
    expect(await eventItems(projectId, 'clone_detected')).toEqual([]);
    container.setNow(FIXED_NOW + 60);
    await container.check({ project_id: projectId, key, script_hash: HASH('b'), version_id: versionId });
    await container.check({ project_id: projectId, key, script_hash: HASH('b'), version_id: versionId });
    await path.ingest(FIXED_NOW + 65);
    const events = await eventItems(projectId, 'clone_detected');
    expect(events.map((event) => event.data)).toEqual([
      expect.objectContaining({ scriptId: projectId, versionId, newHash: HASH('b'), originalHash: HASH('a') }),
    ]);
  });

  it('clone_detected (issue 21): a forged hash reported first is not taken as the original, and a version the project does not have raises nothing', async () => {
    const projectId = await newProject();
    const { key } = await issueKey(projectId);
    const versionId = newId('ver');
    await table.stores.dashboard.uploadVersion({ id: versionId, projectId, sizeBytes: 64, sha256: HASH('a'), notes: '', now: FIXED_NOW });
    const path = await telemetryPath();
    const container = loaderContainer({ telemetry: path.sink });
    // A key holder reports a made-up hash first, then the real script's: the real one must not be called a clone.
    await container.check({ project_id: projectId, key, script_hash: HASH('f'), version_id: versionId });
    await path.ingest(FIXED_NOW + 5);
    container.setNow(FIXED_NOW + 60);
    await container.check({ project_id: projectId, key, script_hash: HASH('a'), version_id: versionId });
    // A forged version id: refused by ingest, so its two hashes make no "clone" at all.
    await container.check({ project_id: projectId, key, script_hash: HASH('c'), version_id: 'ver_forged' });
    await container.check({ project_id: projectId, key, script_hash: HASH('d'), version_id: 'ver_forged' });
    await path.ingest(FIXED_NOW + 65);
    const events = (await eventItems(projectId, 'clone_detected')).map((event) => event.data);
    expect(events).toEqual([expect.objectContaining({ versionId, newHash: HASH('f'), originalHash: HASH('a') })]);
    expect(path.fromStream.flatMap((result) => result.rejections.map((rejection) => rejection.reason))).toEqual([
      `version ver_forged is not a version of project ${projectId}`,
      `version ver_forged is not a version of project ${projectId}`,
    ]);
  });

  it('execution_drop: a day with 4 valid checks after a day with 10 writes one execution_drop event when the daily detector runs', async () => {
    // Days of their own, far from the other tests', since the daily detector reads every project's counter of a day.
    const dayBefore = FIXED_NOW - (FIXED_NOW % DAY) + 20 * DAY;
    const day = dayBefore + DAY;
    const projectId = await newProject();
    const { key } = await issueKey(projectId, { expiresAt: day + 30 * DAY });
    const path = await telemetryPath();
    const container = loaderContainer({ telemetry: path.sink });
    for (const [start, checks] of [
      [dayBefore, 10],
      [day, 4],
    ] as const) {
      container.setNow(start + 3600);
      for (let i = 0; i < checks; i++) expect((await container.check({ project_id: projectId, key })).body.code).toBe('KEY_VALID');
      await path.ingest(start + 3605);
    }
    const result = await runDailyDetection(table.stores.telemetry, utcDate(day + DAY), day + DAY + 60);
    expect(result.events).toEqual([{ name: 'execution_drop', projectId, dedupKey: utcDate(day) }]);
    const events = await eventItems(projectId, 'execution_drop');
    expect(events.map((event) => event.data)).toEqual([{ date: utcDate(day), executions: 4, previousExecutions: 10, dropPercent: 60 }]);
  });
});
