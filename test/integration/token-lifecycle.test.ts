import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '#adapters/layout';
import { COMMANDS } from '#dashboard/commands';
import { CommandError, type DashboardContext, openContext } from '#dashboard/context';
import type { AuditEntry } from '#domain/audit';
import { TokenLimitReached } from '#domain/errors';
import { hashToken, issueToken, MAX_TOKENS_PER_OWNER, newApiToken, type TokenScope, tokenIdOf } from '#domain/tokens';
import { ROUTES } from '#http/routes';
import { type LocalServer, startLocalServer } from '#local/server';
import { startTelemetryPipeline, type TelemetryPipeline } from '#local/telemetry-pipeline';
import { createTestTable, scanTable, scriptFileOf, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * Tokens from the dashboard to the API over real HTTP: the local server (gateway stand-in, real authorizer and
 * handlers, no authorizer cache) on DynamoDB Local, driven by the dashboard's own command functions. A revoked
 * token is refused on its very next request; a read token reads and is refused every write; the audit trail
 * says which token revoked what.
 */
const WATERMARK = 'c0ffee00c0ffee00';

/** Where uploads' scripts go: these tests are not about where scripts live (script-delivery.test.ts is). */
const scripts = new MemoryScriptStore();
let table: TestTable;
let server: LocalServer;
let telemetry: TelemetryPipeline;
let dashboard: { context: DashboardContext; close(): void };
let ownerId: string;
let writeToken: { token: string; tokenId: string };
let readToken: { token: string; tokenId: string; scope: TokenScope };
let project: string;
let keyIds: string[];
let versionIds: string[];

async function dashboardRun<T>(command: string, ...argv: string[]): Promise<T> {
  const run = COMMANDS[command]?.prepare(argv);
  if (!run) throw new Error(`no command ${command}`);
  return (await run(dashboard.context)) as T;
}

/** A string body is sent as text (the leak trace's dump), anything else as JSON. */
async function api(token: string, rest: string, body?: unknown, method: string = body === undefined ? 'GET' : 'POST') {
  const text = typeof body === 'string';
  const response = await fetch(`${server.url}/v1/projects/${project}${rest}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': text ? 'text/plain; charset=utf-8' : 'application/json' }),
    },
    body: body === undefined ? undefined : text ? body : JSON.stringify(body),
  });
  return { status: response.status, requestId: response.headers.get('x-amzn-requestid'), body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  table = await createTestTable('token-lifecycle');
  telemetry = startTelemetryPipeline({ store: table.stores.telemetry });
  server = await startLocalServer({ port: 0, stores: table.stores, telemetry: telemetry.sink, scripts });
  const opened = openContext({ kind: 'local', endpoint: table.endpoint, tableName: table.tableName });
  dashboard = { context: { ...opened.context, scripts }, close: opened.close };

  const owner = await dashboardRun<{ ownerId: string; token: string; tokenId: string }>('owner create');
  ownerId = owner.ownerId;
  writeToken = owner;
  readToken = await dashboardRun('token create', '--owner', ownerId, '--scope', 'read');
  ({ projectId: project } = await dashboardRun<{ projectId: string }>('project create', '--owner', ownerId, '--name', 'Token Script'));
  keyIds = [
    ...(await dashboardRun<{ keys: { id: string }[] }>('keys issue', '--project', project, '--count', '6')).keys,
    ...(await dashboardRun<{ keys: { id: string }[] }>('keys issue', '--project', project, '--count', '2', '--watermark', WATERMARK)).keys,
  ].map((key) => key.id);
  versionIds = [];
  for (const notes of ['one', 'two'])
    versionIds.push((await dashboardRun<{ id: string }>('versions upload', '--project', project, '--file', scriptFileOf(100), '--notes', notes)).id);
});

afterAll(async () => {
  await server?.close();
  await telemetry?.stop();
  dashboard?.close();
  await table?.drop();
});

describe('a read-only token', () => {
  it('is created with its id and scope, and lists keys, versions and webhooks', async () => {
    expect(Object.keys(readToken)).toEqual(['token', 'tokenId', 'scope']);
    expect(readToken).toMatchObject({ tokenId: expect.stringMatching(/^tok_[0-9a-f]{20}$/), scope: 'read' });
    for (const rest of ['/keys', '/versions', '/webhooks']) expect((await api(readToken.token, rest)).status, rest).toBe(200);
  });

  it.each([
    ['/keys/revoke', () => ({ key_id: keyIds[0] }), 'revoking a key'],
    ['/keys/revoke-bulk', () => ({ watermark: WATERMARK }), 'revoking keys by watermark'],
    ['/versions/rollback', () => ({ version_id: versionIds[0] }), 'rolling back a version'],
  ])('gets 403 on %s, naming the write scope it lacks, and changes nothing', async (rest, body, doing) => {
    const before = await scanTable(table);
    const reply = await api(readToken.token, rest, body());
    expect(reply).toMatchObject({
      status: 403,
      body: { error: `This token has the read scope; ${doing} needs the write scope. Use a token created with --scope write.` },
    });
    // Only the request's own rate window moved.
    const changed = (await scanTable(table)).filter((item) => !before.some((old) => JSON.stringify(old) === JSON.stringify(item)));
    expect(changed.map((item) => String(item.pk))).toEqual([expect.stringMatching(/^RATE#/)]);
  });
});

const LISTED_DISCORD_ID = '423456789012345678';

describe('every route with a read and a write token, through the authorizer and the handlers', () => {
  /** The body of each POST and PATCH route, by its path; a GET sends none. */
  const bodies: Record<string, () => unknown> = {
    '/keys': () => ({ count: 1 }),
    '/keys/{key_id}': () => ({ note: 'edited' }),
    '/keys/reset-hwid': () => ({ key_id: keyIds[0] }),
    '/keys/ban': () => ({ key_id: keyIds[4], reason: 'Shared the key' }),
    '/keys/unban': () => ({ key_id: keyIds[4] }),
    '/keys/extend': () => ({ key_id: keyIds[4], duration: '7d' }),
    '/keys/revoke': () => ({ key_id: keyIds[1] }),
    '/keys/revoke-bulk': () => ({ watermark: 'abababababababab' }),
    '/versions/rollback': () => ({ version_id: versionIds[1] }),
    '/leak/trace': () => 'print("a leaked script")',
    // The write token's add comes before its remove (ROUTES' order), which removes this entry.
    '/blacklist': () => ({ discord_id: LISTED_DISCORD_ID, reason: 'Leaked' }),
  };
  const cases = (['read', 'write'] as const).flatMap((scope) =>
    ROUTES.map((route) => [route.method, route.path, scope, route.access === 'read' || scope === 'write' ? 200 : 403] as const),
  );

  it.each(cases)('%s %s with a %s token answers %i', async (method, path, scope, status) => {
    const template = path.replace('/v1/projects/{id}', '');
    const rest = template.replace('{key_id}', keyIds[0]!).replace('{entry_id}', `bld_${LISTED_DISCORD_ID}`);
    const token = scope === 'read' ? readToken.token : writeToken.token;
    const reply = await api(token, rest, method === 'GET' ? undefined : bodies[template]?.(), method);
    expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  });
});

describe('the audit trail of the project', () => {
  it('shows who revoked what: the write token, the key, the request, newest first', async () => {
    const revoked = await api(writeToken.token, '/keys/revoke', { key_id: keyIds[2] });
    expect(revoked.status).toBe(200);
    const bulk = await api(writeToken.token, '/keys/revoke-bulk', { watermark: WATERMARK });
    expect(bulk.body.revoked_count).toBe(2);
    const { entries } = await dashboardRun<{ entries: AuditEntry[] }>('audit list', '--project', project, '--limit', '2');
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'key.revoke_bulk',
        tokenId: writeToken.tokenId,
        requestId: bulk.requestId,
        target: { watermark: WATERMARK },
        outcome: { revoked_count: 2, complete: true },
      }),
      expect.objectContaining({
        action: 'key.revoke',
        tokenId: writeToken.tokenId,
        requestId: revoked.requestId,
        target: { key_id: keyIds[2] },
        outcome: { revoked_count: 1 },
      }),
    ]);
  });
});

describe('revoking a token', () => {
  it("lists the owner's tokens with id, scope and creation time only", async () => {
    const { tokens } = await dashboardRun<{ tokens: Record<string, unknown>[] }>('token list', '--owner', ownerId);
    expect(tokens.map((token) => token.tokenId).toSorted()).toEqual([writeToken.tokenId, readToken.tokenId].toSorted());
    for (const token of tokens) expect(Object.keys(token)).toEqual(['tokenId', 'scope', 'createdAt']);
    expect(tokens.find((token) => token.tokenId === readToken.tokenId)).toMatchObject({ scope: 'read', createdAt: expect.any(Number) });
  });

  it('rotates: a new token works beside the old one, and the old one revoked gets 401 on its very next request', async () => {
    const rotated = await dashboardRun<{ token: string; tokenId: string }>('token create', '--owner', ownerId);
    expect((await api(writeToken.token, '/keys')).status).toBe(200);
    expect(await dashboardRun('token revoke', '--token-id', writeToken.tokenId)).toEqual({ tokenId: writeToken.tokenId, revoked: true });
    expect(await api(writeToken.token, '/keys')).toMatchObject({ status: 401, body: { error: expect.stringContaining('token') } });
    expect((await api(writeToken.token, '/keys/revoke', { key_id: keyIds[3] })).status).toBe(401);
    expect((await api(rotated.token, '/keys')).status).toBe(200);
    expect((await api(readToken.token, '/keys')).status).toBe(200);

    const { tokens } = await dashboardRun<{ tokens: { tokenId: string }[] }>('token list', '--owner', ownerId);
    expect(tokens.map((token) => token.tokenId)).not.toContain(writeToken.tokenId);
  });

  it('refuses to revoke a revoked or an unknown token with one line, and writes nothing', async () => {
    const before = await scanTable(table);
    const again = dashboardRun('token revoke', '--token-id', writeToken.tokenId);
    await expect(again).rejects.toBeInstanceOf(CommandError);
    await expect(dashboardRun('token revoke', '--token-id', writeToken.tokenId)).rejects.toThrow(
      new RegExp(`^Token ${writeToken.tokenId} is already revoked \\(at \\d{4}-`),
    );
    await expect(dashboardRun('token revoke', '--token-id', 'tok_00000000000000000000')).rejects.toThrow(
      'Token tok_00000000000000000000 not found: "token list --owner ID" shows an owner\'s tokens',
    );
    expect(await scanTable(table)).toEqual(before);
  });

  it("enters each token created and revoked in the owner's trail, newest first", async () => {
    const { entries } = await dashboardRun<{ entries: AuditEntry[] }>('token audit', '--owner', ownerId);
    expect(entries.map((entry) => entry.action)).toEqual(['token.revoke', 'token.create', 'token.create', 'token.create']);
    expect(entries[0]).toMatchObject({
      ownerId,
      source: 'dashboard',
      tokenId: null,
      requestId: null,
      target: { token_id: writeToken.tokenId },
      outcome: { scope: 'write' },
    });
    expect(entries.at(-1)).toMatchObject({ target: { scope: 'write' }, outcome: { token_id: writeToken.tokenId } });
    expect(entries.at(-2)).toMatchObject({ target: { scope: 'read' }, outcome: { token_id: readToken.tokenId } });
  });

  it('migrates a token stored before token ids and scopes: it only reads until then, then writes, and is listed and revocable like the others', async () => {
    const legacy = newApiToken();
    // As the dashboard stored tokens before: the hash item alone, no id, no scope.
    await table.db.send(
      new PutCommand({ TableName: table.tableName, Item: { ...keyOf.token(hashToken(legacy)), entity: 'TOKEN', ownerId, createdAt: 1_700_000_000 } }),
    );
    expect((await api(legacy, '/keys')).status).toBe(200);
    expect((await api(legacy, '/versions/rollback', { version_id: versionIds[1] })).status).toBe(403);
    const legacyId = tokenIdOf(hashToken(legacy));
    await expect(dashboardRun('token revoke', '--token-id', legacyId)).rejects.toThrow(`Token ${legacyId} not found`);

    expect(await dashboardRun('token migrate')).toEqual({ migrated: 1, tokens: [{ ownerId, tokenId: legacyId, scope: 'write' }] });
    expect((await api(legacy, '/versions/rollback', { version_id: versionIds[1] })).status).toBe(200);
    expect(await dashboardRun('token migrate')).toEqual({ migrated: 0, tokens: [] });
    const [migration] = await table.stores.audit.list({ ownerId }, 1);
    expect(migration).toMatchObject({
      action: 'token.migrate',
      source: 'dashboard',
      caller: expect.stringMatching(/^local(:.+)?$/),
      target: { token_id: legacyId },
      outcome: { scope: 'write' },
    });
    const { tokens } = await dashboardRun<{ tokens: { tokenId: string; scope: string; createdAt: number }[] }>('token list', '--owner', ownerId);
    expect(tokens[0]).toEqual({ tokenId: legacyId, scope: 'write', createdAt: 1_700_000_000 });
    expect(await dashboardRun('token revoke', '--token-id', legacyId)).toEqual({ tokenId: legacyId, revoked: true });
    expect((await api(legacy, '/keys')).status).toBe(401);
  });

  it(`refuses an owner's token past ${MAX_TOKENS_PER_OWNER} working ones with a 403 naming the limit, before any key is made; a revoke makes room`, async () => {
    const { ownerId } = await dashboardRun<{ ownerId: string }>('owner create');
    for (let i = 1; i < MAX_TOKENS_PER_OWNER; i += 1) {
      await issueToken(table.stores.tokens, { ownerId, tokenHash: hashToken(newApiToken()), now: 1_700_000_000, scope: 'read' });
    }
    const before = JSON.stringify(await scanTable(table));
    const refused = dashboardRun('token create', '--owner', ownerId);
    await expect(refused).rejects.toBeInstanceOf(TokenLimitReached);
    await expect(refused).rejects.toThrow(`An owner has at most ${MAX_TOKENS_PER_OWNER} working tokens, and this one has ${MAX_TOKENS_PER_OWNER}`);
    expect(JSON.stringify(await scanTable(table))).toBe(before);
    const [oldest] = (await dashboardRun<{ tokens: { tokenId: string }[] }>('token list', '--owner', ownerId)).tokens;
    await dashboardRun('token revoke', '--token-id', String(oldest?.tokenId));
    expect(await dashboardRun('token create', '--owner', ownerId)).toMatchObject({ token: expect.stringMatching(/^sdt_/) });
  });

  it('leaves no raw token anywhere in the table', async () => {
    const text = JSON.stringify(await scanTable(table));
    for (const token of [writeToken.token, readToken.token]) expect(text).not.toContain(token);
  });
});
