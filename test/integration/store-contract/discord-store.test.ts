import { expect, it } from 'vitest';
import type { DiscordLink } from '#domain/discord/link';
import { FIXED_NOW } from '#test-support/fixtures';
import { type DiscordWorld, forEachImplementation } from './subjects';

/** DiscordKeyStore (lambdas/domain/ports.ts): MemoryDiscordStore and DynamoDiscordStore, one contract. */

const LINK: DiscordLink = { publicKey: 'a'.repeat(64), applicationId: '1234567890', resetCooldown: 86_400, linkedAt: FIXED_NOW };
const USER = '111111111111111111';
const OTHER_USER = '222222222222222222';
const FP = (n: number) => n.toString(16).padStart(64, '0');
const NO_PROJECT = 'prj_00000000000000000000';

forEachImplementation('discord', (world: () => DiscordWorld) => {
  const store = () => world().store;

  it("sets and reads a project's link, and removes it", async () => {
    const projectId = await world().newProject();
    expect(await store().discordLink(projectId)).toBeUndefined();
    expect(await store().setDiscordLink(projectId, LINK)).toBe(true);
    expect(await store().discordLink(projectId)).toEqual(LINK);
    expect(await store().removeDiscordLink(projectId)).toBe(true);
    expect(await store().discordLink(projectId)).toBeUndefined();
  });

  it('replaces a link whole, an application id with none', async () => {
    const projectId = await world().newProject();
    await store().setDiscordLink(projectId, LINK);
    const relinked = { ...LINK, applicationId: null, resetCooldown: 0, linkedAt: FIXED_NOW + 1 };
    await store().setDiscordLink(projectId, relinked);
    expect(await store().discordLink(projectId)).toEqual(relinked);
  });

  it('links nothing to, and removes nothing from, a project that does not exist', async () => {
    expect(await store().setDiscordLink(NO_PROJECT, LINK)).toBe(false);
    expect(await store().removeDiscordLink(NO_PROJECT)).toBe(false);
    expect(await store().discordLink(NO_PROJECT)).toBeUndefined();
  });

  it('links a key to a user, answering the key as it is after the write', async () => {
    const projectId = await world().newProject();
    const key = await world().issueKey(projectId);
    const write = await store().linkKeyToUser({ projectId, ...key }, USER, FIXED_NOW);
    expect(write).toEqual({
      written: true,
      key: {
        id: key.keyId,
        projectId,
        keyHash: key.keyHash,
        discordId: USER,
        revoked: false,
        expiresAt: FIXED_NOW + 30 * 86_400,
        maxUses: null,
        currentUses: 0,
        maxFingerprints: null,
        boundMachines: 0,
        hwidResetAt: null,
      },
    });
    expect(await store().keysOfUser(projectId, USER)).toEqual([write.key]);
  });

  it('links a key again to the user it is linked to', async () => {
    const projectId = await world().newProject();
    const key = await world().issueKey(projectId, { discordId: USER });
    expect(await store().linkKeyToUser({ projectId, ...key }, USER, FIXED_NOW)).toMatchObject({ written: true, key: { discordId: USER } });
  });

  it("refuses to link another user's key, answering it unchanged", async () => {
    const projectId = await world().newProject();
    const key = await world().issueKey(projectId, { discordId: OTHER_USER });
    expect(await store().linkKeyToUser({ projectId, ...key }, USER, FIXED_NOW)).toMatchObject({
      written: false,
      key: { id: key.keyId, discordId: OTHER_USER },
    });
  });

  it('refuses to link a key by another hash, or of another project', async () => {
    const projectId = await world().newProject();
    const key = await world().issueKey(projectId);
    expect(await store().linkKeyToUser({ projectId, keyId: key.keyId, keyHash: 'f'.repeat(64) }, USER, FIXED_NOW)).toMatchObject({
      written: false,
      key: { discordId: null },
    });
    expect(await store().linkKeyToUser({ projectId: NO_PROJECT, ...key }, USER, FIXED_NOW)).toMatchObject({ written: false, key: { discordId: null } });
  });

  it('refuses to link a revoked key, or an expired one', async () => {
    const projectId = await world().newProject();
    const revoked = await world().issueKey(projectId);
    await world().revoke(projectId, revoked.keyId);
    const expiring = await world().issueKey(projectId, { expiresAt: FIXED_NOW + 10 });
    expect(await store().linkKeyToUser({ projectId, ...revoked }, USER, FIXED_NOW)).toMatchObject({ written: false, key: { revoked: true, discordId: null } });
    expect(await store().linkKeyToUser({ projectId, ...expiring }, USER, FIXED_NOW + 10)).toMatchObject({ written: false, key: { discordId: null } });
  });

  it('links no key that does not exist', async () => {
    const projectId = await world().newProject();
    expect(await store().linkKeyToUser({ projectId, keyId: 'key_00000000000000000000', keyHash: 'a'.repeat(64) }, USER, FIXED_NOW)).toEqual({
      written: false,
      key: undefined,
    });
  });

  it("lists a user's keys of the project in issue order, and no one else's", async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const first = await world().issueKey(projectId, { discordId: USER });
    await world().issueKey(projectId, { discordId: OTHER_USER });
    const second = await world().issueKey(projectId, { discordId: USER });
    await world().issueKey(other, { discordId: USER });
    expect((await store().keysOfUser(projectId, USER)).map((key) => key.id)).toEqual([first.keyId, second.keyId]);
  });

  it("resets a user's machines and starts the cooldown, answering how many it unbound", async () => {
    const projectId = await world().newProject();
    const key = await world().issueKey(projectId, { discordId: USER, maxFingerprints: 3 });
    await world().bindMachines(projectId, key, [FP(1), FP(2)]);
    const write = await store().resetMachinesOfUser({ projectId, keyId: key.keyId }, USER, FIXED_NOW + 100, FIXED_NOW);
    expect(write).toEqual({ written: true, key: expect.objectContaining({ id: key.keyId, boundMachines: 2, hwidResetAt: FIXED_NOW + 100, currentUses: 2 }) });
    expect(await store().keysOfUser(projectId, USER)).toEqual([expect.objectContaining({ boundMachines: 0, hwidResetAt: FIXED_NOW + 100 })]);
  });

  it('resets nothing within the cooldown, answering the key as it is', async () => {
    const projectId = await world().newProject();
    const key = await world().issueKey(projectId, { discordId: USER, maxFingerprints: 3 });
    await world().bindMachines(projectId, key, [FP(1)]);
    await store().resetMachinesOfUser({ projectId, keyId: key.keyId }, USER, FIXED_NOW + 100, FIXED_NOW);
    await world().bindMachines(projectId, key, [FP(2)]);
    const write = await store().resetMachinesOfUser({ projectId, keyId: key.keyId }, USER, FIXED_NOW + 200, FIXED_NOW + 99);
    expect(write).toEqual({ written: false, key: expect.objectContaining({ boundMachines: 1, hwidResetAt: FIXED_NOW + 100 }) });
    expect(await store().resetMachinesOfUser({ projectId, keyId: key.keyId }, USER, FIXED_NOW + 200, FIXED_NOW + 100)).toMatchObject({ written: true });
  });

  it("resets nothing of a key with no machine bound, or of another user's key", async () => {
    const projectId = await world().newProject();
    const unbound = await world().issueKey(projectId, { discordId: USER, maxFingerprints: 3 });
    const theirs = await world().issueKey(projectId, { discordId: OTHER_USER, maxFingerprints: 3 });
    await world().bindMachines(projectId, theirs, [FP(1)]);
    expect(await store().resetMachinesOfUser({ projectId, keyId: unbound.keyId }, USER, FIXED_NOW, FIXED_NOW)).toMatchObject({ written: false });
    expect(await store().resetMachinesOfUser({ projectId, keyId: theirs.keyId }, USER, FIXED_NOW, FIXED_NOW)).toMatchObject({
      written: false,
      key: { boundMachines: 1 },
    });
  });
});
