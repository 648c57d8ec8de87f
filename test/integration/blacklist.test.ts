import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '#adapters/layout';
import { createStores } from '#adapters/stores';
import { AddressTally } from '#domain/address-tally';
import { addToBlacklist, BLACKLIST_LIMITS, blacklistEntryId, blacklistProblem, emailSha256, listBlacklist, removeFromBlacklist } from '#domain/blacklist';
import type { BlacklistEntry } from '#domain/blacklist-model';
import { BlacklistEntryNotFound } from '#domain/errors';
import type { Project } from '#domain/model';
import { RefusalMemory } from '#domain/refusal-memory';
import { createValidateHandler } from '#http/loader-validate';
import { VALIDATE_ROUTE } from '#http/public-routes';
import { buildLoaderEvent } from '#local/proxy-event';
import { invoke, type Reply } from '#test-support/api-harness';
import { createTestTable, FIXED_NOW, type SeededOwner, seedOwner, type TestTable } from '#test-support/fixtures';

/**
 * The buyer blacklist (DESIGN.md, "Buyer blacklist") on DynamoDB Local: entries found by one GetItem and paged by
 * their dense positions, an add that bans the buyer's keys, and the loader's binding that a listed machine cannot get.
 */

const FP = (n: number) => n.toString(16).padStart(64, '0');
const DISCORD_ID = '223456789012345678';

let table: TestTable;
let owner: SeededOwner;
let addresses = 0;

beforeAll(async () => {
  table = await createTestTable('blacklist');
  owner = await seedOwner(table.stores);
}, 60_000);

afterAll(async () => {
  await table?.drop();
});

async function newProject(): Promise<Project> {
  const projectId = await table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: 'Blacklist Script', plan: 'business', now: FIXED_NOW });
  const project = await table.stores.projects.getProject(projectId);
  if (!project) throw new Error('no project');
  return project;
}

async function issueKey(projectId: string, fields: { maxFingerprints?: number; discordId?: string } = {}) {
  const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, now: FIXED_NOW, ...fields });
  if (!key) throw new Error('no key issued');
  return key;
}

const storedKey = async (keyId: string) =>
  (await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.key(keyId), ConsistentRead: true }))).Item ?? {};

const trail = () => ({ log: table.stores.audit, actor: { tokenId: owner.tokenId, requestId: randomUUID() } });
const store = () => table.stores.blacklist;

/** The validate handler as one container runs it, from an address of its own. */
function validate(projectId: string, key: string, fingerprint: string): Promise<Reply> {
  const stores = createStores(table.db, table.tableName);
  addresses += 1;
  const handler = createValidateHandler({
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: { report: async () => undefined },
    now: () => FIXED_NOW,
    logger: new Logger({ serviceName: 'blacklist', logLevel: 'SILENT' }),
  });
  return invoke(
    handler,
    buildLoaderEvent({
      route: VALIDATE_ROUTE,
      body: JSON.stringify({ project_id: projectId, key, fingerprint, executor: 'Wave' }),
      requestId: randomUUID(),
      timeEpoch: FIXED_NOW * 1000,
      sourceIp: `10.88.${addresses & 255}.1`,
    }),
  );
}

const entry = (n: number): BlacklistEntry => {
  const target = { kind: 'fingerprint', value: FP(1000 + n) } as const;
  return { ...target, id: blacklistEntryId(target), reason: `leak ${n}`, addedBy: 'tok_test', createdAt: FIXED_NOW + n };
};

describe('entries', () => {
  it('finds an entry by its buyer with one read, and names each kind by an id that reads back as its buyer', async () => {
    const project = await newProject();
    const email = emailSha256('  Leaker@Example.COM ');
    expect(email).toBe(emailSha256('leaker@example.com'));
    await addToBlacklist(store(), project, { email_sha256: email, reason: 'Chargeback' }, FIXED_NOW, trail());
    expect(await store().findEntry(project.id, { kind: 'email_sha256', value: email })).toMatchObject({ reason: 'Chargeback', addedBy: owner.tokenId });
    expect(await store().findEntry(project.id, { kind: 'email_sha256', value: FP(9) })).toBeUndefined();
    expect(await blacklistProblem(store(), project.id, { discordId: DISCORD_ID, emailSha256: email })).toMatchObject({ kind: 'email_sha256' });
    expect(await blacklistProblem(store(), project.id, { discordId: DISCORD_ID })).toBeUndefined();
  });

  it('pages by dense positions: offset and limit after removes in the middle still cover every entry once, and total counts them', async () => {
    const project = await newProject();
    for (let n = 1; n <= 7; n++) expect(await store().addEntry(project.id, entry(n), BLACKLIST_LIMITS.entriesPerProject)).toEqual({ outcome: 'added' });
    expect(await removeFromBlacklist(store(), project, entry(2).id, FIXED_NOW, trail())).toEqual({ ok: true });
    expect(await removeFromBlacklist(store(), project, entry(7).id, FIXED_NOW, trail())).toEqual({ ok: true });
    const first = await listBlacklist(store(), project, { limit: 3, offset: 0 });
    const second = await listBlacklist(store(), project, { limit: 3, offset: 3 });
    expect(first.total).toBe(5);
    expect([...first.entries, ...second.entries].map((shown) => shown.reason).sort()).toEqual(['leak 1', 'leak 3', 'leak 4', 'leak 5', 'leak 6']);
    // The newest entry took the first removed one's place.
    expect(first.entries.map((shown) => shown.reason)).toEqual(['leak 1', 'leak 6', 'leak 3']);
    expect(first.entries[0]).toEqual({ id: entry(1).id, fingerprint: FP(1001), reason: 'leak 1', added_by: 'tok_test', created_at: FIXED_NOW + 1 });
  });

  it('refuses the entry past the bound, and keeps a listed buyer as first added', async () => {
    const project = await newProject();
    expect(await store().addEntry(project.id, entry(1), 2)).toEqual({ outcome: 'added' });
    expect(await store().addEntry(project.id, { ...entry(1), reason: 'again' }, 2)).toEqual({ outcome: 'exists', entry: entry(1) });
    expect(await store().addEntry(project.id, entry(2), 2)).toEqual({ outcome: 'added' });
    expect(await store().addEntry(project.id, entry(3), 2)).toEqual({ outcome: 'full' });
    expect((await store().listEntries(project.id, 0, 10)).total).toBe(2);
  });

  it("answers 404 for another project's entry and for an id of no entry's form, removing nothing", async () => {
    const mine = await newProject();
    const theirs = await newProject();
    await store().addEntry(theirs.id, entry(1), BLACKLIST_LIMITS.entriesPerProject);
    await expect(removeFromBlacklist(store(), mine, entry(1).id, FIXED_NOW, trail())).rejects.toThrow(BlacklistEntryNotFound);
    await expect(removeFromBlacklist(store(), mine, 'key_00000000000000000000', FIXED_NOW, trail())).rejects.toThrow(BlacklistEntryNotFound);
    expect((await store().listEntries(theirs.id, 0, 10)).total).toBe(1);
  });

  it('audits an add and a remove', async () => {
    const project = await newProject();
    const { id } = await addToBlacklist(store(), project, { discord_id: DISCORD_ID, reason: 'Chargeback' }, FIXED_NOW, trail());
    await removeFromBlacklist(store(), project, id, FIXED_NOW + 1, trail());
    const entries = await table.stores.audit.list({ projectId: project.id }, 10);
    expect(entries.map((audit) => [audit.action, audit.target, audit.outcome])).toEqual([
      ['blacklist.remove', { entry_id: id }, { discord_id: DISCORD_ID, reason: 'Chargeback' }],
      ['blacklist.add', { discord_id: DISCORD_ID, reason: 'Chargeback' }, { id, banned_keys: 0, already_listed: false }],
    ]);
  });
});

describe('enforcement', () => {
  it('bans the keys a machine is bound to when the machine is blacklisted; their next check is KEY_BANNED with the reason', async () => {
    const project = await newProject();
    const bound = await issueKey(project.id, { maxFingerprints: 2 });
    const other = await issueKey(project.id, { maxFingerprints: 2 });
    expect(JSON.parse((await validate(project.id, bound.key, FP(1))).raw)).toMatchObject({ valid: true });
    expect(JSON.parse((await validate(project.id, other.key, FP(2))).raw)).toMatchObject({ valid: true });
    const added = await addToBlacklist(store(), project, { fingerprint: FP(1), reason: 'Leaked the script' }, FIXED_NOW, trail());
    expect(added).toEqual({ id: blacklistEntryId({ kind: 'fingerprint', value: FP(1) }), banned_keys: 1 });
    expect(JSON.parse((await validate(project.id, bound.key, FP(1))).raw)).toEqual({ valid: false, code: 'KEY_BANNED', reason: 'Leaked the script' });
    expect(JSON.parse((await validate(project.id, other.key, FP(2))).raw)).toMatchObject({ valid: true });
    // Removing the entry leaves the ban it made.
    await removeFromBlacklist(store(), project, added.id, FIXED_NOW, trail());
    expect((await storedKey(bound.id)).ban_reason).toBe('Leaked the script');
  });

  it('refuses a blacklisted machine its binding of another key: KEY_BANNED with the reason, nothing bound or counted', async () => {
    const project = await newProject();
    await addToBlacklist(store(), project, { fingerprint: FP(3), reason: 'Leaker' }, FIXED_NOW, trail());
    const fresh = await issueKey(project.id, { maxFingerprints: 1 });
    expect(JSON.parse((await validate(project.id, fresh.key, FP(3))).raw)).toEqual({ valid: false, code: 'KEY_BANNED', reason: 'Leaker' });
    const item = await storedKey(fresh.id);
    expect(item.fingerprints).toEqual({});
    expect(item.current_uses).toBe(0);
    // Another machine binds it as before.
    expect(JSON.parse((await validate(project.id, fresh.key, FP(4))).raw)).toMatchObject({ valid: true });
  });

  it("bans a Discord user's keys, not revoked ones, and keeps a ban for good with its own reason", async () => {
    const project = await newProject();
    const linked = await issueKey(project.id, { discordId: DISCORD_ID });
    const revoked = await issueKey(project.id, { discordId: DISCORD_ID });
    const bannedForGood = await issueKey(project.id, { discordId: DISCORD_ID });
    const bannedForAWeek = await issueKey(project.id, { discordId: DISCORD_ID });
    const someoneElse = await issueKey(project.id);
    await table.stores.projects.revokeKey(project.id, revoked.id, FIXED_NOW);
    await table.stores.keys.setBan(project.id, bannedForGood.id, { reason: 'Earlier', until: null });
    await table.stores.keys.setBan(project.id, bannedForAWeek.id, { reason: 'Cooling off', until: FIXED_NOW + 7 * 86_400 });
    const added = await addToBlacklist(store(), project, { discord_id: DISCORD_ID, reason: 'Chargeback' }, FIXED_NOW, trail());
    expect(added.banned_keys).toBe(2);
    expect((await storedKey(linked.id)).ban_reason).toBe('Chargeback');
    expect(await storedKey(bannedForAWeek.id)).toMatchObject({ ban_reason: 'Chargeback' });
    expect((await storedKey(bannedForAWeek.id)).ban_until).toBeUndefined();
    expect((await storedKey(bannedForGood.id)).ban_reason).toBe('Earlier');
    expect((await storedKey(revoked.id)).ban_reason).toBeUndefined();
    expect((await storedKey(someoneElse.id)).ban_reason).toBeUndefined();
    // A repeat bans nothing new and keeps the entry.
    expect(await addToBlacklist(store(), project, { discord_id: DISCORD_ID, reason: 'Again' }, FIXED_NOW, trail())).toEqual({ id: added.id, banned_keys: 0 });
  });
});
