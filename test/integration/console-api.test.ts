import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@aws-lambda-powertools/logger';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '#adapters/layout';
import { SESSION_IDLE_SECONDS, SESSION_MAX_SECONDS, sessionHashOf } from '#domain/console-session';
import type { PendingUpload, UploadStaging } from '#domain/ports';
import { rateWindowAt } from '#domain/rate-limit';
import { sha256Hex } from '#domain/scripts';
import { callerOfToken, hashToken, issueToken, newApiToken, revokeToken } from '#domain/tokens';
import { type ConsoleHandler, consoleStoresOf, createConsoleHandler } from '#http/console-api';
import { buildHttpApiEvent } from '#local/proxy-event';
import { createTestTable, FIXED_NOW, lambdaContext, type SeededOwner, scanTable, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * The console's API on DynamoDB Local, called as its Lambda is (payload 2.0 events) with an injected clock: the
 * session's cookie, Origin and expiry rules, a revoked token ending its session, a read session refused every
 * change, and each console route's main path on the real stores.
 */
const ORIGIN = 'http://127.0.0.1:3000';
const WEBHOOK_URL = 'https://discord.com/api/webhooks/123456789012345678/test-token_abc';

let table: TestTable;
let clock = FIXED_NOW;
let owner: SeededOwner;
let reader: SeededOwner;
let stranger: SeededOwner;
let projectId: string;
let handler: ConsoleHandler;
let discord: Server;
const posted: { path: string; body: unknown }[] = [];
const staged = new Map<string, Uint8Array>();
const scripts = new MemoryScriptStore();

const stagingKey = (upload: Pick<PendingUpload, 'projectId' | 'uploadId'>) => `${upload.projectId}/${upload.uploadId}`;
const staging: UploadStaging = {
  presign: async (upload) => ({ url: `${ORIGIN}/_local/uploads/${stagingKey(upload)}`, headers: { 'Content-Type': 'application/octet-stream' } }),
  read: async (upload) => staged.get(stagingKey(upload)),
  discard: async (upload) => void staged.delete(stagingKey(upload)),
};

interface Call {
  method?: string;
  body?: unknown;
  cookie?: string;
  origin?: string | null;
  host?: string;
}

async function call(path: string, options: Call = {}) {
  const method = options.method ?? (options.body === undefined ? 'GET' : 'POST');
  const [rawPath = '', query = ''] = path.split('?');
  const headers: [string, string][] = [['host', options.host ?? '127.0.0.1:3000']];
  const origin = options.origin === undefined ? ORIGIN : options.origin;
  if (origin !== null) headers.push(['origin', origin]);
  if (options.cookie) headers.push(['cookie', options.cookie]);
  if (options.body !== undefined) headers.push(['content-type', 'application/json']);
  const event = buildHttpApiEvent({
    method,
    routePath: '$default',
    rawPath: `/console/api${rawPath}`,
    rawQueryString: query,
    headerPairs: headers,
    body: options.body === undefined ? null : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    isBase64Encoded: false,
    requestId: `req-${Math.random()}`,
    timeEpoch: clock * 1000,
    sourceIp: '127.0.0.1',
    stage: '$default',
    accountId: '000000000000',
    apiId: 'local',
    domainName: '127.0.0.1',
  });
  const result = await handler(event, lambdaContext());
  const text = result.body ?? '';
  const json = result.headers?.['Content-Type'] === 'application/json' && text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  return { status: result.statusCode, headers: result.headers ?? {}, cookies: result.cookies ?? [], body: json, text };
}

/** An array field of an answer's body, typed for the test. */
const listOf = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

async function signIn(token: string, options: Call = {}): Promise<string> {
  const answer = await call('/session', { ...options, body: { token } });
  expect(answer.status).toBe(200);
  const cookie = answer.cookies[0] ?? '';
  return cookie.split(';')[0] ?? '';
}

beforeAll(async () => {
  table = await createTestTable('console-api');
  discord = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      posted.push({ path: req.url ?? '', body: JSON.parse(body) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => discord.listen(0, '127.0.0.1', resolve));
  handler = createConsoleHandler({
    stores: consoleStoresOf(table.stores),
    keySecret: { get: async () => new Uint8Array(32) },
    now: () => clock,
    logger: new Logger({ serviceName: 'console-api-test', logLevel: 'SILENT' }),
    scripts,
    staging,
    tokenKeys: { register: async () => undefined, revoke: async () => undefined },
    discordApiBase: `http://127.0.0.1:${(discord.address() as AddressInfo).port}`,
    loaderBaseUrl: 'https://loader.example.com',
  });
  owner = await seedOwner(table.stores);
  // A read token of the same owner, so its session sees the owner's project.
  const readToken = newApiToken();
  await issueToken(table.stores.tokens, { ownerId: owner.ownerId, tokenHash: hashToken(readToken), now: FIXED_NOW, scope: 'read' });
  reader = { ...callerOfToken(owner.ownerId, hashToken(readToken), 'read'), token: readToken };
  stranger = await seedOwner(table.stores);
  ({ projectId } = await seedProject(table.stores, { ownerId: owner.ownerId, name: 'Console Script', keys: 3, versions: ['first'], webhooks: [] }));
  await seedProject(table.stores, { ownerId: stranger.ownerId, name: 'Not yours' });
});

afterAll(async () => {
  await new Promise((resolve) => discord.close(resolve));
  await table.drop();
});

describe('console session', () => {
  it('signs in with an API token: 200 with owner and scope, and an HttpOnly SameSite=Strict cookie on /console without Domain or Secure on http', async () => {
    const answer = await call('/session', { body: { token: owner.token } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ owner_id: owner.ownerId, scope: 'write' });
    const [cookie = ''] = answer.cookies;
    const attributes = cookie.split(';').map((part) => part.trim());
    expect(attributes[0]).toMatch(/^sd_session=sds_[A-Za-z0-9_-]{43}$/);
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/console']));
    expect(attributes.some((part) => /^(Domain|Secure)/i.test(part))).toBe(false);
  });

  it('sets Secure on the cookie when the console is served over https', async () => {
    const answer = await call('/session', { body: { token: owner.token }, host: 'console.example.com', origin: 'https://console.example.com' });
    expect(answer.status).toBe(200);
    expect(answer.cookies[0]).toMatch(/; Secure/);
  });

  it('stores the session only as a hash: no item holds the cookie value', async () => {
    const cookie = await signIn(owner.token);
    const secret = cookie.slice('sd_session='.length);
    const items = JSON.stringify(await scanTable(table));
    expect(items).not.toContain(secret);
  });

  it('refuses an unknown token with 401 and no cookie, and a missing body with 400', async () => {
    const unknown = await call('/session', { body: { token: 'sdt_nobody' } });
    expect(unknown.status).toBe(401);
    expect(unknown.cookies).toEqual([]);
    expect(unknown.body).toHaveProperty('error');
    const missing = await call('/session', { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.cookies).toEqual([]);
  });

  it('refuses a change without the console Origin (sign-in included) with 403 and writes nothing', async () => {
    const before = (await scanTable(table)).length;
    for (const origin of [null, 'https://evil.example.com', 'http://127.0.0.1:3001']) {
      const answer = await call('/session', { body: { token: owner.token }, origin });
      expect(answer.status).toBe(403);
      expect(answer.cookies).toEqual([]);
    }
    const cookie = await signIn(owner.token);
    const settled = (await scanTable(table)).length;
    const revoke = await call(`/v1/projects/${projectId}/keys/revoke-bulk`, {
      cookie,
      origin: 'https://evil.example.com',
      body: { watermark: '0123456789abcdef' },
    });
    expect(revoke.status).toBe(403);
    expect((await scanTable(table)).length).toBe(settled);
    expect(settled).toBe(before + 1);
  });

  it('answers GET /session with the owner and scope while signed in, 401 without a cookie', async () => {
    const cookie = await signIn(owner.token);
    expect(await call('/session', { cookie })).toMatchObject({ status: 200, body: { owner_id: owner.ownerId, scope: 'write' } });
    expect((await call('/session')).status).toBe(401);
    expect((await call(`/projects`)).status).toBe(401);
  });

  it('signs out: 204, the cookie cleared, and the same cookie gets 401 after', async () => {
    const cookie = await signIn(owner.token);
    const out = await call('/session', { method: 'DELETE', cookie });
    expect(out.status).toBe(204);
    expect(out.cookies[0]).toMatch(/^sd_session=; Path=\/console; Max-Age=0/);
    expect((await call('/session', { cookie })).status).toBe(401);
  });

  it('ends a session after 12 hours without use, and a used one after 7 days in all', async () => {
    const start = clock;
    try {
      const idle = await signIn(owner.token);
      clock = start + SESSION_IDLE_SECONDS - 60;
      expect((await call('/session', { cookie: idle })).status).toBe(200);
      clock += SESSION_IDLE_SECONDS + 1;
      expect((await call('/session', { cookie: idle })).status).toBe(401);

      clock = start;
      const used = await signIn(owner.token);
      while (clock < start + SESSION_MAX_SECONDS - SESSION_IDLE_SECONDS) {
        clock += SESSION_IDLE_SECONDS - 3600;
        expect((await call('/session', { cookie: used })).status).toBe(200);
      }
      clock = start + SESSION_MAX_SECONDS;
      expect((await call('/session', { cookie: used })).status).toBe(401);
    } finally {
      clock = start;
    }
  });

  it('ends the session on its next request once its token is revoked', async () => {
    const other = await seedOwner(table.stores);
    const cookie = await signIn(other.token);
    expect((await call('/session', { cookie })).status).toBe(200);
    const record = await table.stores.tokens.tokenById(other.tokenId);
    if (!record || record.revokedAt !== undefined) throw new Error('token not found');
    expect(await revokeToken(table.stores.tokens, record, clock)).toBe(true);
    expect((await call('/session', { cookie })).status).toBe(401);
    expect((await call('/projects', { cookie })).status).toBe(401);
  });

  it('lets a read session read everything and refuses every change with 403 naming the scope', async () => {
    const cookie = await signIn(reader.token);
    expect((await call(`/v1/projects/${projectId}/keys`, { cookie })).status).toBe(200);
    expect((await call(`/projects/${projectId}/keys/search`, { cookie })).status).toBe(200);
    expect((await call(`/projects/${projectId}/webhooks`, { cookie })).status).toBe(200);
    const changes: [string, Call][] = [
      [`/v1/projects/${projectId}/keys/revoke`, { body: { key_id: 'key_0123456789abcdef0123' } }],
      [`/v1/projects/${projectId}/keys`, { body: { count: 1 } }],
      [`/projects/${projectId}/keys/revoke-selected`, { body: { key_ids: ['key_0123456789abcdef0123'] } }],
      [`/projects/${projectId}/webhooks`, { body: { url: WEBHOOK_URL, events: ['version_deployed'] } }],
      [`/projects/${projectId}/versions/uploads`, { body: { size_bytes: 1, sha256: sha256Hex('x') } }],
      [`/projects/${projectId}/leak/revoke`, { body: { watermarks: ['0123456789abcdef'] } }],
      ['/tokens', { body: { scope: 'read' } }],
      [`/projects/${projectId}/discord`, { method: 'PUT', body: { public_key: 'ab'.repeat(32) } }],
      [`/projects/${projectId}/discord`, { method: 'DELETE' }],
    ];
    for (const [path, options] of changes) {
      const answer = await call(path, { ...options, cookie });
      expect(answer.status, path).toBe(403);
      expect(String(answer.body?.error), path).toMatch(/read scope.*needs the write scope/);
    }
  });

  it('answers 429 past the session limit, and counts nothing against the token', async () => {
    const other = await seedOwner(table.stores);
    const cookie = await signIn(other.token);
    const hash = sessionHashOf(cookie.slice('sd_session='.length));
    const window = rateWindowAt(clock);
    await table.db.send(
      new PutCommand({ TableName: table.tableName, Item: { ...keyOf.rateWindow(`console#${hash}`, window.start), requests: 600, ttl: clock + 600 } }),
    );
    const refused = await call('/projects', { cookie });
    expect(refused.status).toBe(429);
    expect(refused.body?.error).toMatch(/600 requests a minute per session/);
    const items = await scanTable(table);
    expect(items.some((item) => item.pk === keyOf.rateWindow(other.tokenHash, window.start).pk)).toBe(false);
  });

  it('puts the Content-Security-Policy with frame-ancestors none and no inline script on every answer', async () => {
    for (const answer of [await call('/session'), await call('/projects/prj_x/loader')]) {
      expect(answer.headers['Content-Security-Policy']).toMatch(/frame-ancestors 'none'/);
      expect(answer.headers['Content-Security-Policy']).toMatch(/script-src 'self'(;|$)/);
    }
  });
});

describe('console routes', () => {
  let cookie: string;
  beforeAll(async () => {
    cookie = await signIn(owner.token);
  });

  it("lists the owner's projects only", async () => {
    const answer = await call('/projects', { cookie });
    expect(answer.body).toEqual({ projects: [{ id: projectId, name: 'Console Script', plan: 'business' }] });
  });

  it('answers 404 Project not found for a project of another owner, as the API does', async () => {
    const other = await seedProject(table.stores, { ownerId: stranger.ownerId });
    expect(await call(`/projects/${other.projectId}/loader`, { cookie })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    expect(await call(`/v1/projects/${other.projectId}/keys`, { cookie })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
  });

  it('shows the hosted stub URL and the two lines buyers run', async () => {
    const answer = await call(`/projects/${projectId}/loader`, { cookie });
    const stubUrl = `https://loader.example.com/v1/loader/stub/${projectId}`;
    expect(answer.body).toEqual({ stub_url: stubUrl, line: `script_key = "KEY"\nloadstring(game:HttpGet("${stubUrl}"))()` });
  });

  it('serves the owner API mirrored, audited with source console and the session token id', async () => {
    const issued = await call(`/v1/projects/${projectId}/keys`, { cookie, body: { count: 1, note: 'mirrored' } });
    expect(issued.status).toBe(200);
    const keyId = String(listOf<{ id: string }>(issued.body?.keys)[0]?.id);
    expect(await call(`/v1/projects/${projectId}/keys/revoke`, { cookie, body: { key_id: keyId } })).toMatchObject({ status: 200, body: { ok: true } });
    const audit = await call(`/projects/${projectId}/audit?limit=5`, { cookie });
    expect(listOf<{ action: string; source: string; tokenId: string }>(audit.body?.entries)[0]).toMatchObject({
      action: 'key.revoke',
      source: 'console',
      tokenId: owner.tokenId,
    });
  });

  it('finds keys by id, watermark, Discord id and every word of the note as prefixes, with the status filter', async () => {
    const issue = (body: object) => call(`/v1/projects/${projectId}/keys`, { cookie, body: { count: 1, ...body } });
    const alice = listOf<{ id: string }>((await issue({ note: 'Alice Premium <img src=x onerror=alert(1)>', discord_id: '123456789012345678' })).body?.keys)[0];
    const bob = listOf<{ id: string }>((await issue({ note: 'Bob premium' })).body?.keys)[0];
    const search = async (q: string, status = 'all') =>
      listOf<{ id: string }>((await call(`/projects/${projectId}/keys/search?q=${encodeURIComponent(q)}&status=${status}`, { cookie })).body?.keys).map(
        (key) => key.id,
      );
    expect(await search('prem')).toEqual(expect.arrayContaining([alice?.id, bob?.id]));
    expect(await search('ALI prem')).toEqual([alice?.id]);
    expect(await search('alice bob')).toEqual([]);
    expect(await search('123456789012345678')).toEqual([alice?.id]);
    expect(await search(String(alice?.id))).toEqual([alice?.id]);
    const detail = await call(`/v1/projects/${projectId}/keys/${alice?.id}`, { cookie });
    const watermark = String((detail.body?.key as { watermark?: string } | undefined)?.watermark);
    expect(await search(watermark)).toEqual([alice?.id]);
    await call(`/projects/${projectId}/keys/revoke-selected`, { cookie, body: { key_ids: [String(bob?.id)] } });
    expect(await search('premium', 'active')).toEqual([alice?.id]);
    expect(await search('premium', 'revoked')).toEqual([bob?.id]);
  });

  it('lists 100 keys a page in issue order, and with a status filter only the matching ones', async () => {
    const { projectId: big } = await seedProject(table.stores, { ownerId: owner.ownerId, name: 'Big', keys: 130 });
    const first = await call(`/projects/${big}/keys/search`, { cookie });
    expect(first.body).toMatchObject({ offset: 0, next_offset: 100, limit: 100, has_more: true });
    expect(listOf<unknown>(first.body?.keys).length).toBe(100);
    const second = await call(`/projects/${big}/keys/search?offset=100`, { cookie });
    expect(second.body).toMatchObject({ offset: 100, next_offset: 130, has_more: false });
    expect(listOf<unknown>(second.body?.keys).length).toBe(30);
    const ids = listOf<{ id: string }>(first.body?.keys)
      .slice(0, 3)
      .map((key) => key.id);
    expect(await call(`/projects/${big}/keys/revoke-selected`, { cookie, body: { key_ids: ids } })).toMatchObject({ body: { revoked_count: 3 } });
    const revoked = await call(`/projects/${big}/keys/search?status=revoked`, { cookie });
    expect(listOf<{ id: string; status: string }>(revoked.body?.keys).map((key) => key.id)).toEqual(ids);
  });

  it('exports every key as CSV with no raw value, and a note cannot become a spreadsheet formula', async () => {
    await call(`/v1/projects/${projectId}/keys`, { cookie, body: { count: 1, note: '=HYPERLINK("x")' } });
    const answer = await call(`/projects/${projectId}/keys/export.csv`, { cookie });
    expect(answer.status).toBe(200);
    expect(answer.headers['Content-Type']).toBe('text/csv; charset=utf-8');
    expect(answer.headers['Content-Disposition']).toMatch(/^attachment; filename="keys-prj_/);
    const lines = answer.text.trim().split('\r\n');
    expect(lines[0]).toBe('id,watermark,status,tier,issued_at,expires_at,max_uses,current_uses,max_machines,machines,note,discord_id');
    expect(answer.text).toContain(`"'=HYPERLINK(""x"")"`);
    expect(answer.text).not.toMatch(/sdk_/);
  });

  it('uploads a script through a staged file and commits it as the current version', async () => {
    const script = new TextEncoder().encode('print("console upload")\n');
    const started = await call(`/projects/${projectId}/versions/uploads`, {
      cookie,
      body: { size_bytes: script.length, sha256: sha256Hex(script), notes: 'from the console' },
    });
    expect(started.status).toBe(200);
    const uploadId = String(started.body?.upload_id);
    staged.set(`${projectId}/${uploadId}`, script);
    const committed = await call(`/projects/${projectId}/versions/uploads/${uploadId}/commit`, { cookie, body: {} });
    expect(committed.body).toMatchObject({ version_number: 2, size_bytes: script.length, sha256: sha256Hex(script) });
    const versions = await call(`/v1/projects/${projectId}/versions`, { cookie });
    expect(versions.body?.current_version_id).toBe(committed.body?.id);
    expect(staged.has(`${projectId}/${uploadId}`)).toBe(false);
  });

  it('refuses a bad file with 400 and the reason, and leaves nothing behind', async () => {
    const bad = new Uint8Array([0xff, 0xfe, 0x00]);
    const started = await call(`/projects/${projectId}/versions/uploads`, { cookie, body: { size_bytes: bad.length, sha256: sha256Hex(bad) } });
    const uploadId = String(started.body?.upload_id);
    staged.set(`${projectId}/${uploadId}`, bad);
    const before = (await call(`/v1/projects/${projectId}/versions`, { cookie })).body;
    const committed = await call(`/projects/${projectId}/versions/uploads/${uploadId}/commit`, { cookie, body: {} });
    expect(committed).toMatchObject({ status: 400, body: { error: 'The script is not valid UTF-8: save the script as UTF-8 text' } });
    expect((await call(`/v1/projects/${projectId}/versions`, { cookie })).body).toEqual(before);
    expect(staged.has(`${projectId}/${uploadId}`)).toBe(false);
    expect(await table.stores.console.find(projectId, uploadId)).toBeUndefined();
    const mismatch = await call(`/projects/${projectId}/versions/uploads`, { cookie, body: { size_bytes: 3, sha256: sha256Hex('abc') } });
    staged.set(`${projectId}/${String(mismatch.body?.upload_id)}`, new TextEncoder().encode('abd'));
    expect((await call(`/projects/${projectId}/versions/uploads/${String(mismatch.body?.upload_id)}/commit`, { cookie, body: {} })).body?.error).toMatch(
      /SHA-256/,
    );
  });

  it("links the project's Discord application, refuses a malformed one naming the field, and unlinks, each audited", async () => {
    const path = `/projects/${projectId}/discord`;
    const none = { public_key: null, application_id: null, reset_cooldown: null, interactions_url: null };
    expect((await call(path, { cookie })).body).toEqual(none);
    const bad = await call(path, { method: 'PUT', cookie, body: { public_key: 'not-a-key', reset_cooldown: 86_400 } });
    expect(bad.status).toBe(400);
    expect(bad.body?.error).toMatch(/^public_key must be the application's public key/);
    const shortCooldown = await call(path, { method: 'PUT', cookie, body: { public_key: 'AB'.repeat(32), reset_cooldown: 60 } });
    expect(shortCooldown.status).toBe(400);
    expect(shortCooldown.body?.error).toMatch(/^reset_cooldown must be whole seconds from 3600/);
    expect((await call(path, { cookie })).body).toEqual(none);

    const linked = { public_key: 'ab'.repeat(32), application_id: '123456789012345678', reset_cooldown: 7_200 };
    const interactions = `https://loader.example.com/v1/discord/interactions/${projectId}`;
    const saved = await call(path, { method: 'PUT', cookie, body: { ...linked, public_key: 'AB'.repeat(32) } });
    expect(saved).toMatchObject({ status: 200, body: { ...linked, interactions_url: interactions } });
    expect((await call(path, { cookie })).body).toEqual({ ...linked, interactions_url: interactions });
    expect(await table.stores.discord.discordLink(projectId)).toMatchObject({ publicKey: linked.public_key, resetCooldown: 7_200 });

    expect((await call(path, { method: 'DELETE', cookie })).status).toBe(204);
    expect((await call(path, { cookie })).body).toEqual(none);
    const trail = listOf<{ action: string; source: string; target: unknown; outcome: unknown }>(
      (await call(`/projects/${projectId}/audit?limit=2`, { cookie })).body?.entries,
    );
    expect(trail.map(({ action, source, target, outcome }) => ({ action, source, target, outcome }))).toEqual([
      { action: 'discord.unlink', source: 'console', target: {}, outcome: { unlinked: true } },
      {
        action: 'discord.link',
        source: 'console',
        target: { public_key: linked.public_key, application_id: linked.application_id },
        outcome: { reset_cooldown: 7_200 },
      },
    ]);
  });

  it('adds, edits, tests and deletes a webhook, its token hidden in every answer', async () => {
    const bad = await call(`/projects/${projectId}/webhooks`, { cookie, body: { url: 'https://example.com/hook', events: ['version_deployed'] } });
    expect(bad.status).toBe(400);
    expect(bad.body?.error).toMatch(/^url must be a Discord webhook URL/);
    const added = await call(`/projects/${projectId}/webhooks`, {
      cookie,
      body: { url: WEBHOOK_URL, events: ['version_deployed', 'key_abuse'], enabled: true },
    });
    expect(added.status).toBe(200);
    const id = String(added.body?.id);
    expect(JSON.stringify(added.body)).not.toContain('test-token_abc');
    const edited = await call(`/projects/${projectId}/webhooks/${id}`, { method: 'PATCH', cookie, body: { enabled: false, events: ['new_executor'] } });
    expect(edited.body).toMatchObject({ id, events: ['new_executor'], enabled: false });
    const listed = await call(`/projects/${projectId}/webhooks`, { cookie });
    expect(listed.body?.webhooks).toEqual([
      { id, url_hint: 'https://discord.com/api/webhooks/123456789012345678/[redacted]', events: ['new_executor'], enabled: false },
    ]);
    const tested = await call(`/projects/${projectId}/webhooks/${id}/test`, { cookie, body: {} });
    expect(tested.body).toEqual({ ok: true });
    expect(posted.at(-1)).toMatchObject({
      path: '/webhooks/123456789012345678/test-token_abc?wait=true',
      body: { embeds: [{ title: 'Test notification' }], allowed_mentions: { parse: [] } },
    });
    expect((await call(`/projects/${projectId}/webhooks/${id}`, { method: 'DELETE', cookie })).status).toBe(204);
    expect((await call(`/projects/${projectId}/webhooks`, { cookie })).body?.webhooks).toEqual([]);
    expect((await call(`/projects/${projectId}/webhooks/${id}`, { method: 'DELETE', cookie })).status).toBe(404);
  });

  it('finds the watermarks of a pasted dump with their active keys, and revokes them', async () => {
    const { projectId: leaky, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, name: 'Leaky', keys: 2, watermark: 'abcdef0123456789' });
    const dump = 'local x = 1 --WM_abcdef0123456789\nWM_ABCDEF0123456789 WM_short';
    const found = await call(`/projects/${leaky}/leak/find`, { cookie, body: { text: dump } });
    expect(found.body).toEqual({ watermarks: [{ watermark: 'abcdef0123456789', active_keys: keys.length }] });
    const revoked = await call(`/projects/${leaky}/leak/revoke`, { cookie, body: { watermarks: ['abcdef0123456789'] } });
    expect(revoked.body).toEqual({ results: [{ watermark: 'abcdef0123456789', revoked_count: 2, complete: true }] });
    expect((await call(`/projects/${leaky}/leak/find`, { cookie, body: { text: dump } })).body).toEqual({
      watermarks: [{ watermark: 'abcdef0123456789', active_keys: 0 }],
    });
  });

  it('creates a token shown once, lists it, and revokes it, both entered in the owner trail as the console session token', async () => {
    const created = await call('/tokens', { cookie, body: { scope: 'read' } });
    expect(created.body).toMatchObject({ scope: 'read', token: expect.stringMatching(/^sdt_/), token_id: expect.stringMatching(/^tok_/) });
    const tokenId = String(created.body?.token_id);
    const listed = await call('/tokens', { cookie });
    expect(listed.body?.tokens).toEqual(expect.arrayContaining([{ token_id: tokenId, scope: 'read', created_at: clock }]));
    expect(JSON.stringify(listed.body)).not.toContain(String(created.body?.token));
    expect((await call(`/tokens/${tokenId}`, { method: 'DELETE', cookie })).status).toBe(204);
    const trail = await table.stores.audit.list({ ownerId: owner.ownerId }, 2);
    expect(trail.map(({ action, source, tokenId: by }) => ({ action, source, by }))).toEqual([
      { action: 'token.revoke', source: 'console', by: owner.tokenId },
      { action: 'token.create', source: 'console', by: owner.tokenId },
    ]);
    expect((await call('/session', { body: { token: created.body?.token } })).status).toBe(401);
    expect((await call(`/tokens/${stranger.tokenId}`, { method: 'DELETE', cookie })).status).toBe(404);
  });
});

describe('Shops (DESIGN.md, "Shops deliver keys by themselves")', () => {
  it('connects a shop (the secret never shown again), lists it with its receiver URL, removes it; a read session may not change it', async () => {
    const cookie = await signIn(owner.token);
    const secret = 'whsec_console_secret_1';
    const added = await call(`/projects/${projectId}/shops`, { cookie, body: { provider: 'stripe', secret, products: { price_1: '30d,machines=1' } } });
    expect(added.status).toBe(200);
    const connectionId = String(added.body?.connection_id);
    expect(added.body).toEqual({ connection_id: connectionId, receiver_url: `https://loader.example.com/v1/shops/${connectionId}` });

    const listed = await call(`/projects/${projectId}/shops`, { cookie });
    expect(listed.body).toEqual({
      connections: [
        { connection_id: connectionId, provider: 'stripe', products: { price_1: '30d,machines=1' }, created_at: clock, receiver_url: added.body?.receiver_url },
      ],
      receipts: [],
    });
    expect(listed.text).not.toContain(secret);

    const bad = await call(`/projects/${projectId}/shops`, { cookie, body: { provider: 'stripe', secret, products: { price_1: '2w' } } });
    expect(bad.status).toBe(400);
    expect(String(bad.body?.error)).toMatch(/product price_1: "2w" is no duration/);
    expect(bad.text).not.toContain(secret);

    const readCookie = await signIn(reader.token);
    expect((await call(`/projects/${projectId}/shops/${connectionId}`, { cookie: readCookie, method: 'DELETE' })).status).toBe(403);
    expect((await call(`/projects/${projectId}/shops/${connectionId}`, { cookie, method: 'DELETE' })).status).toBe(204);
    expect(listOf((await call(`/projects/${projectId}/shops`, { cookie })).body?.connections)).toEqual([]);
  });
});
