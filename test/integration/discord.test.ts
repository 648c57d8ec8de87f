import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoKeyCheckStore } from '#adapters/key-check-store';
import { keyOf } from '#adapters/layout';
import { AddressTally } from '#domain/address-tally';
import { linkDiscord, RESET_COOLDOWN_SECONDS, unlinkDiscord } from '#domain/discord/link';
import { InvalidInput } from '#domain/errors';
import { checkKey, validateAnswer } from '#domain/key-check';
import type { TelemetrySink } from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import { RefusalTally } from '#domain/unsigned-refusals';
import { createInteractionsHandler } from '#http/discord-interactions';
import { memoryDiscordKeyPair } from '#local/discord-key';
import { interactionEvent, slashCommand } from '#test-support/discord-events';
import { createTestTable, FIXED_NOW, lambdaContext, type SeededOwner, seedOwner, type TestTable } from '#test-support/fixtures';

/**
 * Buyers' Discord commands on DynamoDB Local (DESIGN.md, "Buyers help themselves in Discord"): the one conditional
 * write of a redeem under a race, the reset's cooldown in the same write as the reset, a key check racing a reset,
 * and the link's removal.
 */

const BUYER = '123456789012345678';
const RIVAL = '223456789012345678';
const FP = (n: number) => n.toString(16).padStart(64, '0');
const noTelemetry: TelemetrySink = { report: async () => undefined };
const application = memoryDiscordKeyPair();
const logger = new Logger({ serviceName: 'discord-test', logLevel: 'SILENT' });

let table: TestTable;
let owner: SeededOwner;
let addresses = 0;

beforeAll(async () => {
  table = await createTestTable('discord');
  owner = await seedOwner(table.stores);
});

afterAll(async () => {
  await table?.drop();
});

async function linkedProject(): Promise<string> {
  const projectId = await table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: 'Discord Script', plan: 'business', now: FIXED_NOW });
  await linkDiscord(table.stores.discord, projectId, { publicKey: application.publicKeyHex }, FIXED_NOW);
  return projectId;
}

async function issue(projectId: string, options: { maxFingerprints?: number; discordId?: string } = {}) {
  const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, now: FIXED_NOW, ...options });
  if (!key) throw new Error('no key issued');
  return key;
}

/** What Discord's request gets, as a new container of the function would answer it. */
async function send(projectId: string, body: string, now = FIXED_NOW + 10) {
  const handler = createInteractionsHandler({
    store: table.stores.discord,
    audit: table.stores.audit,
    rateLimits: table.stores.rateLimits,
    refusals: new RefusalTally(),
    blacklist: table.stores.blacklist,
    loaderBaseUrl: () => 'https://loader.example.com',
    now: () => now,
    logger,
  });
  const result = await handler(interactionEvent({ projectId, body, now, application }), lambdaContext());
  const parsed = JSON.parse(result.body) as { data?: { content: string } };
  return { status: result.statusCode, content: parsed.data?.content ?? '' };
}

/** One loader check from its own container and address. */
function check(projectId: string, key: string, fingerprint: string, now = FIXED_NOW + 10) {
  addresses += 1;
  const deps = {
    keys: new DynamoKeyCheckStore(table.db, table.tableName),
    rateLimits: table.stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: noTelemetry,
  };
  return checkKey(deps, { project_id: projectId, key, fingerprint, executor: 'Wave' }, `203.0.${addresses >> 8}.${addresses & 255}`, now).then(validateAnswer);
}

const itemOf = async (keyId: string) =>
  (await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.key(keyId), ConsistentRead: true }))).Item ?? {};

describe('redeem: one conditional write', () => {
  it('links exactly one of two users redeeming one key at once; the other is told it is taken, and the index names the winner only', async () => {
    const projectId = await linkedProject();
    const key = await issue(projectId);
    const replies = await Promise.all([BUYER, RIVAL].map((user) => send(projectId, slashCommand('redeem', user, key.key))));
    const linked = replies.filter((reply) => reply.content.includes('is linked to your account'));
    const refused = replies.filter((reply) => reply.content.includes('another Discord account'));
    expect(linked, JSON.stringify(replies)).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const winner = replies[0]?.content.includes('is linked to your account') ? BUYER : RIVAL;
    const loser = winner === BUYER ? RIVAL : BUYER;
    expect(await itemOf(key.id)).toMatchObject({ discord_id: winner, discordKey: `${projectId}#${winner}` });
    expect(await table.stores.keys.keyIdsByDiscordId(projectId, winner)).toEqual([key.id]);
    expect(await table.stores.keys.keyIdsByDiscordId(projectId, loser)).toEqual([]);
    expect((await send(projectId, slashCommand('status', loser))).content).toContain('No key is linked');
  });

  it('finds keys issued with a Discord id through the index: status lists them', async () => {
    const projectId = await linkedProject();
    const key = await issue(projectId, { discordId: BUYER });
    expect((await send(projectId, slashCommand('status', BUYER))).content).toContain(`\`${key.id}\`: active`);
  });
});

describe('resethwid: the cooldown in the same write as the reset', () => {
  it('resets once, then within the cooldown changes nothing and says when; after it, resets again', async () => {
    const projectId = await linkedProject();
    const key = await issue(projectId, { maxFingerprints: 1, discordId: BUYER });
    expect(await check(projectId, key.key, FP(1))).toMatchObject({ valid: true });

    const first = await send(projectId, slashCommand('resethwid', BUYER), FIXED_NOW + 100);
    expect(first.content).toContain('1 machine unbound');
    expect(await check(projectId, key.key, FP(2), FIXED_NOW + 110)).toMatchObject({ valid: true });

    const before = await itemOf(key.id);
    const again = await send(projectId, slashCommand('resethwid', BUYER), FIXED_NOW + 200);
    expect(again.content).toContain(`can be reset again <t:${FIXED_NOW + 100 + RESET_COOLDOWN_SECONDS.default}:R>`);
    const after = await itemOf(key.id);
    expect(after.fingerprints).toEqual(before.fingerprints);
    expect(after.hwidResetAt).toBe(FIXED_NOW + 100);
    expect(await check(projectId, key.key, FP(3), FIXED_NOW + 210)).toMatchObject({ valid: false, code: 'KEY_HWID_LOCKED' });

    const later = await send(projectId, slashCommand('resethwid', BUYER), FIXED_NOW + 100 + RESET_COOLDOWN_SECONDS.default);
    expect(later.content).toContain('1 machine unbound');

    const entries = await table.stores.audit.list({ projectId }, 10);
    expect(entries.filter((entry) => entry.action === 'key.reset_hwid')).toEqual([
      expect.objectContaining({ source: 'discord', target: { key_id: key.id, discord_user_id: BUYER } }),
      expect.objectContaining({ source: 'discord', target: { key_id: key.id, discord_user_id: BUYER } }),
    ]);
  });

  it('spends no cooldown on a key with no machine bound', async () => {
    const projectId = await linkedProject();
    const key = await issue(projectId, { maxFingerprints: 1, discordId: BUYER });
    expect((await send(projectId, slashCommand('resethwid', BUYER))).content).toContain('nothing to reset');
    expect((await itemOf(key.id)).hwidResetAt).toBeUndefined();
  });

  it('keeps a check racing a reset consistent: the other machine runs exactly when it ends up the one bound, and the old one never stays bound', async () => {
    const projectId = await linkedProject();
    for (let round = 0; round < 4; round++) {
      const key = await issue(projectId, { maxFingerprints: 1, discordId: BUYER });
      expect(await check(projectId, key.key, FP(10))).toMatchObject({ valid: true });
      const [answer, reply] = await Promise.all([check(projectId, key.key, FP(11)), send(projectId, slashCommand('resethwid', BUYER))]);
      expect(reply.content).toContain('1 machine unbound');
      const detail = await table.stores.keys.getKey(projectId, key.id);
      const bound = detail?.fingerprints.map((machine) => machine.fingerprint) ?? [];
      expect(bound).not.toContain(FP(10));
      expect(bound).toEqual(answer.valid ? [FP(11)] : []);
    }
  });
});

describe('the link', () => {
  it('answers 401 once the project is unlinked, and again once linked', async () => {
    const projectId = await linkedProject();
    expect((await send(projectId, '{"type":1}')).status).toBe(200);
    expect(await unlinkDiscord(table.stores.discord, projectId)).toBe(true);
    expect((await send(projectId, '{"type":1}')).status).toBe(401);
    await linkDiscord(table.stores.discord, projectId, { publicKey: application.publicKeyHex, resetCooldown: 3_600 }, FIXED_NOW);
    expect(await table.stores.discord.discordLink(projectId)).toMatchObject({ resetCooldown: 3_600 });
    expect((await send(projectId, '{"type":1}')).status).toBe(200);
  });

  it('refuses to link a project that does not exist, writing nothing', async () => {
    expect(await linkDiscord(table.stores.discord, 'prj_00000000000000000000', { publicKey: application.publicKeyHex }, FIXED_NOW)).toBeUndefined();
    expect(await table.stores.projects.getProject('prj_00000000000000000000')).toBeUndefined();
  });

  it('refuses a malformed link with InvalidInput naming the field, and keeps the link it had', async () => {
    const projectId = await linkedProject();
    const before = await table.stores.discord.discordLink(projectId);
    await expect(linkDiscord(table.stores.discord, projectId, { publicKey: 'ab'.repeat(31) }, FIXED_NOW)).rejects.toThrow(InvalidInput);
    await expect(linkDiscord(table.stores.discord, projectId, { publicKey: application.publicKeyHex, resetCooldown: 59 }, FIXED_NOW)).rejects.toThrow(
      /^reset_cooldown must be whole seconds/,
    );
    expect(await table.stores.discord.discordLink(projectId)).toEqual(before);
  });

  it('refuses a key of small order or a non-canonical one, naming public_key; the link in force stays and still answers', async () => {
    const projectId = await linkedProject();
    const before = await table.stores.discord.discordLink(projectId);
    const weak = [`01${'00'.repeat(31)}`, 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', `ee${'ff'.repeat(30)}7f`];
    for (const publicKey of weak) await expect(linkDiscord(table.stores.discord, projectId, { publicKey }, FIXED_NOW)).rejects.toThrow(/^public_key is /);
    expect(await table.stores.discord.discordLink(projectId)).toEqual(before);
    expect((await send(projectId, '{"type":1}')).status).toBe(200);
  });

  it('refuses a signed interaction of another application than the one linked', async () => {
    const projectId = await linkedProject();
    await linkDiscord(table.stores.discord, projectId, { publicKey: application.publicKeyHex, applicationId: '123456789012345678' }, FIXED_NOW);
    expect((await send(projectId, JSON.stringify({ type: 1, application_id: '123456789012345678' }))).status).toBe(200);
    expect((await send(projectId, JSON.stringify({ type: 1, application_id: '223456789012345678' }))).status).toBe(401);
  });
});
