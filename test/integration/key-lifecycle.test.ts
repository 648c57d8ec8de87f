import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '#adapters/layout';
import { createStores } from '#adapters/stores';
import { TABLE } from '#adapters/table-definition';
import { AddressTally } from '#domain/address-tally';
import { banKey, extendKey, unbanKey } from '#domain/key-lifecycle';
import type { Project } from '#domain/model';
import { RefusalMemory } from '#domain/refusal-memory';
import { createValidateHandler } from '#http/loader-validate';
import { VALIDATE_ROUTE } from '#http/public-routes';
import { buildLoaderEvent } from '#local/proxy-event';
import { LIFETIME_EXPIRES_AT } from '#schemas/requests';
import { invoke, type Reply } from '#test-support/api-harness';
import { createTestTable, FIXED_NOW, type SeededOwner, seedOwner, type TestTable } from '#test-support/fixtures';

/**
 * The key lifecycle (DESIGN.md, "Key lifecycle: ban, extend, edit") on DynamoDB Local: each change is one
 * conditional write on the key item, and the loader's check, which judges the key inside its own conditional write,
 * sees it from the moment the change answered, with no use ever counted for a refusal.
 */

const FP = (n: number) => n.toString(16).padStart(64, '0');
const DISCORD_ID = '123456789012345678';

let table: TestTable;
let owner: SeededOwner;
let addresses = 0;

beforeAll(async () => {
  table = await createTestTable('key-lifecycle');
  owner = await seedOwner(table.stores);
}, 60_000);

afterAll(async () => {
  await table?.drop();
});

async function newProject(): Promise<Project> {
  const projectId = await table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: 'Lifecycle Script', plan: 'business', now: FIXED_NOW });
  const project = await table.stores.projects.getProject(projectId);
  if (!project) throw new Error('no project');
  return project;
}

async function issueKey(projectId: string, fields: { expiresAt?: number } = {}) {
  const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, expiresAt: fields.expiresAt, now: FIXED_NOW });
  if (!key) throw new Error('no key issued');
  return key;
}

const storedKey = async (keyId: string) =>
  (await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.key(keyId), ConsistentRead: true }))).Item ?? {};

const trail = () => ({ log: table.stores.audit, actor: { tokenId: owner.tokenId, requestId: randomUUID() } });

/** The validate handler as one container runs it, at `now`, from an address of its own. */
function loaderContainer(now: number = FIXED_NOW) {
  const stores = createStores(table.db, table.tableName);
  addresses += 1;
  const handler = createValidateHandler({
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: { report: async () => undefined },
    now: () => now,
    logger: new Logger({ serviceName: 'key-lifecycle', logLevel: 'SILENT' }),
  });
  return (projectId: string, key: string, fingerprint = FP(1)): Promise<Reply> =>
    invoke(
      handler,
      buildLoaderEvent({
        route: VALIDATE_ROUTE,
        body: JSON.stringify({ project_id: projectId, key, fingerprint, executor: 'Wave' }),
        requestId: randomUUID(),
        timeEpoch: now * 1000,
        sourceIp: `10.77.${addresses & 255}.1`,
      }),
    );
}

/**
 * Checks in `workers` concurrent loops while `change` runs: it starts once `startAfter` checks started, and the loops
 * stop `checksAfter` checks after it resolved. A check's sequence number is taken when it starts, so "started after
 * the change resolved" is the order of events in this process, not a clock.
 */
async function checksRacing(check: () => Promise<Reply>, change: () => Promise<unknown>, { startAfter = 12, checksAfter = 30, workers = 6 } = {}) {
  const answers: { seq: number; code: string }[] = [];
  let started = 0;
  let changedAt: number | undefined;
  let changing: Promise<unknown> | undefined;
  const maxChecks = startAfter + checksAfter + 200;
  const loop = async () => {
    while (started < maxChecks && (changedAt === undefined || started < changedAt + checksAfter)) {
      const seq = started++;
      if (seq === startAfter)
        changing = change().then(() => {
          changedAt = started;
        });
      const reply = await check();
      answers.push({ seq, code: reply.status === 200 ? String(reply.body.code) : `HTTP ${reply.status}` });
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
  await changing;
  if (changedAt === undefined) throw new Error(`the change did not resolve within ${maxChecks} checks`);
  return { answers, changedAt };
}

describe('ban and unban on the key item', () => {
  it('a ban with an end writes ban_reason and ban_until, a ban without one only ban_reason, an unban neither', async () => {
    const project = await newProject();
    const { id } = await issueKey(project.id);
    await banKey(table.stores.keys, project, { key_id: id, reason: 'A week off', until: FIXED_NOW + 7 * 86_400 }, FIXED_NOW, trail());
    expect(await storedKey(id)).toMatchObject({ ban_reason: 'A week off', ban_until: FIXED_NOW + 7 * 86_400 });
    await banKey(table.stores.keys, project, { key_id: id, reason: 'Until unbanned' }, FIXED_NOW, trail());
    const permanent = await storedKey(id);
    expect(permanent.ban_reason).toBe('Until unbanned');
    expect(permanent).not.toHaveProperty('ban_until');
    await unbanKey(table.stores.keys, project, { key_id: id }, FIXED_NOW, trail());
    const unbanned = await storedKey(id);
    expect(unbanned).not.toHaveProperty('ban_reason');
    expect(unbanned).not.toHaveProperty('ban_until');
  });

  it('refuses a key of another project as unknown, writing nothing on it', async () => {
    const [mine, theirs] = [await newProject(), await newProject()];
    const { id } = await issueKey(theirs.id);
    expect(await table.stores.keys.setBan(mine.id, id, { reason: 'r', until: null })).toBe(false);
    expect(await storedKey(id)).not.toHaveProperty('ban_reason');
  });

  it('validate answers KEY_BANNED with the reason and counts nothing; from until on, and after an unban, the key runs', async () => {
    const project = await newProject();
    const { id, key } = await issueKey(project.id);
    const until = FIXED_NOW + 600;
    await banKey(table.stores.keys, project, { key_id: id, reason: 'Shared in #general', until }, FIXED_NOW, trail());
    expect((await loaderContainer(until - 1)(project.id, key)).body).toEqual({ valid: false, code: 'KEY_BANNED', reason: 'Shared in #general' });
    expect((await storedKey(id)).current_uses).toBe(0);
    expect((await loaderContainer(until)(project.id, key)).body).toMatchObject({ valid: true, code: 'KEY_VALID' });
    await banKey(table.stores.keys, project, { key_id: id, reason: 'Again', until: until + 600 }, until, trail());
    expect((await loaderContainer(until + 1)(project.id, key)).body).toMatchObject({ code: 'KEY_BANNED', reason: 'Again' });
    await unbanKey(table.stores.keys, project, { key_id: id }, until + 1, trail());
    expect((await loaderContainer(until + 2)(project.id, key)).body).toMatchObject({ valid: true, code: 'KEY_VALID' });
    expect((await storedKey(id)).current_uses).toBe(2);
  });
});

describe('a ban racing a stream of checks', () => {
  it('every check answers valid-and-counted or banned-and-not-counted, never a counted refusal; every check started after the ban answered is banned', async () => {
    const project = await newProject();
    const { id, key } = await issueKey(project.id);
    const check = loaderContainer();
    const { answers, changedAt } = await checksRacing(
      () => check(project.id, key),
      () => banKey(table.stores.keys, project, { key_id: id, reason: 'Race', until: FIXED_NOW + 3_600 }, FIXED_NOW, trail()),
    );
    expect(new Set(answers.map(({ code }) => code))).toEqual(new Set(['KEY_VALID', 'KEY_BANNED']));
    expect(new Set(answers.filter(({ seq }) => seq >= changedAt).map(({ code }) => code))).toEqual(new Set(['KEY_BANNED']));
    expect((await storedKey(id)).current_uses).toBe(answers.filter(({ code }) => code === 'KEY_VALID').length);
  });
});

describe('extend', () => {
  it('adds the duration to an expiry in the future, in one write', async () => {
    const project = await newProject();
    const { id } = await issueKey(project.id, { expiresAt: FIXED_NOW + 100 });
    expect(await table.stores.keys.extendExpiry(project.id, id, { seconds: 86_400, now: FIXED_NOW })).toBe(FIXED_NOW + 100 + 86_400);
    expect((await storedKey(id)).expires_at).toBe(FIXED_NOW + 100 + 86_400);
  });

  it('counts from now for an expired key (its failed first write says so), and sets the far-future value for lifetime', async () => {
    const project = await newProject();
    const { id } = await issueKey(project.id, { expiresAt: FIXED_NOW - 5_000 });
    expect(await table.stores.keys.extendExpiry(project.id, id, { seconds: 86_400, now: FIXED_NOW })).toBe(FIXED_NOW + 86_400);
    expect(await table.stores.keys.extendExpiry(project.id, id, { lifetimeAt: LIFETIME_EXPIRES_AT })).toBe(LIFETIME_EXPIRES_AT);
    expect((await storedKey(id)).expires_at).toBe(LIFETIME_EXPIRES_AT);
  });

  it('answers undefined for a key of another project or none, and moves nothing', async () => {
    const [mine, theirs] = [await newProject(), await newProject()];
    const { id } = await issueKey(theirs.id, { expiresAt: FIXED_NOW + 100 });
    expect(await table.stores.keys.extendExpiry(mine.id, id, { seconds: 60, now: FIXED_NOW })).toBeUndefined();
    expect(await table.stores.keys.extendExpiry(mine.id, 'key_00000000000000000000', { lifetimeAt: LIFETIME_EXPIRES_AT })).toBeUndefined();
    expect((await storedKey(id)).expires_at).toBe(FIXED_NOW + 100);
  });

  it('racing a stream of checks of an expired key: expired-and-not-counted, then valid-and-counted once the extend answered', async () => {
    const project = await newProject();
    const { id, key } = await issueKey(project.id, { expiresAt: FIXED_NOW - 60 });
    const check = loaderContainer();
    const { answers, changedAt } = await checksRacing(
      () => check(project.id, key),
      () => extendKey(table.stores.keys, project, { key_id: id, duration: 30 * 86_400 }, FIXED_NOW, trail()),
    );
    expect(new Set(answers.map(({ code }) => code))).toEqual(new Set(['KEY_EXPIRED', 'KEY_VALID']));
    expect(new Set(answers.filter(({ seq }) => seq >= changedAt).map(({ code }) => code))).toEqual(new Set(['KEY_VALID']));
    expect(await storedKey(id)).toMatchObject({
      expires_at: FIXED_NOW + 30 * 86_400,
      current_uses: answers.filter(({ code }) => code === 'KEY_VALID').length,
    });
  });
});

describe('edit', () => {
  const keysOfDiscordUser = async (projectId: string, discordId: string) =>
    (
      await table.db.send(
        new QueryCommand({
          TableName: table.tableName,
          IndexName: TABLE.indexes.byDiscordId.name,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': TABLE.indexes.byDiscordId.partitionKey },
          ExpressionAttributeValues: { ':pk': `${projectId}#${discordId}` },
        }),
      )
    ).Items?.map((item) => String(item.pk)) ?? [];

  it('links a Discord id and keeps discordKey with it, so the byDiscordId index finds the key; null removes both', async () => {
    const project = await newProject();
    const { id } = await issueKey(project.id);
    expect(await table.stores.keys.editKey(project.id, id, { discordId: DISCORD_ID, note: 'Renewed' })).toMatchObject({
      discord_id: DISCORD_ID,
      note: 'Renewed',
    });
    expect(await storedKey(id)).toMatchObject({ discord_id: DISCORD_ID, discordKey: `${project.id}#${DISCORD_ID}` });
    expect(await keysOfDiscordUser(project.id, DISCORD_ID)).toEqual([keyOf.key(id).pk]);
    expect(await table.stores.keys.editKey(project.id, id, { discordId: null, note: null })).toMatchObject({ discord_id: null, note: null });
    const unlinked = await storedKey(id);
    expect(unlinked).not.toHaveProperty('discordKey');
    expect(unlinked).not.toHaveProperty('note');
    expect(await keysOfDiscordUser(project.id, DISCORD_ID)).toEqual([]);
  });

  it('binds a key issued unbound once it is given a machine limit; a lower limit keeps the machines bound and binds no new one; null unbinds', async () => {
    const project = await newProject();
    const { id, key } = await issueKey(project.id);
    const check = loaderContainer();
    expect((await check(project.id, key, FP(1))).body.code).toBe('KEY_VALID');
    await table.stores.keys.editKey(project.id, id, { maxFingerprints: 2 });
    expect((await check(project.id, key, FP(1))).body.code).toBe('KEY_VALID');
    expect((await check(project.id, key, FP(2))).body.code).toBe('KEY_VALID');
    const lowered = await table.stores.keys.editKey(project.id, id, { maxFingerprints: 1 });
    expect(lowered?.fingerprints.map(({ fingerprint }) => fingerprint)).toEqual([FP(1), FP(2)]);
    expect((await check(project.id, key, FP(2))).body.code).toBe('KEY_VALID');
    expect((await check(project.id, key, FP(3))).body.code).toBe('KEY_HWID_LOCKED');
    expect(await table.stores.keys.editKey(project.id, id, { maxFingerprints: null })).toMatchObject({ max_fingerprints: null, fingerprints: [] });
    expect((await check(project.id, key, FP(3))).body.code).toBe('KEY_VALID');
  });

  it('sets and clears a use cap that the next check judges', async () => {
    const project = await newProject();
    const { id, key } = await issueKey(project.id);
    const check = loaderContainer();
    expect((await check(project.id, key)).body.code).toBe('KEY_VALID');
    expect(await table.stores.keys.editKey(project.id, id, { maxUses: 1 })).toMatchObject({ max_uses: 1, current_uses: 1 });
    expect((await check(project.id, key)).body.code).toBe('KEY_OVER_LIMIT');
    await table.stores.keys.editKey(project.id, id, { maxUses: null });
    expect((await check(project.id, key)).body).toMatchObject({ code: 'KEY_VALID', uses_left: null });
  });

  it('answers undefined for a key of another project, writing nothing on it', async () => {
    const [mine, theirs] = [await newProject(), await newProject()];
    const { id } = await issueKey(theirs.id);
    expect(await table.stores.keys.editKey(mine.id, id, { note: 'x' })).toBeUndefined();
    expect(await storedKey(id)).not.toHaveProperty('note');
  });

  it('issues a key with a Discord id carrying discordKey, as an edit does', async () => {
    const project = await newProject();
    const keyId = `key_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    await table.stores.keys.issue({
      projectId: project.id,
      keys: [{ id: keyId, keyHash: 'a'.repeat(64), watermark: '0123456789abcdef' }],
      tier: 'standard',
      maxUses: null,
      maxFingerprints: null,
      note: null,
      discordId: DISCORD_ID,
      issuedAt: FIXED_NOW,
      expiresAt: FIXED_NOW + 60,
    });
    expect(await keysOfDiscordUser(project.id, DISCORD_ID)).toEqual([keyOf.key(keyId).pk]);
  });
});
