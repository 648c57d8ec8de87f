import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { AddressTally } from '#domain/address-tally';
import { FULL_COPIES_PER_KEY_VERSION_PER_MINUTE, FullCopyTally } from '#domain/full-copies';
import { newId } from '#domain/ids';
import { ADDRESS_COUNTING } from '#domain/key-check';
import { newKeyValue } from '#domain/key-values';
import { RefusalMemory } from '#domain/refusal-memory';
import { publishScript, ScriptCache } from '#domain/scripts';
import { createScriptHandler } from '#http/loader-script';
import { createValidateHandler } from '#http/loader-validate';
import { SCRIPT_ROUTE, VALIDATE_ROUTE } from '#http/public-routes';
import { buildLoaderEvent } from '#local/proxy-event';
import { capacityRecordingClient } from '#test-support/consumed-capacity';
import { createTestTable, FIXED_NOW, lambdaContext, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * DynamoDB requests one loader check makes on its answer's path, counted on DynamoDB Local through a client that
 * counts every request (test/support/consumed-capacity.ts): the handlers as deployed, one container each.
 */

let table: TestTable;
let recorder: ReturnType<typeof capacityRecordingClient>;
let projectId: string;
let keys: string[];
const scripts = new MemoryScriptStore();
const silent = new Logger({ serviceName: 'loader-requests', logLevel: 'SILENT' });

beforeAll(async () => {
  table = await createTestTable('loader-requests');
  const owner = await seedOwner(table.stores);
  ({ projectId } = await seedProject(table.stores, { ownerId: owner.ownerId }));
  keys = (await table.stores.dashboard.issueKeys({ projectId, count: 200, tier: 'standard', maxUses: null, now: FIXED_NOW })).map((issued) => issued.key);
  await publishScript(
    { scripts, versions: table.stores.dashboard },
    { id: newId('ver'), projectId, bytes: new TextEncoder().encode('print("hi")'), notes: 'v1', now: FIXED_NOW },
  );
  recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
});

afterAll(async () => {
  recorder?.db.destroy();
  await table?.drop();
});

/** One container: both handlers on the counting client, with one address tally between them. */
function container() {
  const stores = createStores(recorder.db, table.tableName);
  const deps = {
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: { report: async () => undefined },
    now: () => FIXED_NOW,
    logger: silent,
  };
  const validate = createValidateHandler(deps);
  const script = createScriptHandler({
    ...deps,
    versions: stores.scriptVersions,
    scripts,
    cache: new ScriptCache(1024 * 1024),
    fullCopies: new FullCopyTally(),
  });
  const body = (key: string, extra: object) => JSON.stringify({ project_id: projectId, key, fingerprint: 'e'.repeat(64), executor: 'Wave', ...extra });
  const event = (route: typeof VALIDATE_ROUTE | typeof SCRIPT_ROUTE, key: string, sourceIp: string, extra: object = {}) =>
    buildLoaderEvent({ route, body: body(key, extra), sourceIp, requestId: randomUUID(), timeEpoch: FIXED_NOW * 1000 });
  return {
    validate: async (key: string, sourceIp = '198.51.100.1') => {
      recorder.take();
      const result = await validate(event(VALIDATE_ROUTE, key, sourceIp), lambdaContext());
      return { result, tally: recorder.take() };
    },
    fetch: async (key: string, sourceIp = '198.51.100.1', extra: object = {}) => {
      recorder.take();
      const result = await script(event(SCRIPT_ROUTE, key, sourceIp, extra), lambdaContext());
      return { result, tally: recorder.take() };
    },
  };
}

describe('DynamoDB requests on the answer path of one check', () => {
  it("a common validate check makes exactly one request, the key's conditional write, of 1 WCU", async () => {
    const loader = container();
    const { result, tally } = await loader.validate(keys[0] ?? '');
    expect(JSON.parse(result.body)).toMatchObject({ valid: true });
    expect(tally.requests).toBe(1);
    expect(tally.inARow).toBe(1);
    expect(tally.write.table).toBe(1);
    expect(tally.read.table).toBe(0);
  });

  it("a common script fetch waits for one round trip: the current-version pointer's read and the key's write, sent at once (the version's item and body, and the key's watermark, are cached)", async () => {
    const loader = container();
    await loader.fetch(keys[1] ?? '');
    // A key's first fetch in a container also reads its watermark, which never changes (the write may not name it),
    // beside the write.
    const first = await loader.fetch(keys[2] ?? '');
    expect(first.result.statusCode).toBe(200);
    expect(first.tally).toMatchObject({ requests: 3, inARow: 1 });
    const { result, tally } = await loader.fetch(keys[2] ?? '');
    expect(result.statusCode).toBe(200);
    expect(tally.requests).toBe(2);
    expect(tally.inARow).toBe(1);
    expect(tally.write.table).toBe(1);
  });

  it("a script fetch carrying the stub's timing (issue 32) makes the same requests of the same WCU: the figures ride on the key's write", async () => {
    const loader = container();
    await loader.fetch(keys[5] ?? '');
    const timing = { timing: { run_in_session: 3, previous_request_ms: 140, first_request_ms: 420 } };
    const without = await loader.fetch(keys[5] ?? '');
    const withTiming = await loader.fetch(keys[5] ?? '', '198.51.100.1', timing);
    expect(withTiming.result.statusCode).toBe(200);
    expect(withTiming.result.body).toBe(without.result.body);
    expect(withTiming.tally).toMatchObject({ requests: without.tally.requests, inARow: 1, write: without.tally.write });
    const garbled = await loader.fetch(keys[5] ?? '', '198.51.100.1', { timing: 'fast' });
    expect(garbled.result.statusCode).toBe(200);
  });

  it("a container's first fetch of a project reads the pointer before the write (a project without a version counts no use), then never again", async () => {
    const loader = container();
    const first = await loader.fetch(keys[3] ?? '');
    expect(first.result.statusCode).toBe(200);
    // The pointer, the version item, the key's write, then its watermark, read once per key (S3 is not DynamoDB).
    expect(first.tally.inARow).toBe(4);
    // Another key: the pointer, the write and that key's watermark (read once per key and container) at once.
    const another = await loader.fetch(keys[4] ?? '');
    expect(another.tally).toMatchObject({ requests: 3, inARow: 1 });
    expect((await loader.fetch(keys[4] ?? '')).tally).toMatchObject({ requests: 2, inARow: 1 });
  });

  it(`an address past ${ADDRESS_COUNTING.sharedAfter} checks in the container's minute adds its shared window: two requests`, async () => {
    const loader = container();
    const counts: number[] = [];
    for (let i = 0; i < ADDRESS_COUNTING.sharedAfter + 2; i++) counts.push((await loader.validate(keys[10 + (i % 150)] ?? '', '198.51.100.77')).tally.requests);
    expect(counts.slice(0, ADDRESS_COUNTING.sharedAfter)).toEqual(Array(ADDRESS_COUNTING.sharedAfter).fill(1));
    expect(counts.slice(ADDRESS_COUNTING.sharedAfter)).toEqual([2, 2]);
  });

  it("a machine-bound key's first check from a new machine binds it in five requests, one after another (the write that assumed a bound machine, the key's read, the machine's record of the key, its blacklist entry's read, the binding write); every later check from it is one request again", async () => {
    const [bound] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, maxFingerprints: 2, now: FIXED_NOW });
    const loader = container();
    const first = await loader.validate(bound?.key ?? '');
    expect(JSON.parse(first.result.body)).toMatchObject({ valid: true });
    expect(first.tally).toMatchObject({ requests: 5, inARow: 5, conditionFailures: 1 });
    const again = await loader.validate(bound?.key ?? '');
    expect(JSON.parse(again.result.body)).toMatchObject({ valid: true });
    expect(again.tally).toMatchObject({ requests: 1, inARow: 1 });
  });

  it("a value of no key's form makes no request at all; a well-formed unknown key two (failed write, read)", async () => {
    const loader = container();
    const malformed = await loader.validate('letmein');
    expect(JSON.parse(malformed.result.body)).toEqual({ valid: false, code: 'KEY_INVALID' });
    expect(malformed.tally.requests).toBe(0);
    const unknown = await loader.validate(newKeyValue());
    expect(JSON.parse(unknown.result.body)).toEqual({ valid: false, code: 'KEY_INVALID' });
    expect(unknown.tally).toMatchObject({ requests: 2, conditionFailures: 1 });
  });

  it("a script fetch with a value of no key's form reads nothing either", async () => {
    const loader = container();
    const { result, tally } = await loader.fetch('letmein');
    expect(result.statusCode).toBe(403);
    expect(tally.requests).toBe(0);
  });
});

describe('full copies of one version per key on the real store (issue 33 item 4)', () => {
  it(`the ${FULL_COPIES_PER_KEY_VERSION_PER_MINUTE + 1}th full copy of a version in a minute gets 429 with Retry-After, counts no use and writes nothing`, async () => {
    const loader = container();
    const key = keys[199] ?? '';
    for (let i = 0; i < FULL_COPIES_PER_KEY_VERSION_PER_MINUTE; i++) expect((await loader.fetch(key)).result.statusCode).toBe(200);
    const { result, tally } = await loader.fetch(key);
    expect(result.statusCode).toBe(429);
    expect(result.headers?.['Retry-After']).toMatch(/^\d+$/);
    expect(JSON.parse(result.body).error).toMatch(/full copies/);
    expect(tally.write.table).toBe(0);
  });
});
