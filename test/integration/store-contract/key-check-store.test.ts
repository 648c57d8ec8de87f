import { expect, it } from 'vitest';
import type { KeyCheck } from '#domain/ports';
import { FIXED_NOW } from '#test-support/fixtures';
import { type CheckedKeyRef, forEachImplementation, type KeyCheckWorld, mayRunFor } from './subjects';

/**
 * KeyCheckStore (lambdas/domain/ports.ts): MemoryKeyCheckStore and DynamoKeyCheckStore, one contract. The read side
 * (peek, watermarkOf) and what the counting write says it did: counted (with the expiry and uses after it), or not
 * counted (with the key as the table held it and its window's count), for the reasons the port states.
 */

const WATERMARK = '0123456789abcdef';
/** The start of a minute: FIXED_NOW is 20 s into one. */
const MINUTE = FIXED_NOW - (FIXED_NOW % 60);
const FP = (n: number) => n.toString(16).padStart(64, '0');
const EXPIRES = FIXED_NOW + 30 * 86_400;

function check(
  key: CheckedKeyRef,
  options: { now?: number; fingerprint?: string; perKeyPerMinute?: number; keyHash?: string; projectId?: string } = {},
): KeyCheck {
  const { now = FIXED_NOW, fingerprint = FP(1), perKeyPerMinute = 120, keyHash = key.keyHash, projectId = key.projectId } = options;
  return {
    projectId,
    keyId: key.keyId,
    keyHash,
    fingerprint,
    now,
    perKeyPerMinute,
    report: { project_id: projectId, executor: 'Synapse', fingerprint },
    mayRun: mayRunFor({ projectId, keyHash }, now, fingerprint),
  };
}

forEachImplementation('keyChecks', (world: () => KeyCheckWorld) => {
  const store = () => world().store;

  it('peeks at a key as issued, counting nothing', async () => {
    const key = await world().issueKey({ watermark: WATERMARK, maxUses: 5 });
    const state = {
      projectId: key.projectId,
      keyHash: key.keyHash,
      revoked: false,
      expiresAt: EXPIRES,
      maxUses: 5,
      currentUses: 0,
      maxFingerprints: null,
      fingerprints: [],
      watermark: WATERMARK,
      ban: null,
    };
    expect(await store().peek(key.keyId)).toEqual(state);
    expect(await store().peek(key.keyId)).toEqual(state);
  });

  it('peeks at nothing for a key that does not exist', async () => {
    expect(await store().peek('key_00000000000000000000')).toBeUndefined();
  });

  it("reads a key's watermark, and none for a key that does not exist", async () => {
    const key = await world().issueKey({ watermark: WATERMARK });
    expect(await store().watermarkOf(key.keyId)).toBe(WATERMARK);
    expect(await store().watermarkOf('key_00000000000000000000')).toBeUndefined();
  });

  it('counts a use of a key that may run, answering its expiry and uses after the count', async () => {
    const key = await world().issueKey({ watermark: WATERMARK, maxUses: 5 });
    expect(await store().checkAndCount(check(key))).toEqual({ outcome: 'counted', keyId: key.keyId, key: { expiresAt: EXPIRES, maxUses: 5, currentUses: 1 } });
    expect(await store().checkAndCount(check(key))).toEqual({ outcome: 'counted', keyId: key.keyId, key: { expiresAt: EXPIRES, maxUses: 5, currentUses: 2 } });
    expect((await store().peek(key.keyId))?.currentUses).toBe(2);
  });

  it('counts nothing for a key that does not exist', async () => {
    const key = { projectId: 'prj_00000000000000000000', keyId: 'key_00000000000000000000', keyHash: 'a'.repeat(64) };
    expect(await store().checkAndCount(check(key))).toEqual({ outcome: 'not_counted', keyId: key.keyId, key: undefined, checksThisWindow: 0 });
  });

  it('counts nothing for a revoked key, answering its state', async () => {
    const key = await world().issueKey({ watermark: WATERMARK });
    await store().checkAndCount(check(key));
    await world().revoke(key);
    const write = await store().checkAndCount(check(key, { now: FIXED_NOW + 1 }));
    expect(write).toEqual({ outcome: 'not_counted', keyId: key.keyId, key: expect.objectContaining({ revoked: true, currentUses: 1 }), checksThisWindow: 1 });
    expect((await store().peek(key.keyId))?.currentUses).toBe(1);
  });

  it('counts nothing for a key checked with another hash or for another project', async () => {
    const key = await world().issueKey({ watermark: WATERMARK });
    const notCounted = { outcome: 'not_counted', keyId: key.keyId, key: expect.objectContaining({ currentUses: 0 }), checksThisWindow: 0 };
    expect(await store().checkAndCount(check(key, { keyHash: 'f'.repeat(64) }))).toEqual(notCounted);
    expect(await store().checkAndCount(check(key, { projectId: 'prj_00000000000000000000' }))).toEqual(notCounted);
    expect((await store().peek(key.keyId))?.currentUses).toBe(0);
  });

  it('counts nothing for a banned key until its ban ends, and counts again once it is lifted', async () => {
    const key = await world().issueKey({ watermark: WATERMARK });
    await world().ban(key, { reason: 'Shared', until: FIXED_NOW + 10 });
    const banned = await store().checkAndCount(check(key));
    expect(banned).toMatchObject({ outcome: 'not_counted', key: { ban: { reason: 'Shared', until: FIXED_NOW + 10 } } });
    expect(await store().checkAndCount(check(key, { now: FIXED_NOW + 10 }))).toMatchObject({ outcome: 'counted', key: { currentUses: 1 } });

    await world().ban(key, { reason: 'For good', until: null });
    expect(await store().checkAndCount(check(key, { now: FIXED_NOW + 11 }))).toMatchObject({
      outcome: 'not_counted',
      key: { ban: { reason: 'For good', until: null } },
    });
    await world().ban(key, null);
    expect(await store().checkAndCount(check(key, { now: FIXED_NOW + 12 }))).toMatchObject({ outcome: 'counted', key: { currentUses: 2 } });
  });

  it('counts nothing for a key from its expiry on', async () => {
    const key = await world().issueKey({ watermark: WATERMARK, expiresAt: FIXED_NOW + 5 });
    expect(await store().checkAndCount(check(key, { now: FIXED_NOW + 4 }))).toMatchObject({ outcome: 'counted' });
    expect(await store().checkAndCount(check(key, { now: FIXED_NOW + 5 }))).toMatchObject({
      outcome: 'not_counted',
      key: { expiresAt: FIXED_NOW + 5, currentUses: 1 },
    });
  });

  it('counts nothing for a key at its cap', async () => {
    const key = await world().issueKey({ watermark: WATERMARK, maxUses: 1 });
    expect(await store().checkAndCount(check(key))).toMatchObject({ outcome: 'counted', key: { currentUses: 1 } });
    expect(await store().checkAndCount(check(key))).toEqual({
      outcome: 'not_counted',
      keyId: key.keyId,
      key: expect.objectContaining({ maxUses: 1, currentUses: 1 }),
      checksThisWindow: 1,
    });
  });

  it("counts nothing past the key's own limit in its minute, and counts again in the next minute", async () => {
    const key = await world().issueKey({ watermark: WATERMARK });
    const at = (second: number) => check(key, { now: MINUTE + second, perKeyPerMinute: 2 });
    expect(await store().checkAndCount(at(0))).toMatchObject({ outcome: 'counted' });
    expect(await store().checkAndCount(at(30))).toMatchObject({ outcome: 'counted' });
    expect(await store().checkAndCount(at(59))).toEqual({
      outcome: 'not_counted',
      keyId: key.keyId,
      key: expect.objectContaining({ currentUses: 2 }),
      checksThisWindow: 2,
    });
    expect(await store().checkAndCount(at(60))).toMatchObject({ outcome: 'counted', key: { currentUses: 3 } });
  });

  it('counts a check into a window a clock a little ahead opened', async () => {
    const key = await world().issueKey({ watermark: WATERMARK });
    const at = (second: number) => check(key, { now: MINUTE + second, perKeyPerMinute: 2 });
    expect(await store().checkAndCount(at(60))).toMatchObject({ outcome: 'counted' });
    expect(await store().checkAndCount(at(59))).toMatchObject({ outcome: 'counted' });
    expect(await store().checkAndCount(at(58))).toMatchObject({ outcome: 'not_counted', checksThisWindow: 2 });
  });

  it('binds a new machine in the counting write while the key has room, and counts a bound machine without binding it again', async () => {
    const key = await world().issueKey({ watermark: WATERMARK, maxFingerprints: 2 });
    expect(await store().checkAndCount(check(key, { fingerprint: FP(1) }))).toMatchObject({ outcome: 'counted', key: { currentUses: 1 } });
    expect(await store().checkAndCount(check(key, { fingerprint: FP(1) }))).toMatchObject({ outcome: 'counted', key: { currentUses: 2 } });
    expect(await store().checkAndCount(check(key, { fingerprint: FP(2) }))).toMatchObject({ outcome: 'counted', key: { currentUses: 3 } });
    expect([...((await store().peek(key.keyId))?.fingerprints ?? [])].sort()).toEqual([FP(1), FP(2)]);
  });

  it('counts nothing from a new machine once the key holds its machines, answering the ones bound', async () => {
    const key = await world().issueKey({ watermark: WATERMARK, maxFingerprints: 1 });
    await store().checkAndCount(check(key, { fingerprint: FP(1) }));
    const write = await store().checkAndCount(check(key, { fingerprint: FP(2) }));
    expect(write).toEqual({
      outcome: 'not_counted',
      keyId: key.keyId,
      key: expect.objectContaining({ maxFingerprints: 1, fingerprints: [FP(1)], currentUses: 1 }),
      checksThisWindow: 1,
    });
  });
});
