import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { AddressTally } from '#domain/address-tally';
import { FullCopyTally } from '#domain/full-copies';
import { RefusalMemory } from '#domain/refusal-memory';
import { REFUSAL_SENTENCES, ScriptCache, sha256Hex } from '#domain/scripts';
import { createScriptHandler, NO_VERSION_YET } from '#http/loader-script';
import { SCRIPT_ROUTE } from '#http/public-routes';
import { buildLoaderEvent } from '#local/proxy-event';
import { NOW } from '#test-support/api-harness';
import { lambdaContext } from '#test-support/fixtures';
import { MemoryKeyCheckStore, MemoryScriptStore, MemoryStores } from '#test-support/memory-stores';

const PROJECT = 'prj_script';
const WATERMARK = '00112233aabbccdd';

/** The handler on memory stores, with one version current unless `withVersion` is false. */
async function scriptApi(withVersion = true) {
  const keys = new MemoryKeyCheckStore();
  const scripts = new MemoryScriptStore();
  const text = 'print("v1 WM_XXXXXXXXXXXXXXXX")';
  if (withVersion) await scripts.put({ projectId: PROJECT, versionId: 'ver_1' }, new TextEncoder().encode(text));
  const handler = createScriptHandler({
    keys,
    rateLimits: new MemoryStores(),
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: { report: async () => undefined },
    scripts,
    cache: new ScriptCache(1024 * 1024),
    fullCopies: new FullCopyTally(),
    versions: {
      currentVersionId: async () => (withVersion ? 'ver_1' : undefined),
      version: async () => ({ versionNumber: 7, sha256: sha256Hex(text) }),
    },
    now: () => NOW,
    logger: new Logger({ serviceName: 'loader-check', logLevel: 'SILENT' }),
  });
  const issued = keys.issue(PROJECT, { watermark: WATERMARK, expiresAt: NOW + 86_400 });
  const send = async (body: unknown, headers: Record<string, string> = {}) => {
    const event = buildLoaderEvent({
      route: SCRIPT_ROUTE,
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
      requestId: 'req-script',
      timeEpoch: NOW * 1000,
      sourceIp: '198.51.100.30',
    });
    return handler(event, lambdaContext());
  };
  return { keys, issued, send, body: { project_id: PROJECT, key: issued.key, fingerprint: 'd'.repeat(64), executor: 'Wave' } };
}

describe('POST /v1/loader/script', () => {
  it('answers 200 text/plain with the stamped body, a strong ETag, the version headers and private, no-store', async () => {
    const { send, body } = await scriptApi();
    const reply = await send(body);
    expect(reply.statusCode).toBe(200);
    expect(reply.body).toBe(`print("v1 WM_${WATERMARK}")`);
    expect(reply.headers).toMatchObject({
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
      ETag: expect.stringMatching(/^"[0-9a-f]{32}"$/),
      'X-Version-Id': 'ver_1',
      'X-Version-Number': '7',
      'X-Script-SHA256': sha256Hex(`print("v1 WM_${WATERMARK}")`),
    });
  });

  it('answers 304 with no body to If-None-Match of that ETag, in any header case', async () => {
    const { send, body } = await scriptApi();
    const etag = String((await send(body)).headers?.ETag);
    const reply = await send(body, { 'if-none-match': etag });
    expect(reply).toMatchObject({ statusCode: 304, body: '' });
    // The kept copy's hash rides on the 304 too (issue 33 item 2): the loader checks its copy against it.
    expect(reply.headers).toMatchObject({ ETag: etag, 'X-Script-SHA256': sha256Hex(`print("v1 WM_${WATERMARK}")`) });
  });

  it('answers 403 JSON with the sentence, valid false and the code to a refused key', async () => {
    const { send, body, keys, issued } = await scriptApi();
    keys.revoke(issued.id);
    const reply = await send(body);
    expect(reply.statusCode).toBe(403);
    expect(reply.headers).toMatchObject({ 'Content-Type': 'application/json' });
    expect(JSON.parse(reply.body)).toEqual({ error: REFUSAL_SENTENCES.KEY_REVOKED, valid: false, code: 'KEY_REVOKED' });
  });

  it('answers 404 to a valid key of a project with no version yet', async () => {
    const { send, body } = await scriptApi(false);
    const reply = await send(body);
    expect(reply.statusCode).toBe(404);
    expect(JSON.parse(reply.body)).toEqual({ error: NO_VERSION_YET });
  });

  it('answers 400 naming the field for a malformed body', async () => {
    const { send, body } = await scriptApi();
    const reply = await send({ ...body, fingerprint: 'not-hex' });
    expect(reply.statusCode).toBe(400);
    expect(JSON.parse(reply.body).error).toMatch(/^fingerprint must be 64 lowercase hex/);
  });

  describe("the stub's timing (issue 32): telemetry only", () => {
    const TIMING = { run_in_session: 3, previous_request_ms: 140, first_request_ms: 420 };

    it('answers the same with and without it, and keeps it on the key item with the use', async () => {
      const { send, body, keys, issued } = await scriptApi();
      const without = await send(body);
      expect(keys.storedKey(issued.id)?.lastCheck?.timing).toBeUndefined();
      const withTiming = await send({ ...body, timing: TIMING });
      expect(withTiming).toEqual(without);
      expect(keys.storedKey(issued.id)?.lastCheck?.timing).toEqual({ runInSession: 3, previousRequestMs: 140, firstRequestMs: 420 });
    });

    it.each([
      ['a string', 'fast'],
      ['a negative figure', { run_in_session: 2, previous_request_ms: -5 }],
      ['an absurd figure', { run_in_session: 2, previous_request_ms: 10 ** 12 }],
      ['a fraction', { run_in_session: 1.5 }],
      ['no run_in_session', { previous_request_ms: 140 }],
      ['null', null],
    ])('ignores a malformed timing (%s): the script is served, and nothing of it is kept', async (_name, timing) => {
      const { send, body, keys, issued } = await scriptApi();
      const reply = await send({ ...body, timing });
      expect(reply.statusCode).toBe(200);
      expect(reply.body).toBe(`print("v1 WM_${WATERMARK}")`);
      expect(keys.storedKey(issued.id)?.lastCheck).toEqual({ executor: 'Wave', fingerprint: 'd'.repeat(64), at: NOW, versionId: 'ver_1' });
    });

    it('still answers 400 naming the field for the rest of a malformed body that carries a timing', async () => {
      const { send, body } = await scriptApi();
      const reply = await send({ ...body, fingerprint: 'not-hex', timing: TIMING });
      expect(reply.statusCode).toBe(400);
      expect(JSON.parse(reply.body).error).toMatch(/^fingerprint must be 64 lowercase hex/);
    });
  });
});
