import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AddressTally, clientAddressBucket } from '#domain/address-tally';
import { RateLimited } from '#domain/errors';
import {
  ADDRESS_COUNTING,
  checkKey,
  checkReportOf,
  checkTelemetry,
  type KeyCheckDeps,
  type KeyState,
  LOADER_LIMITS,
  refusalOf,
  usesLeft,
  validateAnswer,
} from '#domain/key-check';
import { hashKeyValue, newKeyValue } from '#domain/key-values';
import type { TelemetrySink } from '#domain/ports';
import { REFUSAL_MEMORY, RefusalMemory } from '#domain/refusal-memory';
import { LoaderCheckRequest, REFUSAL_CODES } from '#schemas/loader';
import { type ExecutionRecord, RECORD_SCHEMAS, type ValidationRecord } from '#schemas/telemetry';
import { MemoryKeyCheckStore, MemoryStores } from '#test-support/memory-stores';

/** 45 s into the minute that opened at 1_700_000_040. */
const NOW = 1_700_000_085;
const SECONDS_TO_NEXT_WINDOW = 15;
const PROJECT = 'prj_loader';
const OTHER_PROJECT = 'prj_other';
const ADDRESS = '203.0.113.7';
const FINGERPRINT = 'f'.repeat(64);

// ---- The rule alone ----

const HASH = hashKeyValue('sdk_rule');
const state = (fields: Partial<KeyState> = {}): KeyState => ({
  watermark: '0123456789abcdef',
  projectId: PROJECT,
  keyHash: HASH,
  revoked: false,
  expiresAt: NOW + 3_600,
  maxUses: 10,
  currentUses: 3,
  maxFingerprints: null,
  fingerprints: [],
  ban: null,
  ...fields,
});
const REVOKED = { revoked: true };
const EXPIRED = { expiresAt: NOW };
const SPENT = { maxUses: 5, currentUses: 5 };
const OTHER_MACHINE = 'e'.repeat(64);
const LOCKED = { maxFingerprints: 1, fingerprints: [OTHER_MACHINE] };

describe('refusalOf: which code a check answers (DESIGN.md, Loader key check)', () => {
  it('lets an active key of the project with uses left run', () => {
    expect(refusalOf(state(), PROJECT, HASH, NOW, FINGERPRINT)).toBeUndefined();
  });

  it.each([
    ['revoked', REVOKED, 'KEY_REVOKED'],
    ['expired', EXPIRED, 'KEY_EXPIRED'],
    ['over its cap', SPENT, 'KEY_OVER_LIMIT'],
    ['revoked, expired and over its cap', { ...REVOKED, ...EXPIRED, ...SPENT }, 'KEY_REVOKED'],
    ['revoked and expired', { ...REVOKED, ...EXPIRED }, 'KEY_REVOKED'],
    ['revoked and over its cap', { ...REVOKED, ...SPENT }, 'KEY_REVOKED'],
    ['expired and over its cap', { ...EXPIRED, ...SPENT }, 'KEY_EXPIRED'],
  ] as const)('refuses a key %s with %s: revoked wins over expired, which wins over over limit', (_case, fields, code) => {
    expect(refusalOf(state(fields), PROJECT, HASH, NOW, FINGERPRINT)).toBe(code);
  });

  it.each([
    ['HWID locked', LOCKED, 'KEY_HWID_LOCKED'],
    ['HWID locked and over its cap', { ...LOCKED, ...SPENT }, 'KEY_HWID_LOCKED'],
    ['expired and HWID locked', { ...EXPIRED, ...LOCKED }, 'KEY_EXPIRED'],
    ['revoked and HWID locked', { ...REVOKED, ...LOCKED }, 'KEY_REVOKED'],
  ] as const)('refuses a key %s with %s: revoked, expired, HWID locked, over limit', (_case, fields, code) => {
    expect(refusalOf(state(fields), PROJECT, HASH, NOW, FINGERPRINT)).toBe(code);
  });

  it('locks a bound key only for a new machine once max_fingerprints are bound, never for a bound machine or an unbound key', () => {
    expect(refusalOf(state({ maxFingerprints: 2, fingerprints: [OTHER_MACHINE] }), PROJECT, HASH, NOW, FINGERPRINT)).toBeUndefined();
    expect(refusalOf(state({ maxFingerprints: 2, fingerprints: [OTHER_MACHINE, 'd'.repeat(64)] }), PROJECT, HASH, NOW, FINGERPRINT)).toBe('KEY_HWID_LOCKED');
    expect(refusalOf(state({ maxFingerprints: 1, fingerprints: [FINGERPRINT] }), PROJECT, HASH, NOW, FINGERPRINT)).toBeUndefined();
    expect(refusalOf(state({ maxFingerprints: 1, fingerprints: [FINGERPRINT] }), PROJECT, HASH, NOW, OTHER_MACHINE)).toBe('KEY_HWID_LOCKED');
    expect(refusalOf(state({ maxFingerprints: null, fingerprints: [] }), PROJECT, HASH, NOW, OTHER_MACHINE)).toBeUndefined();
  });

  it('lists the refusal codes in the order they win', () => {
    expect(REFUSAL_CODES.slice(0, 5)).toEqual(['KEY_REVOKED', 'KEY_BANNED', 'KEY_EXPIRED', 'KEY_HWID_LOCKED', 'KEY_OVER_LIMIT']);
  });

  // Every combination of a ban (none, until unbanned, ending later, ended) with revoked, expired, HWID locked and
  // over limit: revoked wins over a ban, a ban in force wins over every other code, an ended ban changes nothing.
  const BANS = {
    none: null,
    'until unbanned': { reason: 'Shared the key', until: null },
    'ending later': { reason: 'A week off', until: NOW + 1 },
    ended: { reason: 'Over', until: NOW },
  } as const;
  const OTHERS = { revoked: REVOKED, expired: EXPIRED, 'HWID locked': LOCKED, 'over limit': SPENT } as const;
  const combinations = Object.entries(BANS).flatMap(([banName, ban]) =>
    Array.from({ length: 16 }, (_, mask) => {
      const picked = Object.entries(OTHERS).filter((_, bit) => mask & (1 << bit));
      const fields = Object.assign({ ban }, ...picked.map(([, other]) => other)) as Partial<KeyState>;
      const names = picked.map(([name]) => name);
      const inForce = ban !== null && ban.until !== NOW;
      const expected = names.includes('revoked')
        ? 'KEY_REVOKED'
        : inForce
          ? 'KEY_BANNED'
          : names.includes('expired')
            ? 'KEY_EXPIRED'
            : names.includes('HWID locked')
              ? 'KEY_HWID_LOCKED'
              : names.includes('over limit')
                ? 'KEY_OVER_LIMIT'
                : undefined;
      return [`ban ${banName}${names.length > 0 ? `, ${names.join(', ')}` : ''}`, fields, expected] as const;
    }),
  );

  it.each(combinations)('judges a key with %s as %s: revoked, banned, expired, HWID locked, over limit', (_case, fields, code) => {
    expect(refusalOf(state(fields), PROJECT, HASH, NOW, FINGERPRINT)).toBe(code);
  });

  it('ends a ban at the second of until (now >= until), not before, and never ends one without until', () => {
    const ban = (until: number | null) => state({ ban: { reason: 'r', until } });
    expect(refusalOf(ban(NOW + 1), PROJECT, HASH, NOW, FINGERPRINT)).toBe('KEY_BANNED');
    expect(refusalOf(ban(NOW), PROJECT, HASH, NOW, FINGERPRINT)).toBeUndefined();
    expect(refusalOf(ban(NOW - 1), PROJECT, HASH, NOW, FINGERPRINT)).toBeUndefined();
    expect(refusalOf(ban(null), PROJECT, HASH, Number.MAX_SAFE_INTEGER, FINGERPRINT)).toBe('KEY_BANNED');
  });

  it('answers KEY_INVALID, not KEY_BANNED, for a banned key of another project: a ban shows nothing to strangers', () => {
    expect(refusalOf(state({ ban: { reason: 'r', until: null } }), OTHER_PROJECT, HASH, NOW, FINGERPRINT)).toBe('KEY_INVALID');
  });

  it('counts a key expired from the second of expires_at on (now >= expires_at), not before', () => {
    expect(refusalOf(state({ expiresAt: NOW + 1 }), PROJECT, HASH, NOW, FINGERPRINT)).toBeUndefined();
    expect(refusalOf(state({ expiresAt: NOW }), PROJECT, HASH, NOW, FINGERPRINT)).toBe('KEY_EXPIRED');
    expect(refusalOf(state({ expiresAt: NOW - 1 }), PROJECT, HASH, NOW, FINGERPRINT)).toBe('KEY_EXPIRED');
  });

  it('counts a key over its limit once current_uses reaches max_uses, and never a key without a cap', () => {
    expect(refusalOf(state({ maxUses: 5, currentUses: 4 }), PROJECT, HASH, NOW, FINGERPRINT)).toBeUndefined();
    expect(refusalOf(state({ maxUses: 5, currentUses: 5 }), PROJECT, HASH, NOW, FINGERPRINT)).toBe('KEY_OVER_LIMIT');
    expect(refusalOf(state({ maxUses: 5, currentUses: 9 }), PROJECT, HASH, NOW, FINGERPRINT)).toBe('KEY_OVER_LIMIT');
    expect(refusalOf(state({ maxUses: 0, currentUses: 0 }), PROJECT, HASH, NOW, FINGERPRINT)).toBe('KEY_OVER_LIMIT');
    expect(refusalOf(state({ maxUses: null, currentUses: 1_000_000 }), PROJECT, HASH, NOW, FINGERPRINT)).toBeUndefined();
  });

  it.each([
    ['no key at all', undefined, PROJECT, HASH],
    ["another project's key", state(), OTHER_PROJECT, HASH],
    ["another project's revoked, expired and spent key", state({ ...REVOKED, ...EXPIRED, ...SPENT }), OTHER_PROJECT, HASH],
    ["a key whose stored hash is not the value's", state(), PROJECT, hashKeyValue('sdk_other')],
    ["a revoked key whose stored hash is not the value's", state(REVOKED), PROJECT, hashKeyValue('sdk_other')],
  ])('answers KEY_INVALID for %s, before any state of the key shows', (_case, key, projectId, keyHash) => {
    expect(refusalOf(key, projectId, keyHash, NOW, FINGERPRINT)).toBe('KEY_INVALID');
  });
});

describe('usesLeft: max_uses - current_uses after the counted use', () => {
  it('is what the cap leaves, 0 at the last use, and null without a cap', () => {
    expect(usesLeft({ maxUses: 10, currentUses: 4 })).toBe(6);
    expect(usesLeft({ maxUses: 10, currentUses: 10 })).toBe(0);
    expect(usesLeft({ maxUses: null, currentUses: 4 })).toBeNull();
  });

  it('never goes below 0 for a key whose count passed its cap (a cap lowered by the dashboard)', () => {
    expect(usesLeft({ maxUses: 3, currentUses: 7 })).toBe(0);
  });
});

describe('clientAddressBucket: what the per-address limit counts', () => {
  it.each(['203.0.113.7', '10.0.0.1', '255.255.255.255'])('keeps an IPv4 address as it is (%s)', (address) => {
    expect(clientAddressBucket(address)).toBe(address);
  });

  it('counts an IPv4 client seen through an IPv4-mapped IPv6 address as that IPv4 address', () => {
    expect(clientAddressBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressBucket('::FFFF:203.0.113.7')).toBe('203.0.113.7');
  });

  it('groups an IPv6 address by its /64, whatever way the address is written', () => {
    const bucket = '2001:0db8:0001:0002::/64';
    expect(clientAddressBucket('2001:db8:1:2:3:4:5:6')).toBe(bucket);
    expect(clientAddressBucket('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(bucket);
    expect(clientAddressBucket('2001:DB8:1:2::1')).toBe(bucket);
    expect(clientAddressBucket('2001:db8:1:2::')).toBe(bucket);
    expect(clientAddressBucket('2001:db8:1:2:a:b:1.2.3.4')).toBe(bucket);
  });

  it('expands :: wherever it stands, so two /64s never share a bucket', () => {
    expect(clientAddressBucket('2001:db8::1')).toBe('2001:0db8:0000:0000::/64');
    expect(clientAddressBucket('2001:db8:0:1::1')).toBe('2001:0db8:0000:0001::/64');
    expect(clientAddressBucket('::1')).toBe('0000:0000:0000:0000::/64');
    expect(clientAddressBucket('fe80::1:2:3:4')).toBe('fe80:0000:0000:0000::/64');
    expect(clientAddressBucket('2001:db8:1::')).toBe('2001:0db8:0001:0000::/64');
  });
});

// ---- One check, against in-memory stores ----

/** What the check reported, in order: one list of records per check. */
class RecordingSink implements TelemetrySink {
  readonly reports: (ValidationRecord | ExecutionRecord)[][] = [];
  async report(records: readonly (ValidationRecord | ExecutionRecord)[]): Promise<void> {
    this.reports.push([...records]);
  }
}

function loaderCheck() {
  const keys = new MemoryKeyCheckStore();
  const rateLimits = new MemoryStores();
  const telemetry = new RecordingSink();
  const deps: KeyCheckDeps = { keys, rateLimits, telemetry, addresses: new AddressTally(), refusals: new RefusalMemory() };
  const request = (key: string, fields: Partial<LoaderCheckRequest> = {}): LoaderCheckRequest => ({
    project_id: PROJECT,
    key,
    fingerprint: FINGERPRINT,
    executor: 'Wave',
    ...fields,
  });
  const check = (key: string, fields: Partial<LoaderCheckRequest> = {}, at: { now?: number; address?: string } = {}) =>
    checkKey(deps, request(key, fields), at.address ?? ADDRESS, at.now ?? NOW).then(validateAnswer);
  return { keys, rateLimits, telemetry, check };
}

/** The error a check threw, or a failure naming the answer it gave instead. */
async function refusedBy(check: Promise<unknown>): Promise<unknown> {
  return check.then(
    (answer) => expect.fail(`answered ${JSON.stringify(answer)} instead of throwing`),
    (error: unknown) => error,
  );
}

describe('checkKey: one check of a key', () => {
  it('answers KEY_VALID with the key id, its expiry and the uses its cap leaves, and counts one use', async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT, { maxUses: 5, currentUses: 2, expiresAt: NOW + 600 });
    expect(await check(key)).toEqual({ valid: true, code: 'KEY_VALID', key_id: id, expires_at: NOW + 600, uses_left: 2 });
    expect(keys.storedKey(id)?.currentUses).toBe(3);
  });

  it('answers uses_left null for a key without a cap, and still counts the use', async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT, { maxUses: null, currentUses: 41 });
    expect(await check(key)).toMatchObject({ valid: true, code: 'KEY_VALID', uses_left: null });
    expect(keys.storedKey(id)?.currentUses).toBe(42);
  });

  it('admits the last use with uses_left 0, then answers KEY_OVER_LIMIT without counting another', async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT, { maxUses: 3, currentUses: 1 });
    expect(await check(key)).toMatchObject({ code: 'KEY_VALID', uses_left: 1 });
    expect(await check(key)).toMatchObject({ code: 'KEY_VALID', uses_left: 0 });
    expect(await check(key)).toEqual({ valid: false, code: 'KEY_OVER_LIMIT' });
    expect(await check(key)).toEqual({ valid: false, code: 'KEY_OVER_LIMIT' });
    expect(keys.storedKey(id)?.currentUses).toBe(3);
  });

  it.each([
    ['KEY_REVOKED', { revoked: true }],
    ['KEY_EXPIRED', { expiresAt: NOW }],
    ['KEY_OVER_LIMIT', { maxUses: 2, currentUses: 2 }],
    ['KEY_REVOKED', { revoked: true, expiresAt: NOW, maxUses: 2, currentUses: 2 }],
    ['KEY_EXPIRED', { expiresAt: NOW - 1, maxUses: 2, currentUses: 2 }],
  ] as const)('answers exactly {valid: false, code: %s} and counts no use', async (code, fields) => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT, fields);
    const before = keys.storedKey(id)?.currentUses;
    expect(await check(key)).toEqual({ valid: false, code });
    expect(keys.storedKey(id)?.currentUses).toBe(before);
  });

  it("answers a banned key {valid: false, code: KEY_BANNED, reason} with the publisher's reason, counts no use, and runs it again after the unban", async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT, { currentUses: 4 });
    keys.setBan(id, { reason: 'Shared the key in #general', until: NOW + 3_600 });
    expect(await check(key)).toEqual({ valid: false, code: 'KEY_BANNED', reason: 'Shared the key in #general' });
    expect(keys.storedKey(id)?.currentUses).toBe(4);
    keys.setBan(id, null);
    expect(await check(key)).toMatchObject({ valid: true, code: 'KEY_VALID' });
    expect(keys.storedKey(id)?.currentUses).toBe(5);
  });

  it('runs a banned key again from the second its ban ends, with no write at that moment', async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT, { ban: { reason: 'A week off', until: NOW + 1 } });
    expect(await check(key)).toMatchObject({ code: 'KEY_BANNED' });
    expect(await check(key, {}, { now: NOW + 1 })).toMatchObject({ valid: true, code: 'KEY_VALID' });
    expect(keys.storedKey(id)?.ban).toEqual({ reason: 'A week off', until: NOW + 1 });
  });

  it('answers a revoked key KEY_REVOKED on the very next check after the revoke', async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT);
    expect(await check(key)).toMatchObject({ code: 'KEY_VALID' });
    keys.revoke(id);
    expect(await check(key)).toEqual({ valid: false, code: 'KEY_REVOKED' });
  });

  it("answers an unknown key, another project's key and an unknown project alike: nothing to enumerate", async () => {
    const { keys, check } = loaderCheck();
    const theirs = keys.issue(OTHER_PROJECT, { revoked: true });
    const ours = keys.issue(PROJECT);
    const answers = [
      await check(newKeyValue()),
      await check(theirs.key),
      await check(ours.key, { project_id: 'prj_nobody' }),
      await check(ours.key.toUpperCase()),
    ];
    expect(answers.map((answer) => JSON.stringify(answer))).toEqual(Array(4).fill('{"valid":false,"code":"KEY_INVALID"}'));
    expect(keys.storedKey(theirs.id)?.currentUses).toBe(0);
    expect(keys.storedKey(ours.id)?.currentUses).toBe(0);
  });
});

describe('checkKey: limits on a public endpoint', () => {
  it('keeps within the floors DESIGN.md sets: 60 a minute per key, 1,000 a minute per address', () => {
    expect(LOADER_LIMITS.windowSeconds).toBe(60);
    expect(LOADER_LIMITS.perKeyPerMinute).toBeGreaterThanOrEqual(60);
    expect(LOADER_LIMITS.perAddressPerMinute).toBeGreaterThanOrEqual(1_000);
  });

  it('answers every check of a key up to its per-minute limit, refuses the next until the next minute, and counts no use for it', async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT);
    for (let i = 0; i < LOADER_LIMITS.perKeyPerMinute; i++) expect(await check(key)).toMatchObject({ code: 'KEY_VALID' });
    const error = await refusedBy(check(key));
    expect(error).toBeInstanceOf(RateLimited);
    expect(error).toMatchObject({
      retryAfterSeconds: SECONDS_TO_NEXT_WINDOW,
      message: `Too many checks of this key: at most ${LOADER_LIMITS.perKeyPerMinute} per minute`,
    });
    expect(keys.storedKey(id)?.currentUses).toBe(LOADER_LIMITS.perKeyPerMinute);
    expect(await check(key, {}, { now: NOW + SECONDS_TO_NEXT_WINDOW })).toMatchObject({ code: 'KEY_VALID' });
  });

  it("limits a key, not its buyer's other keys", async () => {
    const { keys, check } = loaderCheck();
    const busy = keys.issue(PROJECT);
    const quiet = keys.issue(PROJECT);
    for (let i = 0; i < LOADER_LIMITS.perKeyPerMinute; i++) await check(busy.key);
    await expect(check(busy.key)).rejects.toBeInstanceOf(RateLimited);
    expect(await check(quiet.key)).toMatchObject({ code: 'KEY_VALID' });
  });

  it('answers up to the per-address limit from one address, refuses the next until the next minute, and lets other addresses through', async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT);
    // Unknown keys, so the key's own limit never comes first: an address guessing keys is what this limit stops.
    for (let i = 0; i < LOADER_LIMITS.perAddressPerMinute; i++) await check(`sdk_guess${i}`);
    const error = await refusedBy(check(key));
    expect(error).toBeInstanceOf(RateLimited);
    expect(error).toMatchObject({
      retryAfterSeconds: SECONDS_TO_NEXT_WINDOW,
      message: `Too many key checks from this address: at most ${LOADER_LIMITS.perAddressPerMinute} per minute`,
    });
    expect(keys.storedKey(id)?.currentUses).toBe(0);
    expect(await check(key, {}, { address: '203.0.113.8' })).toMatchObject({ code: 'KEY_VALID' });
    expect(await check(key, {}, { now: NOW + SECONDS_TO_NEXT_WINDOW })).toMatchObject({ code: 'KEY_VALID' });
  });

  it('counts the addresses of one IPv6 /64 together, and another /64 apart', async () => {
    const { keys, check } = loaderCheck();
    const { key } = keys.issue(PROJECT);
    for (let i = 0; i < LOADER_LIMITS.perAddressPerMinute; i++) await check(`sdk_guess${i}`, {}, { address: `2001:db8:1:2::${(i % 0xffff).toString(16)}` });
    await expect(check(key, {}, { address: '2001:db8:1:2:dead:beef:0:1' })).rejects.toBeInstanceOf(RateLimited);
    expect(await check(key, {}, { address: '2001:db8:1:3::1' })).toMatchObject({ code: 'KEY_VALID' });
  });
});

describe('checkKey: telemetry for the analytics detectors', () => {
  it("leaves a valid check's telemetry on the key item with its use (executor, fingerprint, script hash, version, time) and sends the sink nothing", async () => {
    const { keys, telemetry, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT);
    await check(key, { executor: 'Synapse Z', script_hash: 'a'.repeat(64), version_id: 'ver_3' });
    expect(telemetry.reports).toEqual([]);
    expect(keys.storedKey(id)?.lastCheck).toEqual({ executor: 'Synapse Z', fingerprint: FINGERPRINT, scriptHash: 'a'.repeat(64), versionId: 'ver_3', at: NOW });
  });

  it('leaves no script hash or version on the key item when the loader sent none', async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT);
    await check(key);
    expect(keys.storedKey(id)?.lastCheck).toEqual({ executor: 'Wave', fingerprint: FINGERPRINT, at: NOW });
  });

  it("keeps the stub's timing on the key item with the use, in the item's own names, and makes of it the execution's timing with the connection's reading", async () => {
    const { keys, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT);
    await check(key, { timing: { run_in_session: 3, previous_request_ms: 140, first_request_ms: 420 } });
    const lastCheck = keys.storedKey(id)?.lastCheck;
    expect(lastCheck).toEqual({
      executor: 'Wave',
      fingerprint: FINGERPRINT,
      at: NOW,
      timing: { runInSession: 3, previousRequestMs: 140, firstRequestMs: 420 },
    });
    const report = { project_id: PROJECT, executor: 'Wave', fingerprint: FINGERPRINT, ...(lastCheck?.timing ? { timing: lastCheck.timing } : {}) };
    expect(checkTelemetry(report, id, 'KEY_VALID', NOW)[1]).toEqual({
      kind: 'execution',
      projectId: PROJECT,
      keyId: id,
      executor: 'Wave',
      at: NOW,
      timing: { runInSession: 3, previousRequestMs: 140, firstRequestMs: 420, previousConnection: 'reused' },
    });
  });

  it('leaves null figures out (a first run sends only run_in_session), and puts no timing on a refusal: its record is a validation', async () => {
    const { keys, telemetry, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT);
    await check(key, { timing: { run_in_session: 1, previous_request_ms: null, first_request_ms: null } });
    expect(keys.storedKey(id)?.lastCheck?.timing).toEqual({ runInSession: 1 });
    const revoked = keys.issue(PROJECT, { revoked: true });
    await check(revoked.key, { timing: { run_in_session: 2, previous_request_ms: 140 } });
    expect(telemetry.reports).toEqual([
      [{ kind: 'validation', projectId: PROJECT, keyId: revoked.id, result: 'revoked', executor: 'Wave', fingerprint: FINGERPRINT, at: NOW }],
    ]);
  });

  it.each([
    ['revoked', { revoked: true }],
    ['banned', { ban: { reason: 'r', until: null } }],
    ['expired', { expiresAt: NOW }],
    ['hwid_locked', { maxFingerprints: 1, fingerprints: ['e'.repeat(64)] }],
    ['over_limit', { maxUses: 1, currentUses: 1 }],
  ] as const)('reports a refused check as a key validation with result %s, and no execution', async (result, fields) => {
    const { keys, telemetry, check } = loaderCheck();
    const { id, key } = keys.issue(PROJECT, fields);
    await check(key);
    expect(telemetry.reports).toEqual([[{ kind: 'validation', projectId: PROJECT, keyId: id, result, executor: 'Wave', fingerprint: FINGERPRINT, at: NOW }]]);
  });

  it('reports nothing for an unknown key (issue 21: KEY_INVALID is not queued), nor for an unknown project', async () => {
    const { keys, telemetry, check } = loaderCheck();
    const { key } = keys.issue('prj_other');
    expect(await check(newKeyValue())).toEqual({ valid: false, code: 'KEY_INVALID' });
    expect(await check(key)).toEqual({ valid: false, code: 'KEY_INVALID' });
    expect(telemetry.reports).toEqual([]);
  });

  it('every request the check accepts makes records the ingest path accepts unchanged: no answered check loses its telemetry there', () => {
    // Whitespace of every kind, around names and alone: ingest trims an executor and refuses an empty one.
    const executor = fc.oneof(fc.string({ minLength: 1, maxLength: 100 }), fc.constantFrom(' ', '   ', ' Wave ', '\u00a0', '\u3000', 'Wave\u2028', '\ufeff'));
    const body = fc.record(
      {
        project_id: fc.constantFrom(PROJECT, 'a', 'x'.repeat(64)),
        key: fc.string({ minLength: 1 }),
        fingerprint: fc.constant(FINGERPRINT),
        executor,
        script_hash: fc.constant('0'.repeat(64)),
        version_id: fc.constantFrom('ver_1', 'v'),
        // The stub's timing, well formed or not: a malformed one is dropped, never the check's records.
        timing: fc.oneof(
          fc.record(
            { run_in_session: fc.integer({ min: -1, max: 2_000_000 }), previous_request_ms: fc.option(fc.double()), first_request_ms: fc.option(fc.integer()) },
            { requiredKeys: [] },
          ),
          fc.anything(),
        ),
      },
      { requiredKeys: ['project_id', 'key', 'fingerprint', 'executor'] },
    );
    fc.assert(
      fc.property(body, fc.constantFrom('KEY_VALID', ...REFUSAL_CODES), (raw, code) => {
        const parsed = LoaderCheckRequest.safeParse(raw);
        if (!parsed.success) return;
        for (const record of checkTelemetry(checkReportOf(parsed.data), 'key_0123456789abcdef0123', code, NOW)) {
          expect(RECORD_SCHEMAS[record.kind].safeParse(record)).toEqual({ success: true, data: record });
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reports nothing for a check refused by a limit: it was never judged', async () => {
    const { keys, telemetry, check } = loaderCheck();
    const { key } = keys.issue(PROJECT);
    for (let i = 0; i < LOADER_LIMITS.perKeyPerMinute; i++) await check(key);
    const reported = telemetry.reports.length;
    await expect(check(key)).rejects.toBeInstanceOf(RateLimited);
    expect(telemetry.reports).toHaveLength(reported);
  });
});

// ---- What reaches DynamoDB: the address counted in memory, the shared window only for a busy address ----

/** A rate-limit store that records each window it was asked to count in. */
class CountingRateLimits extends MemoryStores {
  readonly counted: string[] = [];
  override async countRequest(bucket: string, window: { start: number; seconds: number }, limit: number): Promise<number | undefined> {
    this.counted.push(bucket);
    return super.countRequest(bucket, window, limit);
  }
}

/** A key store that records each conditional write it was asked for. */
class CountingKeyChecks extends MemoryKeyCheckStore {
  writes = 0;
  override async checkAndCount(check: Parameters<MemoryKeyCheckStore['checkAndCount']>[0]) {
    this.writes += 1;
    return super.checkAndCount(check);
  }
}

function countedCheck(addresses = new AddressTally()) {
  const keys = new CountingKeyChecks();
  const rateLimits = new CountingRateLimits();
  const telemetry = new RecordingSink();
  const deps: KeyCheckDeps = { keys, rateLimits, telemetry, addresses, refusals: new RefusalMemory() };
  const check = (key: string, address = ADDRESS, now = NOW, fingerprint = FINGERPRINT) =>
    checkKey(deps, { project_id: PROJECT, key, fingerprint, executor: 'Wave' }, address, now).then(validateAnswer);
  return { keys, rateLimits, telemetry, check, deps };
}

/** Validations the sink received, each counted as many times as it stands for. */
const reportedValidations = (telemetry: RecordingSink) =>
  telemetry.reports.flat().reduce((sum, record) => sum + (record.kind === 'validation' ? (record.count ?? 1) : 0), 0);

describe('a key refused again and again is answered from memory (issue 33 item 3)', () => {
  const { floor } = REFUSAL_MEMORY;

  it(`answers 400 checks of a revoked key in a minute with at most ${floor} writes, and reports all 400 once the minute is over`, async () => {
    const { keys, telemetry, check } = countedCheck();
    const { id, key } = keys.issue(PROJECT, { maxUses: null });
    keys.revoke(id);
    for (let i = 0; i < 400; i++) expect(await check(key, `198.51.100.${i % 200}`)).toEqual({ valid: false, code: 'KEY_REVOKED' });
    expect(keys.writes).toBe(floor);
    expect(telemetry.reports.length).toBeLessThan(floor + 400 / REFUSAL_MEMORY.reportEvery + 1);
    // The first check of the next minute reports what the last one answered from memory.
    await check(key, ADDRESS, NOW + SECONDS_TO_NEXT_WINDOW);
    expect(reportedValidations(telemetry)).toBe(401);
  });

  it.each([
    ['expired', { expiresAt: NOW - 1 }, 'KEY_EXPIRED'],
    ['HWID locked', { maxFingerprints: 1, fingerprints: ['d'.repeat(64)] }, 'KEY_HWID_LOCKED'],
  ] as const)('never remembers a refusal a publisher can lift (%s): the table judges every check, so a lift shows at once', async (_case, fields, code) => {
    const { keys, check } = countedCheck();
    const { key } = keys.issue(PROJECT, { maxUses: null, ...fields });
    for (let i = 0; i < floor + 5; i++) expect(await check(key)).toEqual({ valid: false, code });
    expect(keys.writes).toBe(floor + 5);
  });

  it('reads no script version for a key answered from memory: the guard is not called', async () => {
    const { keys, deps } = countedCheck();
    const { id, key } = keys.issue(PROJECT, { maxUses: null });
    keys.revoke(id);
    let guardReads = 0;
    const guard = {
      expected: undefined,
      read: async () => {
        guardReads += 1;
        return { versionId: 'ver_1' };
      },
    };
    const fetch = () => checkKey(deps, { project_id: PROJECT, key, fingerprint: FINGERPRINT, executor: 'Wave' }, ADDRESS, NOW, guard);
    for (let i = 0; i < floor; i++) await fetch();
    const readsAtFloor = guardReads;
    for (let i = 0; i < 50; i++) expect(await fetch()).toEqual({ outcome: 'refused', code: 'KEY_REVOKED' });
    expect(guardReads).toBe(readsAtFloor);
  });
});

describe('checkKey: one DynamoDB request on the common path', () => {
  it("writes only the key's item while the address has checked at most sharedAfter times this minute", async () => {
    const { keys, rateLimits, check } = countedCheck();
    const { key } = keys.issue(PROJECT, { maxUses: null });
    for (let i = 0; i < ADDRESS_COUNTING.sharedAfter; i++) await check(key);
    expect(rateLimits.counted).toEqual([]);
    expect(keys.writes).toBe(ADDRESS_COUNTING.sharedAfter);
  });

  it("counts a busy address's later checks in its shared window, one write each", async () => {
    const { keys, rateLimits, check } = countedCheck();
    for (let i = 0; i < ADDRESS_COUNTING.sharedAfter + 3; i++) await check(keys.issue(PROJECT).key);
    expect(rateLimits.counted).toEqual(Array(3).fill(`loader-address#${ADDRESS}`));
  });

  it('counts every check of an address the full tally cannot track in the shared window', async () => {
    const { keys, rateLimits, check } = countedCheck(new AddressTally(1));
    const { key } = keys.issue(PROJECT);
    await check(key, '198.51.100.1');
    await check(key, '198.51.100.2');
    expect(rateLimits.counted).toEqual(['loader-address#198.51.100.2']);
  });

  it('refuses an address past its limit in this container before any DynamoDB request, though its shared window says less', async () => {
    const { keys, rateLimits, check } = countedCheck();
    for (let i = 0; i < LOADER_LIMITS.perAddressPerMinute; i++) await check(`sdk_guess${i}`);
    const { key } = keys.issue(PROJECT);
    const before = { windows: rateLimits.counted.length, writes: keys.writes };
    await expect(check(key)).rejects.toMatchObject({
      message: `Too many key checks from this address: at most ${LOADER_LIMITS.perAddressPerMinute} per minute`,
    });
    expect({ windows: rateLimits.counted.length, writes: keys.writes }).toEqual(before);
  });
});

describe('checkKey: random-key floods stop before any DynamoDB write', () => {
  it.each([
    ['a made-up value', 'letmein'],
    ['a key of another length', `sdk_${'A'.repeat(31)}`],
    ['a character outside base64url', `sdk_${'A'.repeat(31)}+`],
    ['another prefix', `sdt_${'A'.repeat(32)}`],
  ])('answers %s KEY_INVALID with no request to any store and no telemetry, as every KEY_INVALID (issue 21)', async (_, value) => {
    const { keys, rateLimits, telemetry, check } = countedCheck();
    expect(await check(value)).toEqual({ valid: false, code: 'KEY_INVALID' });
    expect(keys.writes).toBe(0);
    expect(rateLimits.counted).toEqual([]);
    expect(telemetry.reports).toEqual([]);
  });

  it('still counts a malformed value as a check of its address', async () => {
    const { keys, check } = countedCheck();
    for (let i = 0; i < LOADER_LIMITS.perAddressPerMinute; i++) await check('letmein');
    await expect(check(keys.issue(PROJECT).key)).rejects.toBeInstanceOf(RateLimited);
  });

  it('refuses checks from an address past invalidKeysPerMinute well-formed unknown keys, before the write, until the next minute', async () => {
    const { keys, check } = countedCheck();
    for (let i = 0; i < ADDRESS_COUNTING.invalidKeysPerMinute; i++) expect(await check(newKeyValue())).toEqual({ valid: false, code: 'KEY_INVALID' });
    const writes = keys.writes;
    const { key } = keys.issue(PROJECT);
    const error = await refusedBy(check(key));
    expect(error).toMatchObject({
      retryAfterSeconds: SECONDS_TO_NEXT_WINDOW,
      message: `Too many unknown keys from this address: at most ${ADDRESS_COUNTING.invalidKeysPerMinute} per minute`,
    });
    expect(keys.writes).toBe(writes);
    expect(await check(key, '203.0.113.99')).toMatchObject({ code: 'KEY_VALID' });
    expect(await check(key, ADDRESS, NOW + SECONDS_TO_NEXT_WINDOW)).toMatchObject({ code: 'KEY_VALID' });
  });

  it('keeps the per-address limits at or above the 1,000 a minute DESIGN.md promises', () => {
    expect(ADDRESS_COUNTING.invalidKeysPerMinute).toBeGreaterThanOrEqual(1_000);
    expect(ADDRESS_COUNTING.sharedAfter).toBeLessThan(LOADER_LIMITS.perAddressPerMinute);
  });
});
