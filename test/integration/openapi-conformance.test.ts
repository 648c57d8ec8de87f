import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unixSeconds } from '#domain/model';
import { hashToken, issueToken, newApiToken } from '#domain/tokens';
import { buildOpenApiDocument } from '#http/openapi/document';
import { SCRIPT_ROUTE } from '#http/public-routes';
import { type DemoSeed, seedDemo } from '#local/seed';
import { type LocalServer, startLocalServer } from '#local/server';
import { startTelemetryPipeline, type TelemetryPipeline } from '#local/telemetry-pipeline';
import { createTestTable, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';
import { OpenApiValidator } from '../../scripts/openapi-validator';

/**
 * Real answers of the local server (the deployed authorizer and handlers behind the API Gateway stand-in,
 * on DynamoDB Local) held against the OpenAPI document: every status a test provokes must be documented
 * for its operation, and the body must match the documented schema.
 */
const validator = new OpenApiValidator(buildOpenApiDocument());

const scripts = new MemoryScriptStore();
let table: TestTable;
let server: LocalServer;
let telemetry: TelemetryPipeline;
let demo: DemoSeed;

beforeAll(async () => {
  table = await createTestTable('openapi-conformance');
  demo = await seedDemo(table.stores, scripts, unixSeconds());
  telemetry = startTelemetryPipeline({ store: table.stores.telemetry });
  server = await startLocalServer({ port: 0, stores: table.stores, telemetry: telemetry.sink, scripts });
});

afterAll(async () => {
  await server?.close();
  await telemetry?.stop();
  await table?.drop();
});

interface Exchange {
  status: number;
  headers: Headers;
  body: unknown;
}

/** Call `method path` (a documented path template) for the demo project and check the answer against the document. */
async function call(
  method: 'GET' | 'POST',
  path: string,
  options: { query?: string; body?: unknown; token?: string | null; projectId?: string; contentType?: string; rawBody?: string } = {},
): Promise<Exchange> {
  const url = `${server.url}${path.replace('{id}', options.projectId ?? demo.projectId)}${options.query ?? ''}`;
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? demo.token : options.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined) headers['Content-Type'] = options.contentType ?? 'application/json';
  const response = await fetch(url, { method, headers, body });
  const exchange = { status: response.status, headers: response.headers, body: await response.json() };
  expect(
    validator.responseErrors(method, path, exchange.status, exchange.body),
    `${method} ${path} ${exchange.status} ${JSON.stringify(exchange.body)}`,
  ).toEqual([]);
  if (exchange.status >= 400) {
    // The document's example messages are the service's real ones (ids and watermarks aside).
    const documented = validator.documentedErrors(method, path, exchange.status).map(withoutIds);
    expect(documented, `${method} ${path} ${exchange.status}`).toContain(withoutIds((exchange.body as { error: string }).error));
  }
  return exchange;
}

const withoutIds = (message: string) => message.replace(/\b(prj|key|ver)_[0-9a-f]{20}\b/g, '$1_…').replace(/\b[0-9a-f]{16}\b/g, '<watermark>');

describe('200 answers of the local stack match openapi.json', () => {
  it('GET keys, with the documented rate limit headers', async () => {
    const page = await call('GET', '/v1/projects/{id}/keys', { query: '?limit=5&offset=3' });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: demo.keyCount });
    expect((page.body as { keys: unknown[] }).keys).toHaveLength(5);
    expect(page.headers.get('ratelimit-policy')).toBe('"per-token";q=100;w=60');
    expect(page.headers.get('ratelimit')).toMatch(/^"per-token";r=\d+;t=\d+$/);
  });

  it('POST keys/revoke', async () => {
    const { body } = await call('GET', '/v1/projects/{id}/keys', { query: '?limit=1' });
    const keyId = (body as { keys: { id: string }[] }).keys[0]!.id;
    expect(await call('POST', '/v1/projects/{id}/keys/revoke', { body: { key_id: keyId } })).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('POST keys/revoke-bulk', async () => {
    const result = await call('POST', '/v1/projects/{id}/keys/revoke-bulk', { body: { watermark: demo.sharedWatermark } });
    expect(result).toMatchObject({ status: 200, body: { ok: true, revoked_count: 2, complete: true } });
  });

  it('GET versions and POST versions/rollback', async () => {
    const versions = await call('GET', '/v1/projects/{id}/versions');
    expect(versions).toMatchObject({ status: 200, body: { current_version_id: demo.versionIds.at(-1) } });
    const rollback = await call('POST', '/v1/projects/{id}/versions/rollback', { body: { version_id: demo.versionIds[0] } });
    expect(rollback).toMatchObject({ status: 200, body: { ok: true, current_version_id: demo.versionIds[0] } });
  });

  it('GET webhooks', async () => {
    const result = await call('GET', '/v1/projects/{id}/webhooks');
    expect(result).toMatchObject({ status: 200, body: { webhooks: [{ id: demo.webhookId, url: demo.webhookUrl, enabled: 1 }] } });
  });
});

describe('error answers of the local stack match openapi.json', () => {
  it('401 without a token and with an unknown one', async () => {
    expect((await call('GET', '/v1/projects/{id}/keys', { token: null })).status).toBe(401);
    expect((await call('POST', '/v1/projects/{id}/keys/revoke', { token: newApiToken(), body: { key_id: 'key_x' } })).status).toBe(401);
  });

  it('404 for an unknown project, key and version', async () => {
    expect(await call('GET', '/v1/projects/{id}/versions', { projectId: 'prj_00000000000000000000' })).toMatchObject({
      status: 404,
      body: { error: 'Project not found' },
    });
    expect((await call('POST', '/v1/projects/{id}/keys/revoke', { body: { key_id: 'key_00000000000000000000' } })).status).toBe(404);
    expect((await call('POST', '/v1/projects/{id}/versions/rollback', { body: { version_id: 'ver_00000000000000000000' } })).status).toBe(404);
  });

  it('400 for a bad query, a missing field, a bad watermark and malformed JSON', async () => {
    expect((await call('GET', '/v1/projects/{id}/keys', { query: '?limit=500' })).status).toBe(400);
    expect(await call('POST', '/v1/projects/{id}/keys/revoke', { body: {} })).toMatchObject({ status: 400, body: { error: 'key_id is required' } });
    expect((await call('POST', '/v1/projects/{id}/keys/revoke-bulk', { body: { watermark: `WM_${demo.sharedWatermark}` } })).status).toBe(400);
    expect((await call('POST', '/v1/projects/{id}/versions/rollback', { rawBody: '{"version_id":' })).status).toBe(400);
  });

  it('400 for a body over 64 KB and for a body that is not JSON (the spec has no 413 or 415)', async () => {
    expect((await call('POST', '/v1/projects/{id}/keys/revoke', { rawBody: JSON.stringify({ key_id: 'k'.repeat(70 * 1024) }) })).status).toBe(400);
    expect((await call('POST', '/v1/projects/{id}/keys/revoke', { rawBody: 'key_id=key_x', contentType: 'text/plain' })).status).toBe(400);
  });

  it('429 with Retry-After once a token passes 100 requests in a minute', async () => {
    const token = newApiToken();
    await issueToken(table.stores.tokens, { ownerId: demo.ownerId, tokenHash: hashToken(token), now: unixSeconds() });
    let refused: Exchange | undefined;
    // 100 fit in a window; a window boundary mid-loop can reset the count once, hence the margin.
    for (let i = 0; i < 250 && !refused; i++) {
      const response = await fetch(`${server.url}/v1/projects/${demo.projectId}/webhooks`, { headers: { Authorization: `Bearer ${token}` } });
      if (response.status === 429) refused = { status: 429, headers: response.headers, body: await response.json() };
      else await response.arrayBuffer();
    }
    expect(refused).toBeDefined();
    expect(validator.responseErrors('GET', '/v1/projects/{id}/webhooks', 429, refused!.body)).toEqual([]);
    expect(refused!.body).toEqual({ error: 'Rate limit exceeded: 100 requests per minute' });
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused!.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});

describe('POST /v1/loader/script answers match openapi.json', () => {
  const body = (key: string) => ({ project_id: demo.projectId, key, fingerprint: 'e'.repeat(64), executor: 'Wave' });

  it('200 in the documented media type with the documented headers; 403, 404 and 400 in the documented JSON', async () => {
    // A key of its own: the demo key is revoked by a test above.
    const [buyer] = await table.stores.dashboard.issueKeys({ projectId: demo.projectId, count: 1, tier: 'standard', maxUses: null, now: unixSeconds() });
    const served = await fetch(`${server.url}${SCRIPT_ROUTE.path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body(buyer!.key)),
    });
    expect(served.status).toBe(200);
    const documented = validator.document.paths[SCRIPT_ROUTE.path]?.post?.responses[200] as {
      content: Record<string, unknown>;
      headers: Record<string, unknown>;
    };
    expect(Object.keys(documented.content)).toEqual([served.headers.get('content-type')]);
    for (const header of Object.keys(documented.headers)) expect(served.headers.get(header), header).not.toBeNull();
    await served.arrayBuffer();

    const refused = await call('POST', SCRIPT_ROUTE.path, { token: null, body: body('sdk_not-a-key') });
    expect(refused).toMatchObject({ status: 403, body: { valid: false, code: 'KEY_INVALID' } });
    const empty = await table.stores.dashboard.createProject({ ownerId: demo.ownerId, name: 'Nothing uploaded', plan: 'business', now: unixSeconds() });
    const [fresh] = await table.stores.dashboard.issueKeys({ projectId: empty, count: 1, tier: 'standard', maxUses: null, now: unixSeconds() });
    expect((await call('POST', SCRIPT_ROUTE.path, { token: null, body: { ...body(fresh!.key), project_id: empty } })).status).toBe(404);
    expect((await call('POST', SCRIPT_ROUTE.path, { token: null, body: { project_id: demo.projectId } })).status).toBe(400);
  });
});
