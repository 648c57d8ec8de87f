import { expect, it } from 'vitest';
import { batchOf, randomKeys } from '#domain/selling-keys';
import { FIXED_NOW } from '#test-support/fixtures';
import { forEachImplementation, type StoreWorld } from './subjects';

/** KeyStore (lambdas/domain/ports.ts): MemoryStores and DynamoKeyStore, one contract. */

const DAY = 86_400;
const EXPIRES = FIXED_NOW + 30 * DAY;
const fields = { tier: 'standard', maxUses: 3, maxFingerprints: 2, note: 'Order 77', discordId: '111111111111111111', issuedAt: FIXED_NOW, expiresAt: EXPIRES };

forEachImplementation('stores', (world: () => StoreWorld) => {
  const store = () => world().keys;

  it('issues a batch the next numbers of the project and reads each key in detail', async () => {
    const projectId = await world().newProject();
    await world().issueKeys(projectId, 2);
    const keys = randomKeys(2, 'aaaa000000000001');
    expect(await store().issue(batchOf(projectId, keys, fields))).toEqual({ outcome: 'issued', firstSeq: 3 });
    expect(await store().getKey(projectId, keys[1]?.id ?? '')).toEqual({
      id: keys[1]?.id,
      user_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      tier: 'standard',
      watermark: 'aaaa000000000001',
      issued_at: FIXED_NOW,
      expires_at: EXPIRES,
      max_uses: 3,
      current_uses: 0,
      revoked: 0,
      note: 'Order 77',
      discord_id: '111111111111111111',
      max_fingerprints: 2,
      fingerprints: [],
      last_check_at: null,
      ban: null,
      revoked_by: null,
    });
  });

  it('reads no key of another project, and no key that does not exist', async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const [key] = await world().issueKeys(other, 1);
    expect(await store().getKey(projectId, key?.id ?? '')).toBeUndefined();
    expect(await store().getKey(projectId, 'key_00000000000000000000')).toBeUndefined();
  });

  it('records an order with its numbers, and answers a repeat with the first order, issuing nothing', async () => {
    const projectId = await world().newProject();
    const keys = randomKeys(2);
    const order = { orderId: 'order-1', bodyHash: 'b'.repeat(64), tokenId: 'tok_shop' };
    await store().issue(batchOf(projectId, keys, fields), order);
    const recorded = { projectId, ...order, firstSeq: 1, count: 2, issuedAt: FIXED_NOW, firstKeyId: keys[0]?.id };
    expect(await store().findOrder(projectId, 'order-1')).toEqual(recorded);
    const repeat = await store().issue(batchOf(projectId, randomKeys(3), { ...fields, issuedAt: FIXED_NOW + 1 }), { ...order, bodyHash: 'c'.repeat(64) });
    expect(repeat).toEqual({ outcome: 'order_exists', order: recorded });
    expect((await world().projects.getProject(projectId))?.keyCount).toBe(2);
    expect(await store().findOrder(projectId, 'order-2')).toBeUndefined();
  });

  it("writes those of an order's keys the table lacks, and says how many", async () => {
    const projectId = await world().newProject();
    const keys = randomKeys(3);
    const batch = batchOf(projectId, keys, fields);
    await store().issue({ ...batch, keys: batch.keys.slice(0, 1) });
    expect(await store().completeOrder(batch, 1)).toBe(2);
    expect(await store().completeOrder(batch, 1)).toBe(0);
    expect(
      (
        await store().keyDetails(
          projectId,
          keys.map((key) => key.id),
        )
      ).map((key) => key.id),
    ).toEqual(keys.map((key) => key.id));
  });

  it('sets a ban and lifts it, on the keys of the project only', async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const [key] = await world().issueKeys(projectId, 1);
    const keyId = key?.id ?? '';
    expect(await store().setBan(projectId, keyId, { reason: 'Shared', until: FIXED_NOW + DAY })).toBe(true);
    expect((await store().getKey(projectId, keyId))?.ban).toEqual({ reason: 'Shared', until: FIXED_NOW + DAY });
    expect(await store().setBan(projectId, keyId, { reason: 'For good', until: null })).toBe(true);
    expect((await store().getKey(projectId, keyId))?.ban).toEqual({ reason: 'For good', until: null });
    expect(await store().setBan(other, keyId, null)).toBe(false);
    expect(await store().setBan(projectId, keyId, null)).toBe(true);
    expect((await store().getKey(projectId, keyId))?.ban).toBeNull();
  });

  it('extends a running key from its expiry, an expired one from now, a lifetime to its date', async () => {
    const projectId = await world().newProject();
    const [key] = await world().issueKeys(projectId, 1, { expiresAt: FIXED_NOW + DAY });
    const keyId = key?.id ?? '';
    expect(await store().extendExpiry(projectId, keyId, { seconds: DAY, now: FIXED_NOW })).toBe(FIXED_NOW + 2 * DAY);
    expect(await store().extendExpiry(projectId, keyId, { seconds: DAY, now: FIXED_NOW + 5 * DAY })).toBe(FIXED_NOW + 6 * DAY);
    expect(await store().extendExpiry(projectId, keyId, { lifetimeAt: 4_102_444_800 })).toBe(4_102_444_800);
    expect((await store().getKey(projectId, keyId))?.expires_at).toBe(4_102_444_800);
  });

  it('extends no key of another project', async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const [key] = await world().issueKeys(other, 1);
    expect(await store().extendExpiry(projectId, key?.id ?? '', { seconds: DAY, now: FIXED_NOW })).toBeUndefined();
    expect(await store().extendExpiry(projectId, key?.id ?? '', { lifetimeAt: 4_102_444_800 })).toBeUndefined();
  });

  it('edits the fields named, removes those set to null, and keeps the rest', async () => {
    const projectId = await world().newProject();
    const keys = randomKeys(1);
    await store().issue(batchOf(projectId, keys, fields));
    const keyId = keys[0]?.id ?? '';
    const edited = await store().editKey(projectId, keyId, { note: null, maxUses: 10, maxFingerprints: null });
    expect(edited).toMatchObject({ id: keyId, note: null, discord_id: '111111111111111111', max_uses: 10, max_fingerprints: null, fingerprints: [] });
    expect(await store().getKey(projectId, keyId)).toEqual(edited);
  });

  it('moves a key from one Discord user to another in the lookup by Discord id', async () => {
    const projectId = await world().newProject();
    const keys = randomKeys(2);
    await store().issue(batchOf(projectId, keys, fields));
    await store().editKey(projectId, keys[0]?.id ?? '', { discordId: '222222222222222222' });
    expect(await store().keyIdsByDiscordId(projectId, '111111111111111111')).toEqual([keys[1]?.id]);
    expect(await store().keyIdsByDiscordId(projectId, '222222222222222222')).toEqual([keys[0]?.id]);
    await store().editKey(projectId, keys[1]?.id ?? '', { discordId: null });
    expect(await store().keyIdsByDiscordId(projectId, '111111111111111111')).toEqual([]);
  });

  it('edits no key of another project, and refuses an edit that changes nothing', async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const [key] = await world().issueKeys(other, 1);
    expect(await store().editKey(projectId, key?.id ?? '', { note: 'mine now' })).toBeUndefined();
    await expect(store().editKey(other, key?.id ?? '', {})).rejects.toThrow();
  });

  it('lists the details of the keys asked for in the order given, leaving out others', async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const mine = await world().issueKeys(projectId, 2);
    const [theirs] = await world().issueKeys(other, 1);
    const asked = [mine[1]?.id, theirs?.id, 'key_00000000000000000000', mine[0]?.id].map(String);
    expect((await store().keyDetails(projectId, asked)).map((key) => key.id)).toEqual([mine[1]?.id, mine[0]?.id]);
  });

  it("resets no machines of an unbound key, and none of another project's key", async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const [unbound] = await world().issueKeys(projectId, 1);
    const [theirs] = await world().issueKeys(other, 1, { maxFingerprints: 2 });
    expect(await store().resetFingerprints(projectId, unbound?.id ?? '')).toBe(0);
    expect(await store().resetFingerprints(projectId, theirs?.id ?? '')).toBeUndefined();
    expect(await store().resetFingerprints(projectId, 'key_00000000000000000000')).toBeUndefined();
  });
});
