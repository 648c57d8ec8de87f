import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QueueTelemetrySink, TELEMETRY_NOT_QUEUED } from '#adapters/telemetry-queue';
import { AddressTally } from '#domain/address-tally';
import { LOADER_LIMITS } from '#domain/key-check';
import type { TelemetrySink } from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import type { MessageSender } from '#domain/webhooks/ports';
import { createValidateHandler } from '#http/loader-validate';
import { VALIDATE_ROUTE } from '#http/public-routes';
import { JSON_BODY_REQUIRED, MALFORMED_JSON } from '#http/responses';
import { buildLoaderEvent } from '#local/proxy-event';
import { invoke, NOW, SECONDS_TO_NEXT_WINDOW, SECURITY_HEADERS } from '#test-support/api-harness';
import { captureLogs } from '#test-support/event-fixtures';
import { MemoryKeyCheckStore, MemoryStores } from '#test-support/memory-stores';

const PROJECT = 'prj_loader';
const FINGERPRINT = 'c'.repeat(64);

/** The 2.0 event the loader's HTTP API sends the check. */
function loaderEvent(
  body: string | null,
  headers: Record<string, string> = { 'Content-Type': 'application/json' },
  sourceIp = '198.51.100.20',
): APIGatewayProxyEventV2 {
  return buildLoaderEvent({ route: VALIDATE_ROUTE, body, headers, sourceIp, requestId: 'req-loader', timeEpoch: NOW * 1000 });
}

const silent = () => new Logger({ serviceName: 'loader-check', logLevel: 'SILENT' });
const noTelemetry: TelemetrySink = { report: async () => undefined };

function loaderApi(telemetry: TelemetrySink = noTelemetry, logger: Logger = silent()) {
  const keys = new MemoryKeyCheckStore();
  const handler = createValidateHandler({
    keys,
    rateLimits: new MemoryStores(),
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry,
    now: () => NOW,
    logger,
  });
  const { id, key } = keys.issue(PROJECT, { maxUses: 10, currentUses: 4, expiresAt: NOW + 86_400 });
  const body = { project_id: PROJECT, key, fingerprint: FINGERPRINT, executor: 'Wave' };
  const send = (payload: unknown, headers?: Record<string, string>, sourceIp?: string) =>
    invoke(handler, loaderEvent(typeof payload === 'string' || payload === null ? payload : JSON.stringify(payload), headers, sourceIp));
  return { keys, id, key, body, send };
}

describe('POST /v1/loader/validate answers 200 for every well-formed request', () => {
  it('answers a valid key with the contract body and the headers of every answer', async () => {
    const { id, body, send, keys } = loaderApi();
    const reply = await send(body);
    expect(reply.status).toBe(200);
    expect(reply.headers).toMatchObject(SECURITY_HEADERS);
    expect(reply.body).toEqual({ valid: true, code: 'KEY_VALID', key_id: id, expires_at: NOW + 86_400, uses_left: 5 });
    expect(keys.storedKey(id)?.currentUses).toBe(5);
  });

  it('answers a refusal with 200 and exactly {valid, code}', async () => {
    const { id, body, send, keys } = loaderApi();
    keys.revoke(id);
    const reply = await send(body);
    expect(reply.status).toBe(200);
    expect(reply.raw).toBe('{"valid":false,"code":"KEY_REVOKED"}');
  });

  it("answers KEY_HWID_LOCKED with exactly {valid, code} for a machine past a bound key's max_fingerprints, counting no use", async () => {
    const { body, send, keys } = loaderApi();
    const bound = keys.issue(PROJECT, { maxFingerprints: 1, fingerprints: ['e'.repeat(64)] });
    const reply = await send({ ...body, key: bound.key });
    expect(reply.status).toBe(200);
    expect(reply.raw).toBe('{"valid":false,"code":"KEY_HWID_LOCKED"}');
    expect(keys.storedKey(bound.id)).toMatchObject({ currentUses: 0, fingerprints: ['e'.repeat(64)] });
    expect((await send({ ...body, key: bound.key, fingerprint: 'e'.repeat(64) })).body).toMatchObject({ valid: true, code: 'KEY_VALID' });
  });

  it("answers an unknown key, another project's key and an unknown project with the same bytes", async () => {
    const { body, send, keys } = loaderApi();
    const theirs = keys.issue('prj_theirs');
    const replies = [
      await send({ ...body, key: 'sdk_not-a-key' }),
      await send({ ...body, key: theirs.key }),
      await send({ ...body, project_id: 'prj_nobody' }),
    ];
    expect(replies.map((reply) => [reply.status, reply.raw])).toEqual(Array(3).fill([200, '{"valid":false,"code":"KEY_INVALID"}']));
  });

  it('takes script_hash and version_id when given, and reads a body sent without a Content-Type as curl -d sends it', async () => {
    const { body, send } = loaderApi();
    expect((await send({ ...body, script_hash: 'a'.repeat(64), version_id: 'ver_1' })).body).toMatchObject({ code: 'KEY_VALID' });
    expect((await send(body, { 'Content-Type': 'application/x-www-form-urlencoded' })).body).toMatchObject({ code: 'KEY_VALID' });
    expect((await send(body, {})).body).toMatchObject({ code: 'KEY_VALID' });
  });

  it('ignores fields the contract does not name, so a newer loader keeps working against this service', async () => {
    const { body, send } = loaderApi();
    const reply = await send({ ...body, loader_version: '2.1', place_id: 1818 });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ code: 'KEY_VALID' });
  });

  it('never asks for a bearer token: an Authorization header, good or bad, changes nothing', async () => {
    const { body, send } = loaderApi();
    const reply = await send(body, { 'Content-Type': 'application/json', Authorization: 'Bearer not-a-token' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ code: 'KEY_VALID' });
  });

  it('takes an executor of exactly 100 characters', async () => {
    const { body, send } = loaderApi();
    expect((await send({ ...body, executor: 'x'.repeat(100) })).status).toBe(200);
  });
});

describe('POST /v1/loader/validate refuses malformed input with 400 naming the field', () => {
  const key = 'sdk_whatever';
  const good = { project_id: PROJECT, key, fingerprint: FINGERPRINT, executor: 'Wave' };
  const without = (field: keyof typeof good) => Object.fromEntries(Object.entries(good).filter(([name]) => name !== field));

  it.each([
    ['no body', null, 'project_id is required'],
    ['an empty object', {}, 'project_id is required'],
    ['no key', without('key'), 'key is required'],
    ['no fingerprint', without('fingerprint'), 'fingerprint is required'],
    ['no executor', without('executor'), 'executor is required'],
    ['a project_id of the wrong type', { ...good, project_id: 42 }, 'project_id must be a string'],
    ['a project_id that is no id', { ...good, project_id: 'prj/../x' }, 'project_id must be the project id, 1-64 characters of A-Z, a-z, 0-9, _ or -'],
    ['an empty key', { ...good, key: '' }, 'key must not be empty'],
    ['a key past 256 characters', { ...good, key: 'k'.repeat(257) }, 'key must be at most 256 characters'],
    [
      'a fingerprint in upper case',
      { ...good, fingerprint: 'C'.repeat(64) },
      "fingerprint must be 64 lowercase hex characters: the SHA-256 of the machine's id, never the id itself",
    ],
    [
      'a fingerprint of 63 hex characters',
      { ...good, fingerprint: 'c'.repeat(63) },
      "fingerprint must be 64 lowercase hex characters: the SHA-256 of the machine's id, never the id itself",
    ],
    [
      'a raw machine id as fingerprint',
      { ...good, fingerprint: 'DESKTOP-1234' },
      "fingerprint must be 64 lowercase hex characters: the SHA-256 of the machine's id, never the id itself",
    ],
    [
      'a script_hash that is not hex',
      { ...good, script_hash: 'z'.repeat(64) },
      'script_hash must be 64 lowercase hex characters: the SHA-256 of the script text',
    ],
    [
      'a script_hash of 65 characters',
      { ...good, script_hash: 'a'.repeat(65) },
      'script_hash must be 64 lowercase hex characters: the SHA-256 of the script text',
    ],
    ['an empty executor', { ...good, executor: '' }, 'executor must not be empty'],
    ['an executor of only spaces', { ...good, executor: '   ' }, 'executor must not be empty'],
    ['an executor of 101 characters', { ...good, executor: 'x'.repeat(101) }, 'executor must be at most 100 characters'],
    [
      'an executor with a control character',
      { ...good, executor: 'Wave\n' },
      'executor must not contain control, invisible or bidirectional-override characters',
    ],
    [
      'an executor with a zero-width space (issue 33)',
      { ...good, executor: 'Synapse\u200BX' },
      'executor must not contain control, invisible or bidirectional-override characters',
    ],
    [
      'an executor with a Hangul filler',
      { ...good, executor: 'Wave\u3164' },
      'executor must not contain control, invisible or bidirectional-override characters',
    ],
    ['a version_id that is no id', { ...good, version_id: 'v 1' }, 'version_id must be a version id, 1-64 characters of A-Z, a-z, 0-9, _ or -'],
    ['a JSON array', [good], 'Request body must be a JSON object'],
    ['JSON null', 'null', 'Request body must be a JSON object'],
    ['malformed JSON', '{"project_id": "prj_loader",', MALFORMED_JSON],
  ])('%s', async (_case, payload, message) => {
    const { send, keys, id } = loaderApi();
    const reply = await send(payload);
    expect(reply.status).toBe(400);
    expect(reply.headers).toMatchObject(SECURITY_HEADERS);
    expect(reply.body).toEqual({ error: message });
    expect(keys.storedKey(id)?.currentUses).toBe(4);
  });

  it('refuses a body sent as text/plain, saying to send JSON', async () => {
    const { send, body } = loaderApi();
    const reply = await send(body, { 'Content-Type': 'text/plain' });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: `${JSON_BODY_REQUIRED}; got Content-Type text/plain` });
  });

  it('answers any body, of any content type, with 200 or a 400 {"error"}: never 401, never 5xx', async () => {
    const { send, body } = loaderApi();
    const bodies = fc.oneof(
      fc.string(),
      fc.json(),
      fc
        .record(
          {
            project_id: fc.oneof(fc.constant(PROJECT), fc.string()),
            key: fc.oneof(fc.constant(body.key), fc.string()),
            fingerprint: fc.oneof(fc.constant(FINGERPRINT), fc.string()),
            executor: fc.string(),
          },
          { requiredKeys: [] },
        )
        .map((value) => JSON.stringify(value)),
    );
    const contentTypes = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      '',
      'application/x-www-form-urlencoded',
      'application/xml',
    );
    await fc.assert(
      fc.asyncProperty(bodies, contentTypes, async (payload, contentType) => {
        const reply = await send(payload, contentType ? { 'Content-Type': contentType } : {});
        expect([200, 400]).toContain(reply.status);
        if (reply.status === 400) expect(Object.keys(reply.body)).toEqual(['error']);
      }),
      { numRuns: 300 },
    );
  });
});

describe('POST /v1/loader/validate past a limit', () => {
  it('answers the check past the limit of its address with 429 {"error"} and Retry-After', async () => {
    const { body, send } = loaderApi();
    for (let i = 0; i < LOADER_LIMITS.perAddressPerMinute; i++) await send({ ...body, key: `sdk_guess${i}` });
    const reply = await send(body);
    expect(reply.status).toBe(429);
    expect(reply.headers).toMatchObject({ ...SECURITY_HEADERS, 'Retry-After': String(SECONDS_TO_NEXT_WINDOW) });
    expect(reply.body).toEqual({ error: `Too many key checks from this address: at most ${LOADER_LIMITS.perAddressPerMinute} per minute` });
    expect((await send(body, undefined, '198.51.100.21')).status).toBe(200);
  });

  it('answers the check past its key\'s limit with 429 {"error"} and Retry-After', async () => {
    const { keys, send } = loaderApi();
    const { key } = keys.issue(PROJECT);
    const body = { project_id: PROJECT, key, fingerprint: FINGERPRINT, executor: 'Wave' };
    for (let i = 0; i < LOADER_LIMITS.perKeyPerMinute; i++) expect((await send(body)).body).toMatchObject({ code: 'KEY_VALID' });
    const reply = await send(body);
    expect(reply.status).toBe(429);
    expect(reply.headers).toMatchObject({ ...SECURITY_HEADERS, 'Retry-After': String(SECONDS_TO_NEXT_WINDOW) });
    expect(reply.body).toEqual({ error: `Too many checks of this key: at most ${LOADER_LIMITS.perKeyPerMinute} per minute` });
  });
});

describe("POST /v1/loader/validate when a refusal's telemetry cannot be queued", () => {
  const queueThat = (sendBatch: MessageSender['sendBatch']): MessageSender => ({ sendBatch });

  it.each([
    ['fails', queueThat(async () => Promise.reject(new Error('SQS is down'))), 'Error: SQS is down'],
    ['refuses the message', queueThat(async (messages) => messages.map((message) => message.id)), 'refused by the queue'],
  ])(
    'answers a refusal as it would have when the queue %s, and logs the check as not queued (the metric filter counts that line)',
    async (_case, queue, problem) => {
      const logs = captureLogs();
      try {
        const working = loaderApi(
          new QueueTelemetrySink(
            queueThat(async () => []),
            silent(),
          ),
        );
        const failing = loaderApi(new QueueTelemetrySink(queue, new Logger({ serviceName: 'loader-check' })));
        working.keys.revoke(working.id);
        failing.keys.revoke(failing.id);
        const expected = await working.send(working.body);
        const reply = await failing.send(failing.body);
        expect([reply.status, reply.body]).toEqual([expected.status, { valid: false, code: 'KEY_REVOKED' }]);
        expect(reply.body).toEqual(expected.body);
        expect(logs.entries()).toEqual([expect.objectContaining({ level: 'ERROR', message: TELEMETRY_NOT_QUEUED, records: 1, error: problem })]);
      } finally {
        logs.restore();
      }
    },
  );

  it("sends a counted check nothing to the queue: its telemetry rides on the key item's write", async () => {
    const sent: unknown[] = [];
    const api = loaderApi(
      new QueueTelemetrySink(
        queueThat(async (messages) => {
          sent.push(...messages);
          return [];
        }),
        silent(),
      ),
    );
    const reply = await api.send(api.body);
    expect(reply.body).toMatchObject({ valid: true, code: 'KEY_VALID' });
    expect(sent).toEqual([]);
    expect(api.keys.storedKey(api.id)?.lastCheck).toMatchObject({ executor: expect.any(String), at: expect.any(Number) });
  });
});
