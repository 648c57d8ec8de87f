import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoFreeKeyStore } from '#adapters/free-key-store';
import { keySecretSealer } from '#adapters/secret-sealer';
import { openSettings, sealSettings } from '#domain/free-keys/sealing';
import { sendAgain, startSession } from '#domain/free-keys/session';
import { memoryKeySecret } from '#local/key-secret';
import { FreeKeySettings } from '#schemas/free-keys';
import { createTestTable, FIXED_NOW, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/** Free keys in the one table (lambdas/adapters/free-key-store.ts), against DynamoDB Local. */

let table: TestTable;
let store: DynamoFreeKeyStore;
let projectId: string;
const sealer = keySecretSealer(memoryKeySecret(), 'freeKeys');

const settings = FreeKeySettings.parse({
  checkpoints: [{ provider: 'linkvertise', url: 'https://link-to.net/1/demo', link_id: 'lv', secret: 'lv-api-token-123' }],
  duration_hours: 12,
});

beforeAll(async () => {
  table = await createTestTable('free-keys');
  store = new DynamoFreeKeyStore(table.db, table.tableName);
  const owner = await seedOwner(table.stores);
  ({ projectId } = await seedProject(table.stores, { ownerId: owner.ownerId }));
});
afterAll(async () => {
  await table?.drop();
});

describe('settings', () => {
  it('are kept on the project with each secret sealed, and open to what was set', async () => {
    expect(await store.putSettings(projectId, await sealSettings(sealer, projectId, settings))).toBe(true);
    const stored = await store.settings(projectId);
    expect(JSON.stringify(stored)).not.toContain('lv-api-token-123');
    expect(await openSettings(sealer, projectId, stored as FreeKeySettings)).toEqual(settings);
  });

  it('sealed for one project do not open for another', async () => {
    const stored = (await store.settings(projectId)) as FreeKeySettings;
    await expect(openSettings(sealer, 'prj_other', stored)).rejects.toThrow();
  });

  it('are refused for a project that does not exist, writing nothing', async () => {
    expect(await store.putSettings('prj_missing', settings)).toBe(false);
    expect(await store.settings('prj_missing')).toBeUndefined();
  });
});

describe('sessions', () => {
  it('are read back until they expire', async () => {
    const session = startSession({ projectId, fingerprint: 'a'.repeat(64), address: '203.0.113.7', now: FIXED_NOW });
    await store.putSession(session);
    expect(await store.session(session.id, FIXED_NOW + 1)).toEqual(session);
    expect(await store.session(session.id, session.expiresAt)).toBeUndefined();
  });

  it('advance only from the state that was read: of two racing returns one wins', async () => {
    const session = startSession({ projectId, fingerprint: 'a'.repeat(64), address: '203.0.113.7', now: FIXED_NOW });
    await store.putSession(session);
    const first = { ...sendAgain(session, FIXED_NOW + 10), passed: 1 };
    const second = { ...sendAgain(session, FIXED_NOW + 11), passed: 1 };
    const wins = await Promise.all([store.replaceSession(session, first), store.replaceSession(session, second)]);
    expect(wins.filter(Boolean)).toHaveLength(1);
    const kept = await store.session(session.id, FIXED_NOW + 12);
    expect(kept?.nonce).toBe(wins[0] ? first.nonce : second.nonce);
  });
});

describe('single use', () => {
  it('claims a provider token once per project and provider', async () => {
    expect(await store.claimToken(projectId, 'workink', 'tok-1', FIXED_NOW)).toBe(true);
    expect(await store.claimToken(projectId, 'workink', 'tok-1', FIXED_NOW)).toBe(false);
    expect(await store.claimToken(projectId, 'linkvertise', 'tok-1', FIXED_NOW)).toBe(true);
  });

  it('keeps the first Lootlabs postback of a click id', async () => {
    await store.recordPostback(projectId, 'click-1', { ip: '203.0.113.7', uniqueId: 'u-1' }, FIXED_NOW);
    await store.recordPostback(projectId, 'click-1', { ip: '198.51.100.1', uniqueId: 'u-2' }, FIXED_NOW);
    expect(await store.postbackOf(projectId, 'click-1')).toEqual({ ip: '203.0.113.7', uniqueId: 'u-1' });
    expect(await store.postbackOf(projectId, 'click-2')).toBeUndefined();
  });
});

describe('the funnel', () => {
  it('counts each step per UTC day and reads the days back in order', async () => {
    const day = FIXED_NOW - (FIXED_NOW % 86_400);
    for (const step of ['started', 'started', 'passed_1', 'bypass_too_fast', 'issued'] as const) await store.countFunnel(projectId, step, day + 5);
    await store.countFunnel(projectId, 'started', day + 86_400);
    expect(await store.funnel(projectId, day, day + 86_400)).toEqual([
      { t: day, counts: { started: 2, passed_1: 1, bypass_too_fast: 1, issued: 1 } },
      { t: day + 86_400, counts: { started: 1 } },
    ]);
  });
});
