import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoKeyCheckStore } from '#adapters/key-check-store';
import { fingerprintAttribute, keyOf } from '#adapters/layout';
import { type KeyState, LOADER_LIMITS, refusalOf } from '#domain/key-check';
import { hashKeyValue, keyIdOf, newKeyValue } from '#domain/key-values';
import type { RefusalCode } from '#schemas/loader';
import { createTestTable, FIXED_NOW, type TestTable } from '#test-support/fixtures';

/**
 * The key rule is written twice: refusalOf in TypeScript (lambdas/domain/key-check.ts) and the counting write's
 * condition in DynamoDB's words (MAY_RUN and the binding conditions, lambdas/adapters/key-check-store.ts). This
 * drives both through one table of cases: every combination of revoked, a ban (none, until unbanned, ending a
 * second later, ending this very second), expired (a second left, or expiring this second), machine binding and the
 * use cap, plus the keys that are no key of the project. For each, the TypeScript rule must give the case's code,
 * and DynamoDB Local must count the use exactly when that code is none, and otherwise leave the key as it was and
 * hand back a state for which refusalOf gives the same code.
 */

const NOW = FIXED_NOW;
const PROJECT = 'prj_rule';
const THIS_MACHINE = 'a'.repeat(64);
const OTHER_MACHINE = 'b'.repeat(64);

type Case = { name: string; expected: RefusalCode | undefined; state: Omit<KeyState, 'projectId' | 'keyHash' | 'watermark'>; project?: string; hash?: 'other' };

const REVOKED = { no: false, yes: true } as const;
const BANS = {
  none: null,
  'until unbanned': { reason: 'Shared the key', until: null },
  'ending in a second': { reason: 'A week off', until: NOW + 1 },
  'ending now': { reason: 'Over', until: NOW },
} as const;
const EXPIRY = { 'a second left': NOW + 1, 'expiring now': NOW } as const;
const BINDING = {
  unbound: { maxFingerprints: null, fingerprints: [] },
  'bound with room': { maxFingerprints: 2, fingerprints: [OTHER_MACHINE] },
  'bound to this machine': { maxFingerprints: 1, fingerprints: [THIS_MACHINE] },
  'HWID locked': { maxFingerprints: 1, fingerprints: [OTHER_MACHINE] },
} as const;
const USES = {
  'no cap': { maxUses: null, currentUses: 7 },
  'a use left': { maxUses: 3, currentUses: 2 },
  'at its cap': { maxUses: 3, currentUses: 3 },
} as const;

/** The code the contract gives each combination, written from DESIGN.md's order rather than from refusalOf. */
function expectedCode(revoked: boolean, ban: string, expiry: string, binding: string, uses: string): RefusalCode | undefined {
  if (revoked) return 'KEY_REVOKED';
  if (ban === 'until unbanned' || ban === 'ending in a second') return 'KEY_BANNED';
  if (expiry === 'expiring now') return 'KEY_EXPIRED';
  if (binding === 'HWID locked') return 'KEY_HWID_LOCKED';
  if (uses === 'at its cap') return 'KEY_OVER_LIMIT';
  return undefined;
}

const CASES: Case[] = [
  ...Object.entries(REVOKED).flatMap(([revokedName, revoked]) =>
    Object.entries(BANS).flatMap(([banName, ban]) =>
      Object.entries(EXPIRY).flatMap(([expiryName, expiresAt]) =>
        Object.entries(BINDING).flatMap(([bindingName, binding]) =>
          Object.entries(USES).map(([usesName, uses]) => ({
            name: `revoked ${revokedName}, ban ${banName}, ${expiryName}, ${bindingName}, ${usesName}`,
            expected: expectedCode(revoked, banName, expiryName, bindingName, usesName),
            state: { revoked, ban, expiresAt, ...binding, ...uses },
          })),
        ),
      ),
    ),
  ),
  ...[
    { name: "another project's active key", project: 'prj_other' },
    { name: "another project's banned key", project: 'prj_other', ban: BANS['until unbanned'] },
    { name: "a key whose stored hash is not the value's", hash: 'other' as const },
  ].map(({ name, project, hash, ban = null }) => ({
    name,
    expected: 'KEY_INVALID' as const,
    project,
    hash,
    state: { revoked: false, ban, expiresAt: NOW + 1, maxFingerprints: null, fingerprints: [], maxUses: null, currentUses: 0 },
  })),
];

let table: TestTable;
let store: DynamoKeyCheckStore;

beforeAll(async () => {
  table = await createTestTable('key-rule');
  store = new DynamoKeyCheckStore(table.db, table.tableName);
}, 60_000);

afterAll(async () => {
  await table?.drop();
});

/** A key item as issuing, binding, banning and the checks leave it, holding `state`. */
async function putKey(testCase: Case): Promise<{ keyId: string; keyHash: string; item: Record<string, unknown> }> {
  const value = newKeyValue();
  const keyHash = hashKeyValue(value);
  const keyId = keyIdOf(keyHash);
  const { state } = testCase;
  const item = {
    ...keyOf.key(keyId),
    entity: 'KEY',
    id: keyId,
    projectId: testCase.project ?? PROJECT,
    keyHash: testCase.hash === 'other' ? hashKeyValue(newKeyValue()) : keyHash,
    watermark: '0123456789abcdef',
    revoked: state.revoked ? 1 : 0,
    expires_at: state.expiresAt,
    max_uses: state.maxUses,
    current_uses: state.currentUses,
    ...(state.maxFingerprints !== null && {
      max_fingerprints: state.maxFingerprints,
      fingerprints: Object.fromEntries(state.fingerprints.map((fingerprint) => [fingerprintAttribute(fingerprint), NOW - 100])),
    }),
    ...(state.ban && { ban_reason: state.ban.reason, ...(state.ban.until !== null && { ban_until: state.ban.until }) }),
  };
  await table.db.send(new PutCommand({ TableName: table.tableName, Item: item }));
  return { keyId, keyHash, item };
}

describe('the key rule: refusalOf and the DynamoDB condition agree on every case', () => {
  it('has a case for each combination and each code', () => {
    expect(CASES).toHaveLength(2 * 4 * 2 * 4 * 3 + 3);
    expect(new Set(CASES.map((testCase) => testCase.expected))).toEqual(
      new Set([undefined, 'KEY_REVOKED', 'KEY_BANNED', 'KEY_EXPIRED', 'KEY_HWID_LOCKED', 'KEY_OVER_LIMIT', 'KEY_INVALID']),
    );
  });

  it.each(CASES.map((testCase) => [testCase.name, testCase.expected ?? 'may run', testCase] as const))('%s: %s', async (_name, _expected, testCase) => {
    const { keyId, keyHash } = await putKey(testCase);
    const state: KeyState = {
      ...testCase.state,
      projectId: testCase.project ?? PROJECT,
      keyHash: testCase.hash === 'other' ? 'other' : keyHash,
      watermark: '',
    };
    expect(refusalOf(state, PROJECT, keyHash, NOW, THIS_MACHINE)).toBe(testCase.expected);

    const written = await store.checkAndCount({
      projectId: PROJECT,
      keyId,
      keyHash,
      fingerprint: THIS_MACHINE,
      now: NOW,
      perKeyPerMinute: LOADER_LIMITS.perKeyPerMinute,
      report: { project_id: PROJECT, executor: 'Wave', fingerprint: THIS_MACHINE },
      // The store's own retries only: the table's condition alone decides what is counted.
      mayRun: () => true,
    });
    if (testCase.expected === undefined) {
      expect(written.outcome).toBe('counted');
      if (written.outcome === 'counted') expect(written.key.currentUses).toBe(testCase.state.currentUses + 1);
    } else {
      expect(written).toMatchObject({ outcome: 'not_counted', checksThisWindow: 0 });
      if (written.outcome === 'not_counted') {
        expect(refusalOf(written.key, PROJECT, keyHash, NOW, THIS_MACHINE)).toBe(testCase.expected);
        expect(written.key?.currentUses).toBe(testCase.state.currentUses);
      }
    }
  });

  it('refuses a check with no key item at all, writing nothing', async () => {
    const keyHash = hashKeyValue(newKeyValue());
    const written = await store.checkAndCount({
      projectId: PROJECT,
      keyId: keyIdOf(keyHash),
      keyHash,
      fingerprint: THIS_MACHINE,
      now: NOW,
      perKeyPerMinute: LOADER_LIMITS.perKeyPerMinute,
      report: { project_id: PROJECT, executor: 'Wave', fingerprint: THIS_MACHINE },
      // The store's own retries only: the table's condition alone decides what is counted.
      mayRun: () => true,
    });
    expect(written).toEqual({ outcome: 'not_counted', keyId: keyIdOf(keyHash), key: undefined, checksThisWindow: 0 });
    expect(refusalOf(undefined, PROJECT, keyHash, NOW, THIS_MACHINE)).toBe('KEY_INVALID');
  });
});
