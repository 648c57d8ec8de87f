import { describe, expect, it } from 'vitest';
import { planStamp, stampWithPlan } from '#domain/hidden-mark';
import { MAX_DUMP_BYTES } from '#domain/leak-trace';
import { stampWatermark } from '#domain/scripts';
import { expectError, invoke, memoryApi, PROJECT_ID } from '#test-support/api-harness';
import { apiEvent } from '#test-support/fixtures';
import { obfuscatedScript } from '#test-support/luau-fixtures';

/**
 * `POST /v1/projects/{id}/leak/trace` (DESIGN.md, "Leak tracing that survives obfuscation: the hidden mark"): the
 * visible markers and the hidden mark of a dump, each watermark with the keys carrying it.
 */

const LEAKER = '1111aaaa2222bbbb';
const OTHER_BUYER = '3333cccc4444dddd';
const SCRIPT = obfuscatedScript(21, 40_000);

function apiWithLeak() {
  const api = memoryApi({ currentVersionId: 'ver_2' });
  const [leaker, other] = api.store.addKeys(PROJECT_ID, [{ watermark: LEAKER }, { watermark: OTHER_BUYER, revoked: 1 }]);
  api.store.addVersions(
    PROJECT_ID,
    { id: 'ver_1', version_number: 1, uploaded_at: 1, size_bytes: 1, notes: '' },
    { id: 'ver_2', version_number: 2, uploaded_at: 2, size_bytes: SCRIPT.length, notes: '' },
  );
  return { ...api, leaker: leaker?.id ?? '', other: other?.id ?? '' };
}

const trace = (api: ReturnType<typeof memoryApi>, body: string, headers?: Record<string, string>) =>
  invoke(api.handlers['trace-leak'], apiEvent('trace-leak', { projectId: PROJECT_ID, body, ...(headers ? { headers } : {}) }));

describe('POST /v1/projects/{id}/leak/trace', () => {
  it('names the leaker of an obfuscated copy whose --WM_ line was deleted, by the hidden mark, with the version it was read against', async () => {
    const api = apiWithLeak();
    const copy = stampWithPlan(planStamp(SCRIPT), 'ver_2', LEAKER);
    const reply = await trace(api, copy.slice(copy.indexOf('\n') + 1));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      found: [{ watermark: LEAKER, mark: 'hidden', version_id: 'ver_2', agreement: 1, keys: [{ id: api.leaker, revoked: 0 }] }],
    });
  });

  it('lists visible markers first, a marker no key carries with no keys, and says which mark named each watermark', async () => {
    const api = apiWithLeak();
    const copy = stampWithPlan(planStamp(SCRIPT), 'ver_1', LEAKER);
    const dump = `${stampWatermark('print(1)', OTHER_BUYER)}\n-- WM_00000000deadbeef\n${copy}`;
    const reply = await trace(api, dump);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      // Visible markers by how often they occur, ties in the order they first appear; then the hidden readings.
      found: [
        { watermark: OTHER_BUYER, mark: 'visible', version_id: null, agreement: null, keys: [{ id: api.other, revoked: 1 }] },
        { watermark: '00000000deadbeef', mark: 'visible', version_id: null, agreement: null, keys: [] },
        { watermark: LEAKER, mark: 'visible', version_id: null, agreement: null, keys: [{ id: api.leaker, revoked: 0 }] },
        { watermark: LEAKER, mark: 'hidden', version_id: 'ver_1', agreement: 1, keys: [{ id: api.leaker, revoked: 0 }] },
      ],
    });
  });

  it('finds nothing in an unstamped script or in text with no marks', async () => {
    const api = apiWithLeak();
    for (const dump of [SCRIPT, 'hello world']) {
      const reply = await trace(api, dump);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ found: [] });
    }
  });

  it('refuses an empty dump, one past 5 MiB, one not sent as text and one that was not UTF-8, naming the problem', async () => {
    const api = apiWithLeak();
    expectError(await trace(api, ''), 400, /^The dump is empty/);
    expectError(
      await trace(api, 'a'.repeat(MAX_DUMP_BYTES + 1)),
      400,
      `The dump is ${MAX_DUMP_BYTES + 1} bytes: at most ${MAX_DUMP_BYTES} (5 MiB); send the part that holds the script`,
    );
    expectError(
      await trace(api, 'x', { 'Content-Type': 'application/json' }),
      400,
      /^Send the body as Content-Type: text\/plain; charset=utf-8; got Content-Type application\/json/,
    );
    expectError(await trace(api, 'print("\uFFFD")'), 400, /not valid UTF-8/);
    const base64 = invoke(
      api.handlers['trace-leak'],
      apiEvent('trace-leak', { projectId: PROJECT_ID, body: Buffer.from([0x70, 0xff, 0xfe]).toString('base64'), isBase64Encoded: true }),
    );
    expectError(await base64, 400, 'The body is not valid UTF-8: send it as UTF-8 text');
  });
});
