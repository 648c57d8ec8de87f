import { beforeEach, describe, expect, it } from 'vitest';
import { hashKeyValue, keyIdOf } from '#domain/key-values';
import { bodyHashOf, ORDER_REPEAT_WINDOW_SECONDS } from '#domain/selling-keys';
import { callerOfToken, hashToken } from '#domain/tokens';
import { DURATION_PRESETS, IssueKeysBody, LIFETIME_EXPIRES_AT, parseDuration } from '#schemas/requests';
import { CALLER, expectError, invoke, type MemoryApi, memoryApi, NOW, PROJECT_ID } from '#test-support/api-harness';
import { apiEvent } from '#test-support/fixtures';

/** Selling keys (DESIGN.md, "Selling keys: issue over the API, bind to machines") on the in-memory stores. */

let api: MemoryApi;
let now: number;
beforeEach(() => {
  now = NOW;
  api = memoryApi({}, () => now);
});

const issue = (body: unknown) => invoke(api.handlers['issue-keys'], apiEvent('issue-keys', { projectId: PROJECT_ID, body }));
/** A second write token of the same owner: a shop's old token, or one that leaked. */
const otherToken = callerOfToken(CALLER.ownerId, hashToken('sdt_other-token'), 'write');
const issueAs = (caller: typeof otherToken, body: unknown) =>
  invoke(api.handlers['issue-keys'], apiEvent('issue-keys', { projectId: PROJECT_ID, body, caller }));
const detail = (keyId: string) => invoke(api.handlers['get-key'], apiEvent('get-key', { projectId: PROJECT_ID, keyId }));
const reset = (keyId: string) => invoke(api.handlers['reset-hwid'], apiEvent('reset-hwid', { projectId: PROJECT_ID, body: { key_id: keyId } }));
const projectKeyCount = async () => (await api.store.getProject(PROJECT_ID))!.keyCount;

describe('duration: presets, whole seconds or lifetime', () => {
  it.each([
    ['1d', 86_400],
    ['7d', 604_800],
    ['30d', 2_592_000],
    ['90d', 7_776_000],
    ['365d', 31_536_000],
    [60, 60],
    [315_360_000, 315_360_000],
    ['lifetime', 'lifetime'],
  ] as const)('reads %j as %j', (input, seconds) => {
    expect(parseDuration(input)).toBe(seconds);
  });

  it.each([59, 315_360_001, 60.5, '60', '2w', '30D', null, -86_400])('refuses %j', (input) => {
    expect(parseDuration(input)).toBeUndefined();
  });

  it('defaults to 30 days, one key, no cap and no binding', () => {
    expect(IssueKeysBody.parse({})).toEqual({ count: 1, duration: DURATION_PRESETS['30d'], max_uses: null, max_fingerprints: null });
  });
});

describe('idempotency rules: what counts as the same body', () => {
  const hash = (body: unknown) => bodyHashOf(IssueKeysBody.parse(body));

  it('treats defaults written out and a preset as its seconds as the same body', () => {
    expect(hash({})).toBe(hash({ count: 1, duration: '30d', max_uses: null, max_fingerprints: null }));
    expect(hash({ duration: '7d' })).toBe(hash({ duration: 604_800 }));
  });

  it('ignores the order id itself, and tells apart any other field', () => {
    expect(hash({ order_id: 'a' })).toBe(hash({ order_id: 'b' }));
    const base = { count: 2, duration: '7d', note: 'x' };
    for (const change of [
      { count: 3 },
      { duration: '1d' },
      { note: 'y' },
      { max_uses: 5 },
      { max_fingerprints: 1 },
      { watermark: '0123456789abcdef' },
      { discord_id: '123456789012345678' },
    ]) {
      expect(hash({ ...base, ...change })).not.toBe(hash(base));
    }
  });
});

describe('POST /v1/projects/:id/keys', () => {
  it('issues count keys, each with its raw value, a fresh watermark and expires_at = now + duration; the table keeps hashes only', async () => {
    const reply = await issue({ count: 3, duration: '7d' });
    expect(reply.status, reply.raw).toBe(200);
    const keys = reply.body.keys as { id: string; key: string; watermark: string; expires_at: number }[];
    expect(keys).toHaveLength(3);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(['expires_at', 'id', 'key', 'watermark']);
      expect(reply.body).toMatchObject({ repeated: false, issued_at: NOW });
      expect(key.id).toBe(keyIdOf(hashKeyValue(key.key)));
      expect(key.expires_at).toBe(NOW + 604_800);
      expect(JSON.stringify(api.store.storedKey(key.id))).not.toContain(key.key);
    }
    expect(new Set(keys.map((key) => key.watermark)).size).toBe(3);
    expect(await projectKeyCount()).toBe(3);
  });

  it('gives every key the shared watermark, and a lifetime key the fixed far-future expires_at', async () => {
    const keys = (await issue({ count: 2, duration: 'lifetime', watermark: 'aaaaaaaaaaaaaaaa' })).body.keys as { watermark: string; expires_at: number }[];
    expect(keys.map((key) => key.watermark)).toEqual(['aaaaaaaaaaaaaaaa', 'aaaaaaaaaaaaaaaa']);
    expect(keys.map((key) => key.expires_at)).toEqual([LIFETIME_EXPIRES_AT, LIFETIME_EXPIRES_AT]);
  });

  it('answers a repeated order_id with the same keys, raw values included, and issues nothing', async () => {
    const body = { count: 5, max_fingerprints: 2, order_id: 'sellauth-48213', note: 'order 48213' };
    const first = await issue(body);
    const again = await issue(body);
    expect(again.status).toBe(200);
    expect(again.body.keys).toEqual(first.body.keys);
    expect(await projectKeyCount()).toBe(5);
  });

  it('refuses the same order_id with another body, naming order_id, and issues nothing', async () => {
    await issue({ count: 1, order_id: 'o-1' });
    expectError(await issue({ count: 2, order_id: 'o-1' }), 400, /order_id "o-1" cannot be used with this token and body/);
    expect(await projectKeyCount()).toBe(1);
  });

  it("answers a repeat with repeated: true and the first call's issued_at and expires_at, not the repeat's", async () => {
    const first = await issue({ count: 1, duration: 60, order_id: 'o-time' });
    expect(first.body).toMatchObject({ repeated: false, issued_at: NOW });
    now = NOW + 65;
    const again = await issue({ count: 1, duration: 60, order_id: 'o-time' });
    expect(again.body).toMatchObject({ repeated: true, issued_at: NOW, keys: first.body.keys });
  });

  it("refuses another token's repeat of an order (issue 33: a leaked token pre-claiming it) with the refusal another body gets, handing over no key", async () => {
    const preClaim = await issueAs(otherToken, { count: 1, max_fingerprints: 1, order_id: '5001' });
    expect(preClaim.status).toBe(200);
    const attackerKey = (preClaim.body.keys as { key: string }[])[0]?.key ?? '';
    const shop = await issue({ count: 1, max_fingerprints: 1, order_id: '5001' });
    const otherBody = await issueAs(otherToken, { count: 2, order_id: '5001' });
    expectError(shop, 400, /order_id "5001" cannot be used with this token and body/);
    expect(shop.body.error).toBe(otherBody.body.error);
    expect(shop.raw).not.toContain(attackerKey);
    expect(await projectKeyCount()).toBe(1);
  });

  it(`answers repeats for ${ORDER_REPEAT_WINDOW_SECONDS / 3600} hours after the order, then refuses them and issues nothing`, async () => {
    const body = { count: 1, order_id: 'o-window' };
    await issue(body);
    now = NOW + ORDER_REPEAT_WINDOW_SECONDS - 1;
    expect((await issue(body)).body.repeated).toBe(true);
    now = NOW + ORDER_REPEAT_WINDOW_SECONDS;
    expectError(await issue(body), 400, /order_id "o-window" was placed more than 72 hours ago and can no longer be repeated/);
    expect(await projectKeyCount()).toBe(1);
  });

  it('derives different keys for different orders, and random ones without an order', async () => {
    const ids = async (body: unknown) => ((await issue(body)).body.keys as { id: string }[]).map((key) => key.id);
    const [a, b, c, d] = [await ids({ order_id: 'a' }), await ids({ order_id: 'b' }), await ids({}), await ids({})];
    expect(new Set([...a!, ...b!, ...c!, ...d!]).size).toBe(4);
  });

  it('enters key.issue in the audit trail with the order, the count and the ids, never a raw value; a repeat as issuing 0', async () => {
    const first = await issue({ count: 2, order_id: 'o-2' });
    await issue({ count: 2, order_id: 'o-2' });
    const keys = first.body.keys as { id: string; key: string }[];
    const entries = api.store.auditEntries();
    expect(entries.map((entry) => [entry.action, entry.target, entry.outcome])).toEqual([
      ['key.issue', { order_id: 'o-2', count: 2 }, { issued_count: 2, key_ids: keys.map((key) => key.id).join(',') }],
      ['key.issue', { order_id: 'o-2', count: 2 }, { issued_count: 0, key_ids: keys.map((key) => key.id).join(',') }],
    ]);
    for (const key of keys) expect(JSON.stringify(entries)).not.toContain(key.key);
  });

  it.each([
    [{ count: 0 }, 'count must be at least 1'],
    [{ count: 101 }, 'count must be at most 100'],
    [{ duration: '2w' }, 'duration must be one of'],
    [{ max_fingerprints: 0 }, 'max_fingerprints must be at least 1'],
    [{ discord_id: 'abc' }, 'discord_id must be a Discord user id'],
    [{ note: 'fine\u001b]52;c;cGF3bmVk\u0007' }, 'note must be printable text: it holds U+001B, a control or bidirectional character'],
    [{ note: 'exe\u202Etxt' }, 'note must be printable text: it holds U+202E'],
    [{ note: 'C1 \u009b31m' }, 'note must be printable text: it holds U+009B'],
    [{ order_id: '' }, 'order_id must be 1 to 100 printable characters'],
  ])('refuses %j with a 400 naming the field, and issues nothing', async (body, message) => {
    const reply = await issue(body);
    expectError(reply, 400, /./);
    expect(reply.body.error).toContain(message);
    expect(await projectKeyCount()).toBe(0);
  });
});

describe('GET /v1/projects/:id/keys/:key_id and POST …/keys/reset-hwid', () => {
  it('shows the spec fields plus note, discord_id, max_fingerprints, fingerprints and last_check_at, null where unset', async () => {
    const [key] = (await issue({ note: 'vip', discord_id: '123456789012345678', max_fingerprints: 2 })).body.keys as { id: string }[];
    const reply = await detail(key!.id);
    expect(reply.status, reply.raw).toBe(200);
    expect(reply.body.key).toMatchObject({
      id: key!.id,
      note: 'vip',
      discord_id: '123456789012345678',
      max_fingerprints: 2,
      fingerprints: [],
      last_check_at: null,
      current_uses: 0,
    });
    const [plain] = (await issue({})).body.keys as { id: string }[];
    expect((await detail(plain!.id)).body.key).toMatchObject({ note: null, discord_id: null, max_fingerprints: null, fingerprints: [], last_check_at: null });
  });

  it('answers 404 for a key of another project or none, as a revoke does', async () => {
    const [other] = memoryApi().store.addKeys(PROJECT_ID, [{}]);
    expectError(await detail(other!.id), 404, `Key ${other!.id} not found in this project`);
    expectError(await detail('key_00000000000000000000'), 404, /not found in this project/);
    expectError(await reset('key_00000000000000000000'), 404, /not found in this project/);
  });

  it('reset answers how many machines it unbound, and enters key.reset_hwid', async () => {
    const [key] = (await issue({ max_fingerprints: 1 })).body.keys as { id: string }[];
    const reply = await reset(key!.id);
    expect(reply.body).toEqual({ ok: true, cleared: 0 });
    expect(api.store.auditEntries().at(-1)).toMatchObject({ action: 'key.reset_hwid', target: { key_id: key!.id }, outcome: { cleared: 0 } });
  });
});
