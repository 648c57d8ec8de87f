import { Logger } from '@aws-lambda-powertools/logger';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '#domain/audit';
import { blacklistEntryId } from '#domain/blacklist';
import { RESET_COOLDOWN_SECONDS } from '#domain/discord/link';
import { hashKeyValue, keyIdOf, newKeyValue } from '#domain/key-values';
import type { AuditLog, DiscordKeyView } from '#domain/ports';
import { RefusalTally } from '#domain/unsigned-refusals';
import { createInteractionsHandler } from '#http/discord-interactions';
import { memoryDiscordKeyPair } from '#local/discord-key';
import { interactionEvent } from '#test-support/discord-events';
import { lambdaContext } from '#test-support/fixtures';
import { MemoryDiscordStore } from '#test-support/memory-discord-store';
import { MemoryStores } from '#test-support/memory-stores';

/**
 * `POST /v1/discord/interactions/{project_id}` on in-memory stores: the 401s before anything is parsed, PING, each
 * command's reply and the buttons' (DESIGN.md, "Buyers help themselves in Discord").
 * test/integration/discord.test.ts runs the same handler on DynamoDB Local, races included.
 */

const NOW = 1_800_000_000;
const PROJECT = 'prj_0123456789abcdef0123';
const BUYER = '123456789012345678';
const OTHER = '876543210987654321';
const BASE = 'https://loader.example.com';
const application = memoryDiscordKeyPair();

let store: MemoryDiscordStore;
let blacklist: MemoryStores;
let entries: AuditEntry[];
const audit: AuditLog = { record: async (entry) => void entries.push(entry), finish: async () => undefined };
const handler = () =>
  createInteractionsHandler({
    store,
    audit,
    rateLimits: new MemoryStores(),
    refusals: new RefusalTally(),
    blacklist,
    loaderBaseUrl: () => BASE,
    now: () => NOW,
    logger: new Logger({ serviceName: 'discord-test', logLevel: 'SILENT' }),
  });

function addKey(view: Partial<DiscordKeyView> = {}): { value: string; id: string } {
  const value = newKeyValue();
  const keyHash = hashKeyValue(value);
  const id = keyIdOf(keyHash);
  store.keys.set(id, {
    id,
    projectId: PROJECT,
    keyHash,
    discordId: null,
    revoked: false,
    expiresAt: NOW + 86_400,
    maxUses: null,
    currentUses: 3,
    maxFingerprints: 1,
    boundMachines: 1,
    hwidResetAt: null,
    ...view,
  });
  return { value, id };
}

beforeEach(() => {
  blacklist = new MemoryStores();
  store = new MemoryDiscordStore();
  store.projects.add(PROJECT);
  store.links.set(PROJECT, { publicKey: application.publicKeyHex, applicationId: null, resetCooldown: RESET_COOLDOWN_SECONDS.default, linkedAt: NOW });
  entries = [];
});

interface Sent {
  body?: string;
  headers?: Record<string, string>;
  projectId?: string;
}

async function send({ body = '{"type":1}', headers, projectId = PROJECT }: Sent = {}) {
  const result = await handler()(interactionEvent({ projectId, body, now: NOW, application, ...(headers ? { headers } : {}) }), lambdaContext());
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
}

const command = (name: string, options?: { name: string; type: number; value: unknown }[], user = BUYER) =>
  JSON.stringify({ type: 2, data: { name, type: 1, ...(options ? { options } : {}) }, member: { user: { id: user } } });
const button = (customId: string, user = BUYER) => JSON.stringify({ type: 3, data: { custom_id: customId, component_type: 2 }, user: { id: user } });
const contentOf = (reply: { body: Record<string, unknown> }) => (reply.body.data as { content: string }).content;

describe('refused before the body is read: 401 {"error"}', () => {
  it('answers 401 to a missing signature, a stale one and a wrong one, and to a project without a link or none', async () => {
    const stale = String(NOW - 301);
    const cases: Sent[] = [
      { headers: {} },
      { headers: { 'X-Signature-Ed25519': application.signRequest(stale, '{"type":1}'), 'X-Signature-Timestamp': stale } },
      { headers: { 'X-Signature-Ed25519': memoryDiscordKeyPair().signRequest(String(NOW), '{"type":1}'), 'X-Signature-Timestamp': String(NOW) } },
      { projectId: 'prj_unknown' },
    ];
    for (const sent of cases) {
      const reply = await send(sent);
      expect(reply.status, JSON.stringify(sent)).toBe(401);
      expect(reply.body).toEqual({ error: expect.any(String) });
    }
    store.links.delete(PROJECT);
    expect((await send()).status).toBe(401);
  });

  it('changes nothing on a refused redeem: the key stays unlinked', async () => {
    const key = addKey();
    const body = command('redeem', [{ name: 'key', type: 3, value: key.value }]);
    const reply = await send({ body, headers: { 'X-Signature-Ed25519': application.signRequest(String(NOW), '{}'), 'X-Signature-Timestamp': String(NOW) } });
    expect(reply.status).toBe(401);
    expect(store.keys.get(key.id)?.discordId).toBeNull();
  });

  it('answers 400 to a signed body that is not JSON', async () => {
    expect((await send({ body: '{"type":' })).status).toBe(400);
  });
});

describe("the interaction's application_id, when the link names one", () => {
  const APP = '123456789012345678';
  const linkTo = (applicationId: string | null) =>
    store.links.set(PROJECT, { publicKey: application.publicKeyHex, applicationId, resetCooldown: RESET_COOLDOWN_SECONDS.default, linkedAt: NOW });

  it('answers an interaction of the linked application', async () => {
    linkTo(APP);
    expect(await send({ body: JSON.stringify({ type: 1, application_id: APP }) })).toEqual({ status: 200, body: { type: 1 } });
  });

  it('refuses 401, changing nothing, an interaction of another application or of none, though signed by the key', async () => {
    linkTo(APP);
    const key = addKey();
    for (const applicationId of ['876543210987654321', undefined]) {
      const body = JSON.stringify({
        type: 2,
        application_id: applicationId,
        data: { name: 'redeem', options: [{ name: 'key', type: 3, value: key.value }] },
        member: { user: { id: BUYER } },
      });
      const reply = await send({ body });
      expect(reply.status).toBe(401);
      expect(reply.body.error).toMatch(/application_id is not the application linked/);
    }
    expect(store.keys.get(key.id)?.discordId).toBeNull();
  });

  it('answers any application when the link names none', async () => {
    linkTo(null);
    expect((await send({ body: JSON.stringify({ type: 1, application_id: '876543210987654321' }) })).status).toBe(200);
  });
});

describe('PING and the shape of every reply', () => {
  it('answers PING with PONG', async () => {
    expect(await send()).toEqual({ status: 200, body: { type: 1 } });
  });

  it('replies ephemerally (flags 64) with mentions inert', async () => {
    const reply = await send({ body: command('status') });
    expect(reply.body).toMatchObject({ type: 4, data: { flags: 64, allowed_mentions: { parse: [] } } });
  });

  it('says so for an unknown command and for a redeem without its key', async () => {
    expect(contentOf(await send({ body: command('@everyone') }))).toContain('Unknown command "@everyone"');
    expect(contentOf(await send({ body: command('redeem') }))).toContain('/redeem key:');
  });
});

describe('redeem', () => {
  it('refuses a blacklisted user with the reason and links nothing; another user redeems the key', async () => {
    const key = addKey();
    const listed = { kind: 'discord_id', value: BUYER } as const;
    blacklist.addBlacklistEntry(PROJECT, { ...listed, id: blacklistEntryId(listed), reason: 'Chargeback', addedBy: 'tok_1', createdAt: NOW });
    const refused = await send({ body: command('redeem', [{ name: 'key', type: 3, value: key.value }]) });
    expect(contentOf(refused)).toBe('The seller does not let this account redeem keys (reason: Chargeback). Ask the seller.');
    expect(store.keys.get(key.id)?.discordId).toBeNull();
    expect(entries).toEqual([]);
    const other = await send({ body: command('redeem', [{ name: 'key', type: 3, value: key.value }], OTHER) });
    expect(contentOf(other)).toContain('is linked to your account');
  });

  it('links an unlinked key to the user and says when it expires and how many machines are bound; again for the same user it changes nothing', async () => {
    const key = addKey();
    const redeem = command('redeem', [{ name: 'key', type: 3, value: key.value }]);
    const first = contentOf(await send({ body: redeem }));
    expect(first).toContain(`\`${key.id}\` is linked`);
    expect(first).toContain(`<t:${NOW + 86_400}:R>`);
    expect(first).toContain('1 of 1 machine bound');
    expect(first).not.toContain(key.value);
    expect(store.keys.get(key.id)?.discordId).toBe(BUYER);
    expect(contentOf(await send({ body: redeem }))).toContain('is linked');
  });

  it('refuses a key linked to another user and leaves it theirs', async () => {
    const key = addKey({ discordId: OTHER });
    expect(contentOf(await send({ body: command('redeem', [{ name: 'key', type: 3, value: key.value }]) }))).toContain('another Discord account');
    expect(store.keys.get(key.id)?.discordId).toBe(OTHER);
  });

  it('says a value is no key of this project, whatever it looks like', async () => {
    const elsewhere = addKey({ projectId: 'prj_other' });
    for (const value of ['nonsense', newKeyValue(), elsewhere.value]) {
      expect(contentOf(await send({ body: command('redeem', [{ name: 'key', type: 3, value }]) }))).toBe(
        'That is not a key of this script. Check that you copied the whole key.',
      );
    }
    expect(store.keys.get(elsewhere.id)?.discordId).toBeNull();
  });

  it('says a revoked key is revoked and an expired one expired, and links neither', async () => {
    const revoked = addKey({ revoked: true });
    const expired = addKey({ expiresAt: NOW - 10 });
    expect(contentOf(await send({ body: command('redeem', [{ name: 'key', type: 3, value: revoked.value }]) }))).toContain('is revoked');
    expect(contentOf(await send({ body: command('redeem', [{ name: 'key', type: 3, value: expired.value }]) }))).toContain(`expired <t:${NOW - 10}:R>`);
    expect(store.keys.get(revoked.id)?.discordId).toBeNull();
    expect(store.keys.get(expired.id)?.discordId).toBeNull();
  });

  it('opens a modal for the redeem button and redeems the key its submission gives', async () => {
    const opened = await send({ body: button('sd:redeem') });
    expect(opened.body).toMatchObject({ type: 9, data: { custom_id: 'sd:redeem:modal' } });
    const key = addKey();
    const submitted = JSON.stringify({
      type: 5,
      data: { custom_id: 'sd:redeem:modal', components: [{ type: 1, components: [{ type: 4, custom_id: 'key', value: key.value }] }] },
      member: { user: { id: BUYER } },
    });
    expect(contentOf(await send({ body: submitted }))).toContain('is linked');
    expect(store.keys.get(key.id)?.discordId).toBe(BUYER);
  });
});

describe('status', () => {
  it("lists the user's keys of the project, never another user's, with state, expiry, uses and machines", async () => {
    const mine = addKey({ discordId: BUYER, maxUses: 10 });
    const theirs = addKey({ discordId: OTHER });
    const content = contentOf(await send({ body: command('status') }));
    expect(content).toContain(`\`${mine.id}\`: active, expires <t:${NOW + 86_400}:R>, 3 of 10 uses, 1 of 1 machine bound`);
    expect(content).not.toContain(theirs.id);
  });

  it('tells a user with no key how to redeem one, for the command and the button alike', async () => {
    expect(contentOf(await send({ body: command('status') }))).toContain('/redeem');
    expect(contentOf(await send({ body: button('sd:status') }))).toContain('/redeem');
  });
});

describe('resethwid', () => {
  it("unbinds the user's key, says when the next reset is possible, and audits it with source discord and the user's id", async () => {
    const key = addKey({ discordId: BUYER, boundMachines: 1 });
    const content = contentOf(await send({ body: command('resethwid') }));
    expect(content).toContain(`\`${key.id}\`: 1 machine unbound; next reset <t:${NOW + RESET_COOLDOWN_SECONDS.default}:R>`);
    expect(store.keys.get(key.id)).toMatchObject({ boundMachines: 0, hwidResetAt: NOW });
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'key.reset_hwid',
        source: 'discord',
        projectId: PROJECT,
        target: { key_id: key.id, discord_user_id: BUYER },
        outcome: { cleared: 1 },
      }),
    ]);
  });

  it('leaves a key on cooldown alone and says when it can be reset', async () => {
    const resetAt = NOW - 60;
    const key = addKey({ discordId: BUYER, boundMachines: 1, hwidResetAt: resetAt });
    expect(contentOf(await send({ body: button('sd:resethwid') }))).toContain(`can be reset again <t:${resetAt + RESET_COOLDOWN_SECONDS.default}:R>`);
    expect(store.keys.get(key.id)?.boundMachines).toBe(1);
    expect(entries).toEqual([]);
  });

  it('spends no cooldown on a key with no machine bound', async () => {
    const key = addKey({ discordId: BUYER, boundMachines: 0 });
    expect(contentOf(await send({ body: command('resethwid') }))).toContain('nothing to reset');
    expect(store.keys.get(key.id)?.hwidResetAt).toBeNull();
  });
});

describe('loader', () => {
  it('gives the two lines, the key placeholder and the hosted stub of the project on the front door, in a code block', async () => {
    const content = contentOf(await send({ body: command('loader') }));
    expect(content).toContain('```lua\nscript_key = "YOUR-KEY"\n');
    expect(content).toContain(`loadstring(game:HttpGet("${BASE}/v1/loader/stub/${PROJECT}"))()\n\`\`\``);
  });
});
