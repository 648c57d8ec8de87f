import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Project } from '#domain/model';
import { KEYS_PAGE } from '#schemas/requests';
import {
  CALLER,
  captureOutput,
  countEarlierRequests,
  expectError,
  invoke,
  type MemoryApi,
  memoryApi,
  PROJECT_ID,
  SECONDS_TO_NEXT_WINDOW,
  SECURITY_HEADERS,
  UNKNOWN_PROJECT_ID,
  WINDOW_START,
  watchStoreCalls,
} from '#test-support/api-harness';
import { type ApiEventInput, apiEvent, lambdaContext, type RouteEntry } from '#test-support/fixtures';

/** Every endpoint with a request that succeeds when the project is the caller's. */
const ENDPOINTS = [
  { entry: 'list-keys', body: undefined },
  { entry: 'revoke-key', body: { key_id: 'key_1' } },
  { entry: 'revoke-bulk', body: { watermark: '0123456789abcdef' } },
  { entry: 'list-versions', body: undefined },
  { entry: 'rollback', body: { version_id: 'ver_1' } },
  { entry: 'list-webhooks', body: undefined },
] as const satisfies readonly { entry: RouteEntry; body: unknown }[];
type ContractEndpoint = (typeof ENDPOINTS)[number];

/** The handlers on a store where the project holds the key and the version the requests above name. */
function contractApi(project: Partial<Project> = {}): MemoryApi {
  const api = memoryApi(project);
  api.store.addKeys(PROJECT_ID, [{ id: 'key_1' }]);
  api.store.addVersions(PROJECT_ID, { id: 'ver_1', version_number: 1, uploaded_at: 1_699_000_000, size_bytes: 2048, notes: '' });
  return api;
}

let api: MemoryApi;
beforeEach(() => {
  api = contractApi();
});
afterEach(() => vi.restoreAllMocks());

const request = (endpoint: ContractEndpoint, input: ApiEventInput = {}) => apiEvent(endpoint.entry, { projectId: PROJECT_ID, body: endpoint.body, ...input });
const handle = (endpoint: ContractEndpoint, event: APIGatewayProxyEvent, context = lambdaContext()) => invoke(api.handlers[endpoint.entry], event, context);

describe.each(ENDPOINTS)('$entry: the HTTP contract every endpoint keeps', (endpoint) => {
  it('answers 200 JSON with the security headers and the rate limit it counted', async () => {
    await countEarlierRequests(api.store, 29);
    const reply = await handle(endpoint, request(endpoint));
    expect(reply.status).toBe(200);
    expect(reply.headers).toMatchObject(SECURITY_HEADERS);
    expect(reply.headers['RateLimit-Policy']).toBe('"per-token";q=100;w=60');
    expect(reply.headers.RateLimit).toBe(`"per-token";r=70;t=${SECONDS_TO_NEXT_WINDOW}`);
    expect(reply.headers).not.toHaveProperty('Retry-After');
  });

  it('answers an unknown project with 404 {"error":"Project not found"}', async () => {
    const reply = await handle(endpoint, request(endpoint, { projectId: UNKNOWN_PROJECT_ID }));
    expectError(reply, 404, 'Project not found');
  });

  it("answers another owner's project exactly as an unknown one, without doing the endpoint's work", async () => {
    api = contractApi({ ownerId: 'own_somebody_else' });
    const calls = watchStoreCalls(api.store);
    const foreign = await handle(endpoint, request(endpoint));
    const unknown = await handle(endpoint, request(endpoint, { projectId: UNKNOWN_PROJECT_ID }));
    expectError(foreign, 404, 'Project not found');
    expect(foreign.raw).toBe(unknown.raw);
    expect(calls()).toEqual(['countRequest', 'getProject']);
  });

  it("refuses the owner of a project that is not on the Business plan with 403, without doing the endpoint's work", async () => {
    api = contractApi({ plan: 'pro' });
    const calls = watchStoreCalls(api.store);
    const reply = await handle(endpoint, request(endpoint));
    expectError(reply, 403, /Business plan/);
    expect(calls()).toEqual(['countRequest', 'getProject']);
  });

  it('answers a path id this service could not have made as an unknown project, without looking it up', async () => {
    const calls = watchStoreCalls(api.store);
    const reply = await handle(endpoint, request(endpoint, { projectId: 'prj_x%2F..' }));
    expectError(reply, 404, 'Project not found');
    expect(calls()).toEqual(['countRequest']);
  });

  it('refuses the 101st request of the minute with 429, Retry-After and the limit in the message, before any other work', async () => {
    await countEarlierRequests(api.store, 100);
    const calls = watchStoreCalls(api.store);
    const reply = await handle(endpoint, request(endpoint));
    expectError(reply, 429, 'Rate limit exceeded: 100 requests per minute');
    expect(reply.headers['Retry-After']).toBe(String(SECONDS_TO_NEXT_WINDOW));
    expect(reply.headers.RateLimit).toBe(`"per-token";r=0;t=${SECONDS_TO_NEXT_WINDOW}`);
    expect(calls()).toEqual(['countRequest']);
  });

  it("counts the request in the caller's token window of the current minute", async () => {
    await handle(endpoint, request(endpoint));
    expect(api.store.rateWindows()).toEqual([{ bucket: CALLER.tokenHash, start: WINDOW_START, seconds: 60, requests: 1 }]);
  });

  it('answers 401 when API Gateway passed no authorizer context, without touching the stores', async () => {
    const calls = watchStoreCalls(api.store);
    const reply = await handle(endpoint, request(endpoint, { caller: null }));
    expectError(reply, 401, /API token/);
    expect(calls()).toEqual([]);
  });

  it('answers an unexpected store failure with 500 {"error":"Internal error","request_id"} and logs the error', async () => {
    const output = captureOutput();
    vi.spyOn(api.store, 'getProject').mockRejectedValue(new Error('table on fire'));
    const reply = await handle(endpoint, request(endpoint), lambdaContext('req-500-test'));
    expect(reply.status).toBe(500);
    expect(reply.headers).toMatchObject(SECURITY_HEADERS);
    expect(reply.body).toEqual({ error: 'Internal error', request_id: 'req-500-test' });
    expect(output.text()).toContain('Unhandled error');
    expect(output.text()).toContain('table on fire');
    expect(output.text()).toContain('req-500-test');
  });

  it("logs with API Gateway's request id as requestId (the access log's field) and Lambda's, and never a previous request's", async () => {
    const output = captureOutput();
    vi.spyOn(api.store, 'getProject').mockRejectedValue(new Error('table on fire'));
    await handle(endpoint, request(endpoint, { requestId: 'apigw-first' }), lambdaContext('lambda-first'));
    await handle(endpoint, request(endpoint, { requestId: 'apigw-second' }), lambdaContext('lambda-second'));
    const lines = output
      .text()
      .split('\n')
      .filter((line) => line.includes('Unhandled error'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map(({ requestId, function_request_id }) => ({ requestId, function_request_id }))).toEqual([
      { requestId: 'apigw-first', function_request_id: 'lambda-first' },
      { requestId: 'apigw-second', function_request_id: 'lambda-second' },
    ]);
  });
});

describe.each(ENDPOINTS.filter((endpoint) => endpoint.body !== undefined))('$entry: JSON body handling', (endpoint) => {
  it('answers malformed JSON with 400', async () => {
    const reply = await handle(endpoint, request(endpoint, { body: '{"key_id": ' }));
    expectError(reply, 400, 'Request body is not valid JSON: send a JSON object with Content-Type: application/json');
  });

  // Spec §4.2: a revoke with an empty body is a 400 saying key_id is required, exactly as for `{}`.
  it.each([
    ['an empty body', ''],
    ['a body of white space', ' \n'],
    ['no body at all', null],
  ])('answers %s with the same 400 as {}, naming the missing field', async (_name, body) => {
    const field = Object.keys(endpoint.body)[0];
    expectError(await handle(endpoint, request(endpoint, { body: '{}' })), 400, `${field} is required`);
    expectError(await handle(endpoint, request(endpoint, { body, headers: { 'Content-Type': 'application/json' } })), 400, `${field} is required`);
  });

  it.each(['[]', '"text"', '42', 'null'])('answers the JSON body %s, which is not an object, with 400', async (body) => {
    expectError(await handle(endpoint, request(endpoint, { body })), 400, 'Request body must be a JSON object');
  });

  it('answers a body with a __proto__ key with 400', async () => {
    const reply = await handle(endpoint, request(endpoint, { body: '{"__proto__": {"x": 1}}' }));
    expectError(reply, 400, /forbidden key/);
  });

  it('answers an unknown field with 400 naming it', async () => {
    const reply = await handle(endpoint, request(endpoint, { body: { ...endpoint.body, extra: 1 } }));
    expectError(reply, 400, /Unknown field "extra"/);
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['XML', 'application/xml'],
  ])('answers a %s body with 400 saying to send JSON with Content-Type: application/json', async (_name, contentType) => {
    const reply = await handle(endpoint, request(endpoint, { headers: { 'Content-Type': contentType } }));
    expectError(reply, 400, `Request body must be a JSON object sent with Content-Type: application/json; got Content-Type ${contentType.split(';')[0]}`);
  });

  // curl -d sends application/x-www-form-urlencoded unless told otherwise; a body that starts with `{` is no form.
  it.each([
    ["curl's default form type", { 'Content-Type': 'application/x-www-form-urlencoded' }],
    ['no content type', { Accept: '*/*' }],
  ])('reads a JSON object sent with %s as JSON', async (_name, headers) => {
    const event = request(endpoint);
    event.headers = headers;
    expect((await handle(endpoint, event)).status).toBe(200);
  });

  it.each([
    ["curl's default form type", { 'Content-Type': 'application/x-www-form-urlencoded' }, 'got Content-Type application/x-www-form-urlencoded'],
    ['no content type', { Accept: '*/*' }, 'got no Content-Type'],
  ])('answers a form body sent with %s with 400 saying to send JSON', async (_name, headers, got) => {
    const field = Object.keys(endpoint.body)[0];
    const event = request(endpoint, { body: `${field}=x` });
    event.headers = headers;
    expectError(await handle(endpoint, event), 400, `Request body must be a JSON object sent with Content-Type: application/json; ${got}`);
  });

  it('accepts the content type in any header case and with a charset', async () => {
    const event = request(endpoint);
    event.headers = { 'content-TYPE': 'Application/JSON; charset=utf-8' };
    expect((await handle(endpoint, event)).status).toBe(200);
  });

  it('accepts a base64-encoded body', async () => {
    const body = Buffer.from(JSON.stringify(endpoint.body)).toString('base64');
    expect((await handle(endpoint, request(endpoint, { body, isBase64Encoded: true }))).status).toBe(200);
  });

  it('answers a body over 64 KB with 400 before parsing it (the spec has no 413; API Gateway keeps its own for 10 MB)', async () => {
    const calls = watchStoreCalls(api.store);
    const body = JSON.stringify({ ...endpoint.body, padding: 'x'.repeat(64 * 1024) });
    expectError(await handle(endpoint, request(endpoint, { body })), 400, 'Request body too large: at most 64 KB');
    expect(calls()).toEqual(['countRequest']);
  });

  it('lets a body of exactly 64 KB through the size check to validation', async () => {
    const prefix = '{"padding":"';
    const body = `${prefix}${'x'.repeat(64 * 1024 - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(64 * 1024);
    const reply = await handle(endpoint, request(endpoint, { body }));
    expectError(reply, 400, / is required$/);
  });
});

/** The list routes that page (their own query), and the rest, which take no query at all. */
const PAGED = new Set(['list-keys', 'list-versions', 'list-webhooks']);

describe.each(ENDPOINTS.filter((endpoint) => !PAGED.has(endpoint.entry)))('$entry: query string', (endpoint) => {
  it('refuses any query parameter, naming it', async () => {
    const reply = await handle(endpoint, request(endpoint, { query: { limit: '5' } }));
    expectError(reply, 400, 'This endpoint takes no query parameters; remove "limit"');
  });
});

describe.each(ENDPOINTS.filter((endpoint) => PAGED.has(endpoint.entry) && endpoint.entry !== 'list-keys'))('$entry: its page', (endpoint) => {
  it('refuses a limit out of range, a negative offset and any other parameter, naming it', async () => {
    expectError(await handle(endpoint, request(endpoint, { query: { limit: '101' } })), 400, 'limit must be a whole number between 1 and 100');
    expectError(
      await handle(endpoint, request(endpoint, { query: { offset: '-1' } })),
      400,
      `offset must be a whole number between 0 and ${KEYS_PAGE.maxOffset}`,
    );
    expectError(await handle(endpoint, request(endpoint, { query: { page: '2' } })), 400, 'Unknown query parameter "page"; allowed: limit, offset');
  });
});

describe('failures reported by the rate limiter itself', () => {
  const listKeys = () => invoke(api.handlers['list-keys'], apiEvent('list-keys', { projectId: PROJECT_ID }));

  it('answers 500 without rate headers when the rate window cannot be counted', async () => {
    captureOutput();
    vi.spyOn(api.store, 'countRequest').mockRejectedValue(new Error('down'));
    const reply = await listKeys();
    expect(reply.status).toBe(500);
    expect(reply.body.error).toBe('Internal error');
    expect(reply.headers).not.toHaveProperty('RateLimit');
  });

  it('keeps the rate headers on a failure after the request was counted', async () => {
    api = memoryApi({ plan: 'free' });
    await countEarlierRequests(api.store, 99);
    const reply = await listKeys();
    expect(reply.status).toBe(403);
    expect(reply.headers.RateLimit).toBe(`"per-token";r=0;t=${SECONDS_TO_NEXT_WINDOW}`);
  });
});
