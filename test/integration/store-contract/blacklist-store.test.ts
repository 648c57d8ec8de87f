import { expect, it } from 'vitest';
import { blacklistEntryId } from '#domain/blacklist';
import type { BlacklistEntry } from '#domain/blacklist-model';
import { FIXED_NOW } from '#test-support/fixtures';
import { forEachImplementation, type StoreWorld } from './subjects';

/**
 * BlacklistStore (lambdas/domain/ports.ts): MemoryStores and DynamoBlacklistStore, one contract. Entries by buyer,
 * dense positions that a remove fills with the last one, the bound, a Discord user's keys, and the bans an add writes.
 */

const DISCORD_ID = '523456789012345678';

const entry = (n: number): BlacklistEntry => {
  const target = { kind: 'discord_id', value: `52345678901234${String(n).padStart(4, '0')}` } as const;
  return { ...target, id: blacklistEntryId(target), reason: `reason ${n}`, addedBy: 'tok_contract', createdAt: FIXED_NOW + n };
};

forEachImplementation('stores', (world: () => StoreWorld) => {
  const store = () => world().blacklist;

  it('adds entries at the end, finds each by its buyer, keeps a listed buyer as first added and refuses one past the bound', async () => {
    const projectId = await world().newProject();
    for (const n of [1, 2]) expect(await store().addEntry(projectId, entry(n), 3)).toEqual({ outcome: 'added' });
    expect(await store().addEntry(projectId, { ...entry(1), reason: 'again' }, 3)).toEqual({ outcome: 'exists', entry: entry(1) });
    expect(await store().findEntry(projectId, entry(2))).toEqual(entry(2));
    expect(await store().findEntry(projectId, { kind: 'fingerprint', value: 'a'.repeat(64) })).toBeUndefined();
    expect(await store().addEntry(projectId, entry(3), 3)).toEqual({ outcome: 'added' });
    expect(await store().addEntry(projectId, entry(4), 3)).toEqual({ outcome: 'full' });
    expect(await store().listEntries(projectId, 0, 10)).toEqual({ entries: [entry(1), entry(2), entry(3)], total: 3 });
  });

  it('removes an entry by moving the last position into its place, pages by position, and removes nothing of another project', async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    for (const n of [1, 2, 3, 4]) await store().addEntry(projectId, entry(n), 10);
    expect(await store().removeEntry(other, entry(2))).toBeUndefined();
    expect(await store().removeEntry(projectId, entry(2))).toEqual(entry(2));
    expect(await store().removeEntry(projectId, entry(2))).toBeUndefined();
    expect(await store().listEntries(projectId, 0, 2)).toEqual({ entries: [entry(1), entry(4)], total: 3 });
    expect(await store().listEntries(projectId, 2, 2)).toEqual({ entries: [entry(3)], total: 3 });
    expect(await store().removeEntry(projectId, entry(3))).toEqual(entry(3));
    expect(await store().listEntries(projectId, 0, 10)).toEqual({ entries: [entry(1), entry(4)], total: 2 });
  });

  it("finds a Discord user's keys and bans those not revoked and not banned for good, counting what it banned", async () => {
    const projectId = await world().newProject();
    const [linked, revoked, bannedForGood] = await world().issueKeys(projectId, 3, { discordId: DISCORD_ID });
    await world().issueKeys(projectId, 1);
    await world().projects.revokeKey(projectId, revoked?.id ?? '', FIXED_NOW);
    await world().keys.setBan(projectId, bannedForGood?.id ?? '', { reason: 'Earlier', until: null });
    const ids = await store().keyIdsOfBuyer(projectId, { kind: 'discord_id', value: DISCORD_ID }, 10);
    expect(ids.toSorted()).toEqual([linked?.id, revoked?.id, bannedForGood?.id].toSorted());
    expect(await store().keyIdsOfBuyer(projectId, { kind: 'discord_id', value: DISCORD_ID }, 2)).toHaveLength(2);
    expect(await store().keyIdsOfBuyer(projectId, { kind: 'email_sha256', value: 'b'.repeat(64) }, 10)).toEqual([]);
    expect(await store().banKeys(projectId, ids, 'Chargeback')).toBe(1);
    expect((await world().keys.getKey(projectId, linked?.id ?? ''))?.ban).toEqual({ reason: 'Chargeback', until: null });
    expect((await world().keys.getKey(projectId, bannedForGood?.id ?? ''))?.ban).toEqual({ reason: 'Earlier', until: null });
    // Another project's keys are not banned through this one.
    const stranger = await world().newProject();
    expect(await store().banKeys(stranger, [linked?.id ?? ''], 'x')).toBe(0);
  });
});
