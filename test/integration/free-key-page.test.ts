import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoFreeKeyStore } from '#adapters/free-key-store';
import { keySecretSealer } from '#adapters/secret-sealer';
import { sealSettings } from '#domain/free-keys/sealing';
import { type CheckpointVerifier, MIN_CHECKPOINT_SECONDS, type Verdict } from '#domain/free-keys/session';
import { hashKeyValue, keyIdOf } from '#domain/key-values';
import { createFreeKeyPageHandler, FREE_PAGE_CSP } from '#http/free-key-page';
import { memoryKeySecret } from '#local/key-secret';
import { FreeKeySettings } from '#schemas/free-keys';
import { createTestTable, FIXED_NOW, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/**
 * The key page's whole way (lambdas/http/free-key-page.ts) against DynamoDB Local, with the providers' answers
 * scripted: start, each checkpoint, the key, and the refusals that issue nothing.
 */

let table: TestTable;
let projectId: string;
let now = FIXED_NOW;
const ADDRESS = '203.0.113.7';
const MACHINE = 'c'.repeat(64);
const sealer = keySecretSealer(memoryKeySecret(), 'freeKeys');
let verdicts: Verdict[] = [];
const verifier: CheckpointVerifier = { verify: async () => verdicts.shift() ?? { kind: 'invalid' } };
let handler: ReturnType<typeof createFreeKeyPageHandler>;
let freeStore: DynamoFreeKeyStore;

const settings = FreeKeySettings.parse({
  checkpoints: [
    { provider: 'workink', url: 'https://work.ink/1a/demo', link_id: '4242', secret: 'unused' },
    { provider: 'linkvertise', url: 'https://link-to.net/1/demo', link_id: 'lv', secret: 'lv-api-token' },
  ],
  duration_hours: 24,
  machines: 1,
});

beforeAll(async () => {
  table = await createTestTable('free-page');
  freeStore = new DynamoFreeKeyStore(table.db, table.tableName);
  const owner = await seedOwner(table.stores);
  ({ projectId } = await seedProject(table.stores, { ownerId: owner.ownerId }));
  await freeStore.putSettings(projectId, await sealSettings(sealer, projectId, settings));
  handler = createFreeKeyPageHandler({
    store: freeStore,
    sealer,
    verifier,
    rateLimits: table.stores.rateLimits,
    keys: table.stores.keys,
    now: () => now,
    logger: new Logger({ logLevel: 'SILENT' }),
  });
});
afterAll(async () => {
  await table?.drop();
});

function request(path: 'start' | 'return' | 'postback', query: Record<string, string>, address = ADDRESS, project = projectId) {
  const event = {
    routeKey: path === 'start' ? 'GET /v1/free/{project_id}' : `GET /v1/free/{project_id}/${path}`,
    pathParameters: { project_id: project },
    queryStringParameters: query,
    headers: {},
    requestContext: { http: { sourceIp: address, method: 'GET' } },
  } as unknown as APIGatewayProxyEventV2;
  return handler(event, {} as Context);
}
const sessionOf = (body: string) => /sd_free_session=([0-9a-f]{32})/.exec(body)?.[1];

describe('the key page', () => {
  it('walks both checkpoints and shows a key bound to one machine, valid for the settings duration', async () => {
    const start = await request('start', { m: MACHINE });
    expect(start.statusCode).toBe(200);
    expect(start.headers?.['Content-Security-Policy']).toBe(FREE_PAGE_CSP);
    expect(start.body).toContain('Checkpoint 1 of 2');
    expect(start.body).toContain('href="https://work.ink/1a/demo"');
    const s = sessionOf(String(start.headers?.['Set-Cookie']));
    expect(s).toBeDefined();
    now += MIN_CHECKPOINT_SECONDS.workink;
    verdicts = [{ kind: 'valid', tokenId: 'wk-1', linkId: '4242', address: ADDRESS }];
    const second = await request('return', { s: s ?? '', token: 'wk-1' });
    expect(second.body).toContain('Checkpoint 2 of 2');
    now += MIN_CHECKPOINT_SECONDS.linkvertise;
    verdicts = [{ kind: 'valid', tokenId: 'h'.repeat(64) }];
    const done = await request('return', { s: s ?? '', hash: 'h'.repeat(64) });
    expect(done.statusCode).toBe(200);
    const key = /id="key" readonly value="([^"]+)"/.exec(done.body)?.[1] ?? '';
    const stored = await table.stores.keys.getKey(projectId, keyIdOf(hashKeyValue(key)));
    expect(stored).toMatchObject({ max_fingerprints: 1, expires_at: now + 24 * 3600, revoked: 0 });
    const again = await request('return', { s: s ?? '', hash: 'h'.repeat(64) });
    expect(again.body).toContain('Key already shown');
    expect(again.body).not.toContain(key);
    expect(await freeStore.funnel(projectId, now - (now % 86_400), now - (now % 86_400))).toEqual([
      { t: now - (now % 86_400), counts: { started: 1, passed_1: 1, passed_2: 1, issued: 1 } },
    ]);
  });

  it('refuses a too-fast return and one from another address, counts them, and offers the checkpoint again', async () => {
    const start = await request('start', { m: MACHINE });
    const s = sessionOf(String(start.headers?.['Set-Cookie'])) ?? '';
    const fast = await request('return', { s, token: 'wk-2' });
    expect(fast.statusCode).toBe(403);
    expect(fast.body).toContain('Checkpoint 1 was not completed');
    now += MIN_CHECKPOINT_SECONDS.workink;
    const elsewhere = await request('return', { s, token: 'wk-2' }, '198.51.100.9');
    expect(elsewhere.body).toContain('another network');
    const day = now - (now % 86_400);
    const [counts] = await freeStore.funnel(projectId, day, day);
    expect(counts?.counts).toMatchObject({ bypass_too_fast: 1, bypass_other_address: 1 });
  });

  it('says the provider is down and issues nothing when it does not answer', async () => {
    const start = await request('start', { m: 'd'.repeat(64) });
    const s = sessionOf(String(start.headers?.['Set-Cookie'])) ?? '';
    now += MIN_CHECKPOINT_SECONDS.workink;
    verdicts = [{ kind: 'unavailable', detail: 'Work.ink did not answer in time' }];
    const down = await request('return', { s, token: 'wk-3' });
    expect(down.statusCode).toBe(503);
    expect(down.body).toContain('Nothing was issued');
  });

  it('refuses a second key for the same machine the same day', async () => {
    const start = await request('start', { m: MACHINE });
    const s = sessionOf(String(start.headers?.['Set-Cookie'])) ?? '';
    now += 10;
    verdicts = [{ kind: 'valid', tokenId: 'wk-4', linkId: '4242', address: ADDRESS }];
    await request('return', { s, token: 'wk-4' });
    now += 10;
    verdicts = [{ kind: 'valid', tokenId: 'h2'.padEnd(64, 'x') }];
    const limited = await request('return', { s, hash: 'h2'.padEnd(64, 'x') });
    expect(limited.statusCode).toBe(429);
    expect(limited.body).toContain('Come back tomorrow');
  });

  it('refuses a link without a machine, without echoing what it was given', async () => {
    const bad = await request('start', { m: '<script>alert(1)</script>' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).not.toContain('<script>');
  });

  it("records Lootlabs' postback only with the checkpoint's secret", async () => {
    const owner = await seedOwner(table.stores);
    const { projectId: loot } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const lootSettings = FreeKeySettings.parse({
      checkpoints: [{ provider: 'lootlabs', url: 'https://loot-link.com/s?demo', link_id: 'll', secret: 'postback-secret-1' }],
    });
    await freeStore.putSettings(loot, await sealSettings(sealer, loot, lootSettings));
    const postback = { click_id: 'n'.repeat(32), ip: ADDRESS, unique_id: 'u-1' };
    expect((await request('postback', { ...postback, secret: 'wrong' }, ADDRESS, loot)).statusCode).toBe(401);
    expect(await freeStore.postbackOf(loot, postback.click_id)).toBeUndefined();
    expect((await request('postback', { ...postback, secret: 'postback-secret-1', ip: 'not-an-ip' }, ADDRESS, loot)).statusCode).toBe(400);
    expect((await request('postback', { ...postback, secret: 'postback-secret-1' }, ADDRESS, loot)).statusCode).toBe(200);
    expect(await freeStore.postbackOf(loot, postback.click_id)).toEqual({ ip: ADDRESS, uniqueId: 'u-1' });
  });
});
