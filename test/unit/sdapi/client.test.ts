import { describe, expect, it } from 'vitest';
import { PROJECT_ID, runCli, TOKEN } from '#test-support/sdapi-run-cli';
import { ApiClient, retryAfterSeconds } from '../../../sdapi/client';
import { ApiFailure, EXIT } from '../../../sdapi/errors';

const config = { baseUrl: 'http://api.test', token: TOKEN, projectId: PROJECT_ID, sources: [] };
const client = (fetch: typeof globalThis.fetch) => new ApiClient(config, { fetch, sleep: async () => {} });
const answer =
  (status: number, body: string, headers: Record<string, string> = {}) =>
  async () =>
    new Response(body, { status, headers });

describe('retryAfterSeconds', () => {
  it('reads delta-seconds and HTTP dates, and at least one second', () => {
    expect(retryAfterSeconds('42')).toBe(42);
    expect(retryAfterSeconds('0')).toBe(1);
    expect(retryAfterSeconds('Sat, 22 Nov 2025 05:21:00 GMT', Date.parse('Sat, 22 Nov 2025 05:20:30 GMT'))).toBe(30);
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
  });
});

describe('ApiClient', () => {
  it('fails with the status line when an error has no JSON body', async () => {
    const failure = await client(answer(502, '<html>Bad Gateway</html>'))
      .listWebhooks()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiFailure);
    expect(failure).toMatchObject({ message: 'HTTP 502', status: 502, request: `GET /v1/projects/${PROJECT_ID}/webhooks` });
  });

  it('fails on a 200 whose body is not what the API promises', async () => {
    const failure = await client(answer(200, '{"versions":"none"}'))
      .listVersions()
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ message: expect.stringMatching(/^Unexpected answer from the API: versions: /) });
  });

  it('sends the project id encoded in the path and the token only in the Authorization header', async () => {
    const seen: Request[] = [];
    const fetch: typeof globalThis.fetch = async (input, init) => {
      seen.push(new Request(input, init));
      return new Response('{"ok":true,"revoked_count":0,"complete":true}');
    };
    await new ApiClient({ ...config, projectId: 'prj_a-b' }, { fetch, sleep: async () => {} }).revokeBulk('3f9a1c7e5b2d8046');
    expect(seen[0]!.url).toBe('http://api.test/v1/projects/prj_a-b/keys/revoke-bulk');
    expect(seen[0]!.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(seen[0]!.headers.get('content-type')).toBe('application/json');
    expect(await seen[0]!.text()).toBe('{"watermark":"3f9a1c7e5b2d8046"}');
  });
});

describe('ApiClient against a stack deployed before bulk revokes could stop early', () => {
  it('reads a bulk revoke answer without `complete` as complete, so it does not repeat the call', async () => {
    let calls = 0;
    const fetch: typeof globalThis.fetch = async () => {
      calls++;
      return new Response('{"ok":true,"revoked_count":4}');
    };
    const old = new ApiClient(config, { fetch, sleep: async () => {} });
    expect(await old.revokeBulkAll('3f9a1c7e5b2d8046')).toEqual({ revoked_count: 4, calls: 1 });
    expect(calls).toBe(1);
  });
});

describe('sdapi output', () => {
  it('hides the token even when a failing library quotes it', async () => {
    const fetch: typeof globalThis.fetch = async (_input, init) => {
      throw new TypeError('fetch failed', { cause: new Error(`invalid header value "${new Headers(init?.headers).get('authorization')}"`) });
    };
    const result = await runCli(['webhooks', 'list'], { api: { fetch } });
    expect(result.code).toBe(EXIT.apiError);
    expect(result.stderr).toBe(
      `sdapi: Cannot reach https://api.test: invalid header value "Bearer [token hidden]" (GET /v1/projects/${PROJECT_ID}/webhooks)\n`,
    );
  });
});
