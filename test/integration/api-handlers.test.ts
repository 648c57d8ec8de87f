import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '#domain/model';
import { unixSeconds } from '#domain/model';
import { callerOfToken, hashToken, issueToken, newApiToken, scopeOf } from '#domain/tokens';
import { createAuthorizer } from '#functions/authorizer';
import { createRouteHandlers, ROUTES } from '#http/routes';
import { memoryKeySecret } from '#local/key-secret';
import { ListKeysResponse, ListVersionsResponse, ListWebhooksResponse } from '#schemas/responses';
import {
  type ApiEventInput,
  apiEvent,
  authorizerEvent,
  createTestTable,
  FIXED_NOW,
  lambdaContext,
  type RouteEntry,
  type SeededOwner,
  type SeededProject,
  seedOwner,
  seedProject,
  type TestTable,
} from '#test-support/fixtures';

const WATERMARK = 'feedfacecafebeef';

const VALID_BODIES: Partial<Record<RouteEntry, unknown>> = {
  'issue-keys': { count: 1 },
  'reset-hwid': { key_id: 'key_x' },
  'update-key': { note: 'edited' },
  'ban-key': { key_id: 'key_x', reason: 'Shared the key' },
  'unban-key': { key_id: 'key_x' },
  'extend-key': { key_id: 'key_x', duration: '7d' },
  'revoke-key': { key_id: 'key_x' },
  'revoke-bulk': { watermark: WATERMARK },
  rollback: { version_id: 'ver_x' },
  'trace-leak': `print("WM_${WATERMARK}")`,
  'add-to-blacklist': { discord_id: '123456789012345678', reason: 'Leaked' },
};

let table: TestTable;
let owner: SeededOwner;
let caller: Caller;
let foreign: SeededProject;
let proPlan: SeededProject;
/** The authorizer and the route handlers the stack deploys, on this file's table. */
let authorize: ReturnType<typeof createAuthorizer>;
let HANDLERS: ReturnType<typeof createRouteHandlers>;

/** The caller exactly as API Gateway hands it on: the context the real authorizer returned for the token. */
async function authorizedCaller(token: string): Promise<Caller> {
  const { context } = await authorize(authorizerEvent(`Bearer ${token}`));
  if (typeof context?.ownerId !== 'string' || typeof context.tokenHash !== 'string') throw new Error('authorizer gave no caller');
  return callerOfToken(context.ownerId, context.tokenHash, scopeOf(context.scope));
}

async function call(entry: RouteEntry, projectId: string, input: ApiEventInput = {}, as: Caller = caller) {
  const event: APIGatewayProxyEvent = apiEvent(entry, { projectId, caller: as, ...input });
  const result = await HANDLERS[entry](event, lambdaContext());
  return { status: result.statusCode, headers: result.headers ?? {}, body: JSON.parse(result.body) as Record<string, unknown> };
}

/**
 * A project of the owner for one `describe` alone, so that no describe depends on what another changed: 120 keys,
 * then 30 more carrying WATERMARK (max 10 uses), three versions (the last current) and two webhooks.
 */
async function ownProject(): Promise<SeededProject> {
  const project = await seedProject(table.stores, {
    ownerId: owner.ownerId,
    keys: 120,
    versions: ['initial release', '', 'hotfix'],
    webhooks: [
      { url: 'https://discord.com/api/webhooks/111/aaa', events: ['version_deployed', 'key_abuse'] },
      { url: 'https://discord.com/api/webhooks/222/bbb', events: ['execution_drop'], enabled: false },
    ],
  });
  await table.stores.dashboard.issueKeys({ projectId: project.projectId, count: 30, watermark: WATERMARK, tier: 'standard', maxUses: 10, now: FIXED_NOW });
  return project;
}

beforeAll(async () => {
  table = await createTestTable('api-handlers');
  authorize = createAuthorizer({ tokens: table.stores.tokens, logger: new Logger({ serviceName: 'developer-api-authorizer' }) });
  HANDLERS = createRouteHandlers({
    stores: table.stores,
    keySecret: memoryKeySecret(),
    now: () => unixSeconds(),
    logger: new Logger({ serviceName: 'developer-api' }),
  });
  owner = await seedOwner(table.stores);
  const stranger = await seedOwner(table.stores);
  foreign = await seedProject(table.stores, { ownerId: stranger.ownerId, keys: 2, watermark: WATERMARK, versions: ['theirs'] });
  proPlan = await seedProject(table.stores, { ownerId: owner.ownerId, plan: 'pro' });
  caller = await authorizedCaller(owner.token);
});

afterAll(async () => {
  await table?.drop();
});

describe('authorizer against the table', () => {
  it('turns the bearer token into the owner, the token hash, the token id and its scope', () => {
    expect(caller).toEqual({ ownerId: owner.ownerId, tokenHash: owner.tokenHash, tokenId: owner.tokenId, scope: 'write' });
  });

  it('refuses a token that was never issued', async () => {
    await expect(authorize(authorizerEvent(`Bearer ${newApiToken()}`))).rejects.toThrow('Unauthorized');
  });
});

describe('GET /v1/projects/:id/keys end to end', () => {
  let project: SeededProject;
  beforeAll(async () => {
    project = await ownProject();
  });

  it('answers the first 50 keys, exactly in the spec shape, with the total issued', async () => {
    const reply = await call('list-keys', project.projectId);
    expect(reply.status).toBe(200);
    const body = ListKeysResponse.parse(reply.body);
    expect(body.total).toBe(150);
    expect(body.keys.map((key) => key.id)).toEqual(project.keys.slice(0, 50).map((key) => key.id));
    expect(body.keys.every((key) => key.revoked === 0 && key.tier === 'standard' && key.max_uses === null)).toBe(true);
  });

  it('pages through every key exactly once with limit and offset', async () => {
    const pages = await Promise.all(['0', '100'].map((offset) => call('list-keys', project.projectId, { query: { limit: '100', offset } })));
    const ids = pages.flatMap((page) => ListKeysResponse.parse(page.body).keys.map((key) => key.id));
    expect(ids).toHaveLength(150);
    expect(new Set(ids).size).toBe(150);
    expect(ids.slice(0, 120)).toEqual(project.keys.map((key) => key.id));
    const last = ListKeysResponse.parse(pages[1]!.body).keys.at(-1);
    expect(last).toMatchObject({ watermark: WATERMARK, max_uses: 10 });
  });

  it('answers an offset past the end with an empty page and the total', async () => {
    const reply = await call('list-keys', project.projectId, { query: { offset: '150' } });
    expect(reply.body).toEqual({ keys: [], total: 150 });
  });

  it('answers limit=101 with 400', async () => {
    expect((await call('list-keys', project.projectId, { query: { limit: '101' } })).status).toBe(400);
  });
});

describe('POST /v1/projects/:id/keys/revoke end to end', () => {
  let project: SeededProject;
  beforeAll(async () => {
    project = await ownProject();
  });

  it('revokes the key, shows it revoked in the list, and answers a second revoke with 200 too', async () => {
    const keyId = project.keys[3]!.id;
    expect(await call('revoke-key', project.projectId, { body: { key_id: keyId } })).toMatchObject({ status: 200, body: { ok: true } });
    expect(await call('revoke-key', project.projectId, { body: { key_id: keyId } })).toMatchObject({ status: 200, body: { ok: true } });
    const listed = ListKeysResponse.parse((await call('list-keys', project.projectId, { query: { limit: '5' } })).body).keys;
    expect(listed.map((key) => key.revoked)).toEqual([0, 0, 0, 1, 0]);
  });

  it("answers a key of another owner's project with 404 and leaves it active", async () => {
    const reply = await call('revoke-key', project.projectId, { body: { key_id: foreign.keys[0]!.id } });
    expect(reply.status).toBe(404);
    expect(reply.body.error).toEqual(expect.any(String));
    expect((await table.stores.projects.listKeysAfter(foreign.projectId, 0, 1))[0]?.revoked).toBe(0);
  });

  it('answers an empty body with 400 "key_id is required"', async () => {
    expect(await call('revoke-key', project.projectId, { body: {} })).toMatchObject({ status: 400, body: { error: 'key_id is required' } });
  });
});

describe('POST /v1/projects/:id/keys/revoke-bulk end to end', () => {
  let project: SeededProject;
  beforeAll(async () => {
    project = await ownProject();
  });

  it('revokes every key of the project with the watermark, then 0 on a second call, and no key of another project', async () => {
    expect(await call('revoke-bulk', project.projectId, { body: { watermark: WATERMARK } })).toMatchObject({
      status: 200,
      body: { ok: true, revoked_count: 30, complete: true },
    });
    expect(await call('revoke-bulk', project.projectId, { body: { watermark: WATERMARK } })).toMatchObject({
      status: 200,
      body: { ok: true, revoked_count: 0, complete: true },
    });
    const tail = ListKeysResponse.parse((await call('list-keys', project.projectId, { query: { offset: '120' } })).body).keys;
    expect(tail.map((key) => key.revoked)).toEqual(Array(30).fill(1));
    expect((await table.stores.projects.listKeysAfter(foreign.projectId, 0, 5)).map((key) => key.revoked)).toEqual([0, 0]);
  });

  it('answers the watermark with its WM_ prefix with 400 and the value to send', async () => {
    const reply = await call('revoke-bulk', project.projectId, { body: { watermark: `WM_${WATERMARK}` } });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toContain(`send "${WATERMARK}"`);
  });
});

describe('versions end to end', () => {
  let project: SeededProject;
  beforeAll(async () => {
    project = await ownProject();
  });

  it('lists versions highest first with the last upload current', async () => {
    const reply = await call('list-versions', project.projectId);
    expect(reply.status).toBe(200);
    const body = ListVersionsResponse.parse(reply.body);
    expect(body.versions.map((version) => [version.version_number, version.notes])).toEqual([
      [3, 'hotfix'],
      [2, ''],
      [1, 'initial release'],
    ]);
    expect(body.versions.every((version) => Number.isInteger(version.uploaded_at) && version.size_bytes > 0)).toBe(true);
    expect(body.current_version_id).toBe(project.versions[2]!.id);
  });

  it('rolls back to an earlier version, which the list then shows as current', async () => {
    const target = project.versions[0]!.id;
    expect(await call('rollback', project.projectId, { body: { version_id: target } })).toMatchObject({
      status: 200,
      body: { ok: true, current_version_id: target },
    });
    expect((await call('list-versions', project.projectId)).body.current_version_id).toBe(target);
  });

  it('answers a version of another project with 404 and keeps the current version', async () => {
    const before = (await call('list-versions', project.projectId)).body.current_version_id;
    const reply = await call('rollback', project.projectId, { body: { version_id: foreign.versions[0]!.id } });
    expect(reply.status).toBe(404);
    expect((await call('list-versions', project.projectId)).body.current_version_id).toBe(before);
  });
});

describe('GET /v1/projects/:id/webhooks end to end', () => {
  let project: SeededProject;
  beforeAll(async () => {
    project = await ownProject();
  });

  it('lists every configuration with the spec field names and types: events a JSON string, enabled 0/1', async () => {
    const reply = await call('list-webhooks', project.projectId);
    expect(reply.status).toBe(200);
    const { webhooks } = ListWebhooksResponse.parse(reply.body);
    const byUrl = Object.fromEntries(webhooks.map((webhook) => [webhook.url, webhook]));
    expect(byUrl['https://discord.com/api/webhooks/111/aaa']).toEqual({
      id: project.webhookIds[0],
      url: 'https://discord.com/api/webhooks/111/aaa',
      events: '["version_deployed","key_abuse"]',
      enabled: 1,
      created_at: FIXED_NOW,
      updated_at: FIXED_NOW,
    });
    expect(byUrl['https://discord.com/api/webhooks/222/bbb']).toMatchObject({ events: '["execution_drop"]', enabled: 0 });
    expect(webhooks).toHaveLength(2);
  });
});

describe('the buyer blacklist end to end', () => {
  it('adds, lists, removes; a second remove and a foreign project answer 404; a bad body 400 naming the field', async () => {
    const project = await ownProject();
    const fingerprint = 'c'.repeat(64);
    const added = await call('add-to-blacklist', project.projectId, { body: { fingerprint, reason: 'Leaked the script' } });
    expect(added).toMatchObject({ status: 200, body: { id: expect.stringMatching(/^blf_/), banned_keys: 0 } });
    const listed = await call('list-blacklist', project.projectId, { query: { limit: '10' } });
    expect(listed).toMatchObject({
      status: 200,
      body: { total: 1, entries: [{ id: added.body.id, fingerprint, reason: 'Leaked the script', added_by: caller.tokenId }] },
    });
    const entryId = String(added.body.id);
    expect(await call('remove-from-blacklist', foreign.projectId, { entryId })).toMatchObject({ status: 404 });
    expect(await call('remove-from-blacklist', project.projectId, { entryId })).toMatchObject({ status: 200, body: { ok: true } });
    expect(await call('remove-from-blacklist', project.projectId, { entryId })).toMatchObject({
      status: 404,
      body: { error: `Blacklist entry ${entryId} not found in this project` },
    });
    const bad = await call('add-to-blacklist', project.projectId, { body: { email_sha256: 'not-a-hash', reason: 'x' } });
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringContaining('email_sha256 must be 64 lowercase hex') } });
  });
});

describe('access end to end (spec §5)', () => {
  it.each(ROUTES.map((route) => route.entry))("%s: another owner's project is 404 Project not found, a Pro plan project 403", async (entry) => {
    const body = VALID_BODIES[entry];
    expect(await call(entry, foreign.projectId, { body })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    expect(await call(entry, 'prj_does_not_exist', { body })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    const refused = await call(entry, proPlan.projectId, { body });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain('Business plan');
  });
});

describe('exact rate limit end to end (spec §8)', () => {
  let project: SeededProject;
  beforeAll(async () => {
    project = await ownProject();
  });

  it('lets a token make 100 requests in a minute, refuses the 101st with 429 and Retry-After, and counts each token apart', async () => {
    const token = newApiToken();
    await issueToken(table.stores.tokens, { ownerId: owner.ownerId, tokenHash: hashToken(token), now: FIXED_NOW });
    const limited = await authorizedCaller(token);
    // All 101 requests must fall into one window: start at the top of a minute if the current one is nearly over.
    const secondsLeft = 60 - (Math.floor(Date.now() / 1000) % 60);
    if (secondsLeft < 8) await new Promise((resolve) => setTimeout(resolve, secondsLeft * 1000 + 100));

    const replies = await Promise.all(Array.from({ length: 101 }, () => call('list-webhooks', project.projectId, {}, limited)));
    const refused = replies.filter((reply) => reply.status === 429);
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(100);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.body).toEqual({ error: 'Rate limit exceeded: 100 requests per minute' });
    expect(Number(refused[0]!.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused[0]!.headers['Retry-After'])).toBeLessThanOrEqual(60);

    expect((await call('list-webhooks', project.projectId, {}, caller)).status).toBe(200);
  });
});
