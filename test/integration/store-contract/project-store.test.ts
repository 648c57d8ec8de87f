import { expect, it } from 'vitest';
import { type AuditEntry, apiEntry } from '#domain/audit';
import { FIXED_NOW } from '#test-support/fixtures';
import { forEachImplementation, OWNER_ID, type StoreWorld } from './subjects';

/** ProjectStore (lambdas/domain/ports.ts): the fake of test/support/memory-stores.ts and DynamoProjectStore, one contract. */

const USER_HASH = expect.stringMatching(/^[0-9a-f]{64}$/);
const actor = { tokenId: 'tok_contract', requestId: 'req-contract' };
const revokeEntry = (projectId: string, keyId: string): AuditEntry =>
  apiEntry({ actor }, { projectId, at: FIXED_NOW, action: 'key.revoke', target: { key_id: keyId }, outcome: { revoked: true } });

async function ids(pages: AsyncIterable<string[]>): Promise<string[]> {
  const all: string[] = [];
  for await (const page of pages) all.push(...page);
  return all;
}

forEachImplementation('stores', (world: () => StoreWorld) => {
  it('reads a project as it was created, and nothing for an unknown id', async () => {
    const projectId = await world().newProject('Aimbot');
    expect(await world().projects.getProject(projectId)).toEqual({
      id: projectId,
      ownerId: OWNER_ID,
      name: 'Aimbot',
      plan: 'business',
      currentVersionId: null,
      keyCount: 0,
      createdAt: FIXED_NOW,
    });
    expect(await world().projects.getProject('prj_00000000000000000000')).toBeUndefined();
  });

  it('counts issued keys in the project', async () => {
    const projectId = await world().newProject();
    await world().issueKeys(projectId, 3);
    await world().issueKeys(projectId, 2);
    expect((await world().projects.getProject(projectId))?.keyCount).toBe(5);
  });

  it("lists keys after an issue number, in issue order, with exactly the spec's fields", async () => {
    const projectId = await world().newProject();
    const issued = await world().issueKeys(projectId, 5, { maxUses: 10 });
    const page = await world().projects.listKeysAfter(projectId, 1, 3);
    expect(page.map((key) => key.id)).toEqual(issued.slice(1, 4).map((key) => key.id));
    expect(page[0]).toEqual({
      id: issued[1]?.id,
      user_hash: USER_HASH,
      tier: 'standard',
      watermark: issued[1]?.watermark,
      issued_at: FIXED_NOW,
      expires_at: FIXED_NOW + 30 * 86_400,
      max_uses: 10,
      current_uses: 0,
      revoked: 0,
    });
  });

  it('lists no keys past the last one, and none of another project', async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    await world().issueKeys(projectId, 2);
    await world().issueKeys(other, 2);
    expect(await world().projects.listKeysAfter(projectId, 2, 10)).toEqual([]);
    expect((await world().projects.listKeysAfter(projectId, 0, 10)).map((key) => key.id)).toHaveLength(2);
  });

  it('pages the keys of a watermark in issue order and counts them all, revoked ones too', async () => {
    const projectId = await world().newProject();
    const marked = [
      ...(await world().issueKeys(projectId, 2, { watermark: 'aaaa000000000001' })),
      ...(await world().issueKeys(projectId, 3, { watermark: 'aaaa000000000001' })),
    ];
    await world().issueKeys(projectId, 2, { watermark: 'bbbb000000000002' });
    await world().projects.revokeKey(projectId, marked[0]?.id ?? '', FIXED_NOW);

    const page = await world().projects.listKeysWithWatermark(projectId, 'aaaa000000000001', 1, 2);
    expect(page.total).toBe(5);
    expect(page.keys.map((key) => key.id)).toEqual(marked.slice(1, 3).map((key) => key.id));
    const first = await world().projects.listKeysWithWatermark(projectId, 'aaaa000000000001', 0, 1);
    expect(first.keys.map((key) => [key.id, key.revoked])).toEqual([[marked[0]?.id, 1]]);
  });

  it("finds no keys of a watermark in another project's keys", async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    await world().issueKeys(other, 2, { watermark: 'cccc000000000003' });
    expect(await world().projects.listKeysWithWatermark(projectId, 'cccc000000000003', 0, 10)).toEqual({ keys: [], total: 0 });
  });

  it('revokes an active key once, recording who did, then says it was already revoked', async () => {
    const projectId = await world().newProject();
    const [key] = await world().issueKeys(projectId, 1);
    const keyId = key?.id ?? '';
    expect(await world().projects.revokeKey(projectId, keyId, FIXED_NOW + 5, revokeEntry(projectId, keyId))).toBe('revoked');
    expect(await world().projects.revokeKey(projectId, keyId, FIXED_NOW + 6)).toBe('already_revoked');
    expect((await world().projects.listKeysAfter(projectId, 0, 1))[0]?.revoked).toBe(1);
    expect((await world().keys.getKey(projectId, keyId))?.revoked_by).toBe('tok_contract');
  });

  it('writes the audit entry exactly when it revokes the key', async () => {
    const projectId = await world().newProject();
    const [key] = await world().issueKeys(projectId, 1);
    const keyId = key?.id ?? '';
    const first = revokeEntry(projectId, keyId);
    await world().projects.revokeKey(projectId, keyId, FIXED_NOW, first);
    await world().projects.revokeKey(projectId, keyId, FIXED_NOW, revokeEntry(projectId, keyId));
    expect(await world().auditEntries({ projectId })).toEqual([first]);
  });

  it("does not revoke, and says not found for, a key that does not exist or is another project's", async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const [key] = await world().issueKeys(other, 1);
    expect(await world().projects.revokeKey(projectId, 'key_00000000000000000000', FIXED_NOW)).toBe('not_found');
    expect(await world().projects.revokeKey(projectId, key?.id ?? '', FIXED_NOW, revokeEntry(projectId, key?.id ?? ''))).toBe('not_found');
    expect((await world().projects.listKeysAfter(other, 0, 1))[0]?.revoked).toBe(0);
    expect(await world().auditEntries({ projectId })).toEqual([]);
  });

  it('revokes if active only once, recording who did', async () => {
    const projectId = await world().newProject();
    const [key] = await world().issueKeys(projectId, 1);
    const keyId = key?.id ?? '';
    expect(await world().projects.revokeIfActive(projectId, keyId, FIXED_NOW, 'tok_bulk')).toBe(true);
    expect(await world().projects.revokeIfActive(projectId, keyId, FIXED_NOW, 'tok_other')).toBe(false);
    expect((await world().keys.getKey(projectId, keyId))?.revoked_by).toBe('tok_bulk');
  });

  it('tells the active keys among those given, leaving out revoked and unknown ones', async () => {
    const projectId = await world().newProject();
    const marked = await world().issueKeys(projectId, 4, { watermark: 'dddd000000000004' });
    await world().projects.revokeKey(projectId, marked[1]?.id ?? '', FIXED_NOW);
    const active = await world().projects.activeAmong([...marked.map((key) => key?.id ?? ''), 'key_00000000000000000000']);
    expect(active.sort()).toEqual([marked[0], marked[2], marked[3]].map((key) => key?.id).sort());
  });

  it('yields every key of a watermark, revoked ones too, each once, and no key of another watermark', async () => {
    const projectId = await world().newProject();
    const marked = await world().issueKeys(projectId, 4, { watermark: 'ffff000000000006' });
    await world().issueKeys(projectId, 1, { watermark: 'abab000000000007' });
    await world().projects.revokeKey(projectId, marked[1]?.id ?? '', FIXED_NOW);
    const all = await ids(world().projects.keyIdsWithWatermark(projectId, 'ffff000000000006'));
    expect(all.sort()).toEqual(marked.map((key) => key?.id).sort());
  });

  it("revokes only a key of its own project: another project's key is a failed condition and stays active", async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const [foreign] = await world().issueKeys(other, 1);
    expect(await world().projects.revokeIfActive(projectId, foreign?.id ?? '', FIXED_NOW, 'tok_bulk')).toBe(false);
    expect((await world().keys.getKey(other, foreign?.id ?? ''))?.revoked).toBe(0);
  });

  it('lists versions by id with the fields the spec gives them', async () => {
    const projectId = await world().newProject();
    const first = await world().uploadVersion(projectId, 'first', FIXED_NOW);
    const second = await world().uploadVersion(projectId, 'second', FIXED_NOW + 1);
    const versions = await world().projects.listVersions(projectId);
    expect(versions.map((version) => version.id)).toEqual([first, second].sort());
    expect(versions.find((version) => version.id === second)).toEqual({
      id: second,
      version_number: 2,
      uploaded_at: FIXED_NOW + 1,
      size_bytes: 1024,
      notes: 'second',
    });
  });

  it("points the project at one of its versions with the entry, and refuses another project's version", async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const first = await world().uploadVersion(projectId, 'first', FIXED_NOW);
    await world().uploadVersion(projectId, 'second', FIXED_NOW);
    const foreign = await world().uploadVersion(other, 'foreign', FIXED_NOW);
    const entry = apiEntry({ actor }, { projectId, at: FIXED_NOW, action: 'version.rollback', target: { version_id: first }, outcome: {} });

    expect(await world().projects.setCurrentVersion(projectId, foreign, entry)).toBe(false);
    expect(await world().auditEntries({ projectId })).toEqual([]);
    expect(await world().projects.setCurrentVersion(projectId, first, entry)).toBe(true);
    expect((await world().projects.getProject(projectId))?.currentVersionId).toBe(first);
    expect(await world().auditEntries({ projectId })).toEqual([entry]);
  });

  it('refuses to set a version of a project that does not exist', async () => {
    expect(await world().projects.setCurrentVersion('prj_00000000000000000000', 'ver_00000000000000000000')).toBe(false);
  });

  it('lists every webhook of the project by id, enabled or not', async () => {
    const projectId = await world().newProject();
    const url = 'https://discord.com/api/webhooks/1/token';
    const on = await world().addWebhook(projectId, { url, events: ['version_deployed'], enabled: true, now: FIXED_NOW });
    const off = await world().addWebhook(projectId, { url, events: ['key_abuse', 'clone_detected'], enabled: false, now: FIXED_NOW });
    const webhooks = await world().projects.listWebhooks(projectId);
    expect(webhooks.map((webhook) => webhook.id)).toEqual([on, off].sort());
    expect(webhooks.find((webhook) => webhook.id === off)).toEqual({
      id: off,
      url,
      events: '["key_abuse","clone_detected"]',
      enabled: 0,
      created_at: FIXED_NOW,
      updated_at: FIXED_NOW,
    });
  });

  it('reads the stats counters of one granularity and dimension whose buckets start in the range, in time order', async () => {
    const projectId = await world().newProject();
    const hour = FIXED_NOW - (FIXED_NOW % 3600);
    await world().addStatsBucket(projectId, 'hour', 'result', { t: hour + 3600, total: 2, counts: { ok: 2 } });
    await world().addStatsBucket(projectId, 'hour', 'result', { t: hour, total: 3, counts: { ok: 1, revoked: 2 } });
    await world().addStatsBucket(projectId, 'hour', 'result', { t: hour + 7200, total: 1, counts: { ok: 1 } });
    await world().addStatsBucket(projectId, 'hour', 'executor', { t: hour, total: 1, counts: { Synapse: 1 } });

    expect(await world().projects.statsBuckets({ projectId, granularity: 'hour', by: 'result', first: hour, last: hour + 3600 })).toEqual([
      { t: hour, total: 3, counts: { ok: 1, revoked: 2 }, rest: 0 },
      { t: hour + 3600, total: 2, counts: { ok: 2 }, rest: 0 },
    ]);
  });
});
