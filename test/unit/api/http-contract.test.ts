import { InternalServerError } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as listKeys } from '#api/list-keys';
import { handler as listVersions } from '#api/list-versions';
import { handler as listWebhooks } from '#api/list-webhooks';
import { handler as revokeBulk } from '#api/revoke-bulk';
import { handler as revokeKey } from '#api/revoke-key';
import { handler as rollback } from '#api/rollback';
import { keyOf } from '#store/layout';
import { apiEvent, lambdaContext, type ApiEventInput, type RouteEntry } from '#test-support/fixtures';
import {
  CALLER,
  PROJECT_ID,
  SECONDS_TO_NEXT_WINDOW,
  SECURITY_HEADERS,
  captureOutput,
  conditionFailed,
  expectError,
  invoke,
  projectItem,
  transactionCanceled,
  useMockTable,
} from './mock-table';

const { ddb, givenRequestCount, givenRateLimitReached, givenProject } = useMockTable();

/** Every endpoint with a request that succeeds when the project is the caller's. */
const ENDPOINTS = [
  { entry: 'list-keys', handler: listKeys, body: undefined },
  { entry: 'revoke-key', handler: revokeKey, body: { key_id: 'key_1' } },
  { entry: 'revoke-bulk', handler: revokeBulk, body: { watermark: '0123456789abcdef' } },
  { entry: 'list-versions', handler: listVersions, body: undefined },
  { entry: 'rollback', handler: rollback, body: { version_id: 'ver_1' } },
  { entry: 'list-webhooks', handler: listWebhooks, body: undefined },
] as const satisfies readonly { entry: RouteEntry; handler: unknown; body: unknown }[];

/** The table answers each endpoint's own reads and writes as for an existing key and version. */
function givenEndpointDataExists() {
  ddb.on(QueryCommand).resolves({ Items: [] });
  ddb.on(UpdateCommand, { Key: keyOf.key('key_1') }).resolves({});
  ddb.on(TransactWriteCommand).resolves({});
}

const request = (endpoint: (typeof ENDPOINTS)[number], input: ApiEventInput = {}) =>
  apiEvent(endpoint.entry, { projectId: PROJECT_ID, body: endpoint.body, ...input });

describe.each(ENDPOINTS)('$entry: the HTTP contract every endpoint keeps', (endpoint) => {
  it('answers 200 JSON with the security headers and the rate limit it counted', async () => {
    givenEndpointDataExists();
    givenRequestCount(30);
    const reply = await invoke(endpoint.handler, request(endpoint));
    expect(reply.status).toBe(200);
    expect(reply.headers).toMatchObject(SECURITY_HEADERS);
    expect(reply.headers['RateLimit-Policy']).toBe('"per-token";q=100;w=60');
    expect(reply.headers.RateLimit).toBe(`"per-token";r=70;t=${SECONDS_TO_NEXT_WINDOW}`);
    expect(reply.headers).not.toHaveProperty('Retry-After');
  });

  it('answers an unknown project with 404 {"error":"Project not found"}', async () => {
    givenProject(undefined);
    const reply = await invoke(endpoint.handler, request(endpoint));
    expectError(reply, 404, 'Project not found');
  });

  it("answers another owner's project exactly as an unknown one", async () => {
    givenEndpointDataExists();
    givenProject(projectItem({ ownerId: 'own_somebody_else' }));
    const foreign = await invoke(endpoint.handler, request(endpoint));
    givenProject(undefined);
    const unknown = await invoke(endpoint.handler, request(endpoint));
    expectError(foreign, 404, 'Project not found');
    expect(foreign.raw).toBe(unknown.raw);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('refuses the owner of a project that is not on the Business plan with 403', async () => {
    givenEndpointDataExists();
    givenProject(projectItem({ plan: 'pro' }));
    const reply = await invoke(endpoint.handler, request(endpoint));
    expectError(reply, 403, /Business plan/);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('answers a path id this service could not have made as an unknown project, without reading the table for it', async () => {
    const reply = await invoke(endpoint.handler, request(endpoint, { projectId: 'prj_x%2F..' }));
    expectError(reply, 404, 'Project not found');
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('refuses the 101st request of the minute with 429, Retry-After and the limit in the message, before any other work', async () => {
    givenRateLimitReached();
    const reply = await invoke(endpoint.handler, request(endpoint));
    expectError(reply, 429, 'Rate limit exceeded: 100 requests per minute');
    expect(reply.body.error).toMatch(/100 requests per minute/);
    expect(reply.headers['Retry-After']).toBe(String(SECONDS_TO_NEXT_WINDOW));
    expect(reply.headers.RateLimit).toBe(`"per-token";r=0;t=${SECONDS_TO_NEXT_WINDOW}`);
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('counts the request in the caller token window with a conditional ADD', async () => {
    givenEndpointDataExists();
    await invoke(endpoint.handler, request(endpoint));
    const [count] = ddb.commandCalls(UpdateCommand, { Key: keyOf.rateWindow(CALLER.tokenHash, 1_700_000_040) });
    expect(count?.args[0].input).toMatchObject({
      UpdateExpression: expect.stringContaining('ADD requests :one'),
      ConditionExpression: expect.stringContaining('requests < :limit'),
      ExpressionAttributeValues: expect.objectContaining({ ':limit': 100 }),
    });
  });

  it('answers 401 when API Gateway passed no authorizer context', async () => {
    const reply = await invoke(endpoint.handler, request(endpoint, { caller: null }));
    expectError(reply, 401, /API token/);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers an unexpected table failure with 500 {"error":"Internal error","request_id"} and logs the error', async () => {
    const output = captureOutput();
    ddb.on(GetCommand, { Key: keyOf.project(PROJECT_ID) }).rejects(new InternalServerError({ message: 'table on fire', $metadata: {} }));
    const reply = await invoke(endpoint.handler, request(endpoint), lambdaContext('req-500-test'));
    expect(reply.status).toBe(500);
    expect(reply.headers).toMatchObject(SECURITY_HEADERS);
    expect(reply.body).toEqual({ error: 'Internal error', request_id: 'req-500-test' });
    expect(output.text()).toContain('Unhandled error');
    expect(output.text()).toContain('table on fire');
    expect(output.text()).toContain('req-500-test');
  });
});

describe.each(ENDPOINTS.filter((endpoint) => endpoint.body !== undefined))('$entry: JSON body handling', (endpoint) => {
  it('answers malformed JSON with 400', async () => {
    const reply = await invoke(endpoint.handler, request(endpoint, { body: '{"key_id": ' }));
    expectError(reply, 400, 'Malformed JSON in request body');
  });

  // Spec §4.2: a revoke with an empty body is a 400 saying key_id is required, exactly as for `{}`.
  it.each([
    ['an empty body', ''],
    ['a body of white space', ' \n'],
    ['no body at all', null],
  ])('answers %s with the same 400 as {}, naming the missing field', async (_name, body) => {
    const field = Object.keys(endpoint.body)[0];
    expectError(await invoke(endpoint.handler, request(endpoint, { body: '{}' })), 400, `${field} is required`);
    expectError(await invoke(endpoint.handler, request(endpoint, { body, headers: { 'Content-Type': 'application/json' } })), 400, `${field} is required`);
  });

  it.each(['[]', '"text"', '42', 'null'])('answers the JSON body %s, which is not an object, with 400', async (body) => {
    expectError(await invoke(endpoint.handler, request(endpoint, { body })), 400, 'Request body must be a JSON object');
  });

  it('answers a body with a __proto__ key with 400', async () => {
    const reply = await invoke(endpoint.handler, request(endpoint, { body: '{"__proto__": {"x": 1}}' }));
    expectError(reply, 400, /forbidden key/);
  });

  it('answers an unknown field with 400 naming it', async () => {
    const reply = await invoke(endpoint.handler, request(endpoint, { body: { ...endpoint.body, extra: 1 } }));
    expectError(reply, 400, /Unknown field "extra"/);
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['XML', 'application/xml'],
  ])('answers a %s body with 400 saying to send JSON with Content-Type: application/json', async (_name, contentType) => {
    const reply = await invoke(endpoint.handler, request(endpoint, { headers: { 'Content-Type': contentType } }));
    expectError(reply, 400, `Request body must be a JSON object sent with Content-Type: application/json; got Content-Type ${contentType.split(';')[0]}`);
  });

  // curl -d sends application/x-www-form-urlencoded unless told otherwise; a body that starts with `{` is no form.
  it.each([
    ["curl's default form type", { 'Content-Type': 'application/x-www-form-urlencoded' }],
    ['no content type', { Accept: '*/*' }],
  ])('reads a JSON object sent with %s as JSON', async (_name, headers) => {
    givenEndpointDataExists();
    const event = request(endpoint);
    event.headers = headers;
    expect((await invoke(endpoint.handler, event)).status).toBe(200);
  });

  it.each([
    ["curl's default form type", { 'Content-Type': 'application/x-www-form-urlencoded' }, 'got Content-Type application/x-www-form-urlencoded'],
    ['no content type', { Accept: '*/*' }, 'got no Content-Type'],
  ])('answers a form body sent with %s with 400 saying to send JSON', async (_name, headers, got) => {
    const field = Object.keys(endpoint.body)[0];
    const event = request(endpoint, { body: `${field}=x` });
    event.headers = headers;
    expectError(await invoke(endpoint.handler, event), 400, `Request body must be a JSON object sent with Content-Type: application/json; ${got}`);
  });

  it('accepts the content type in any header case and with a charset', async () => {
    givenEndpointDataExists();
    const event = request(endpoint);
    event.headers = { 'content-TYPE': 'Application/JSON; charset=utf-8' };
    expect((await invoke(endpoint.handler, event)).status).toBe(200);
  });

  it('accepts a base64-encoded body', async () => {
    givenEndpointDataExists();
    const body = Buffer.from(JSON.stringify(endpoint.body)).toString('base64');
    expect((await invoke(endpoint.handler, request(endpoint, { body, isBase64Encoded: true }))).status).toBe(200);
  });

  it('answers a body over 64 KB with 400 before parsing it (the spec has no 413; API Gateway keeps its own for 10 MB)', async () => {
    const body = JSON.stringify({ ...endpoint.body, padding: 'x'.repeat(64 * 1024) });
    expectError(await invoke(endpoint.handler, request(endpoint, { body })), 400, 'Request body too large: at most 64 KB');
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('lets a body of exactly 64 KB through the size check to validation', async () => {
    const prefix = '{"padding":"';
    const body = `${prefix}${'x'.repeat(64 * 1024 - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(64 * 1024);
    const reply = await invoke(endpoint.handler, request(endpoint, { body }));
    expectError(reply, 400, / is required$/);
  });
});

describe.each(ENDPOINTS.filter((endpoint) => endpoint.entry !== 'list-keys'))('$entry: query string', (endpoint) => {
  it('refuses any query parameter, naming it', async () => {
    const reply = await invoke(endpoint.handler, request(endpoint, { query: { limit: '5' } }));
    expectError(reply, 400, 'This endpoint takes no query parameters; remove "limit"');
  });
});

describe('failures reported by the rate limiter itself', () => {
  it('answers 500 without rate headers when the rate window cannot be counted', async () => {
    captureOutput();
    ddb.on(UpdateCommand, { Key: keyOf.rateWindow(CALLER.tokenHash, 1_700_000_040) }).rejects(new InternalServerError({ message: 'down', $metadata: {} }));
    const reply = await invoke(listKeys, apiEvent('list-keys', { projectId: PROJECT_ID }));
    expect(reply.status).toBe(500);
    expect(reply.body.error).toBe('Internal error');
    expect(reply.headers).not.toHaveProperty('RateLimit');
  });

  it('keeps the rate headers on a failure after the request was counted', async () => {
    givenRequestCount(100);
    givenProject(projectItem({ plan: 'free' }));
    const reply = await invoke(listKeys, apiEvent('list-keys', { projectId: PROJECT_ID }));
    expect(reply.status).toBe(403);
    expect(reply.headers.RateLimit).toBe(`"per-token";r=0;t=${SECONDS_TO_NEXT_WINDOW}`);
  });

  it('reads a condition failure of a rollback as 404, not as a refusal by the rate limiter', async () => {
    ddb.on(TransactWriteCommand).rejects(transactionCanceled('ConditionalCheckFailed', 'None'));
    const reply = await invoke(rollback, apiEvent('rollback', { projectId: PROJECT_ID, body: { version_id: 'ver_9' } }));
    expectError(reply, 404, /ver_9/);
    expect(reply.headers).not.toHaveProperty('Retry-After');
  });

  it('reads a condition failure of a revoke as that key, not as a refusal by the rate limiter', async () => {
    ddb.on(UpdateCommand, { Key: keyOf.key('key_9') }).rejects(conditionFailed());
    const reply = await invoke(revokeKey, apiEvent('revoke-key', { projectId: PROJECT_ID, body: { key_id: 'key_9' } }));
    expectError(reply, 404, /key_9/);
  });
});
