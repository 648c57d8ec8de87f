import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AddressTally } from '#domain/address-tally';
import { FullCopyTally } from '#domain/full-copies';
import type { KeyCheckStore, ScriptStore, ScriptVersionStore } from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import { deliverScript, ScriptCache } from '#domain/scripts';
import { MemoryKeyCheckStore, MemoryScriptStore, MemoryStores } from '#test-support/memory-stores';

/**
 * A script fetch reads the current-version pointer beside the key's write (one round trip), and must still keep
 * read-after-write: after a rollback's 200 every later fetch serves the new version, after a revoke's 200 every
 * later fetch is refused. fast-check's scheduler decides when each store request takes effect and when its answer
 * arrives, across fetches, rollbacks and revokes in flight together; a fake clock stamps when each began and ended.
 */

const PROJECT = 'prj_interleave';
const VERSIONS = ['ver_a', 'ver_b', 'ver_c'] as const;
const START = 1_767_225_600;

type Op = { kind: 'fetch'; key: number } | { kind: 'rollback'; to: number } | { kind: 'revoke'; key: number };
/** An operation and the earlier one it waits for (its answer) before it starts, if any. */
type Planned = { op: Op; after: number | undefined };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('fetch' as const), key: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rollback' as const), to: fc.nat(VERSIONS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), key: fc.nat(2) }) },
);
const planArb = fc
  .array(fc.record({ op: opArb, after: fc.option(fc.nat(20), { nil: undefined }) }), { minLength: 2, maxLength: 12 })
  .map((plan): Planned[] => plan.map((step, index) => ({ op: step.op, after: step.after !== undefined && step.after < index ? step.after : undefined })));

interface Done {
  op: Op;
  startedAt: number;
  endedAt: number;
  /** The version a fetch served, or its refusal code. */
  outcome?: string;
}

async function run(scheduler: fc.Scheduler, plan: Planned[], warm: boolean): Promise<Done[]> {
  // The fake clock: a tick per event, so "began after that one answered" is a comparison of ticks.
  let tick = 0;
  const clock = () => ++tick;
  // Every request to the table takes effect at a point the scheduler picks, and its answer arrives at another.
  const request =
    <Args extends unknown[], Result>(label: string, effect: (...args: Args) => Promise<Result>) =>
    async (...args: Args): Promise<Result> => {
      await scheduler.schedule(Promise.resolve(), `${label} sent`);
      const result = await effect(...args);
      await scheduler.schedule(Promise.resolve(), `${label} answered`);
      return result;
    };

  const pointer = new Map<string, string>([[PROJECT, VERSIONS[0]]]);
  const memoryKeys = new MemoryKeyCheckStore();
  const keys = [0, 1, 2].map(() => memoryKeys.issue(PROJECT, { expiresAt: START + 86_400 }));
  const scripts = new MemoryScriptStore();
  for (const versionId of VERSIONS) await scripts.put({ projectId: PROJECT, versionId }, new TextEncoder().encode(`print("${versionId} WM_XXXXXXXXXXXXXXXX")`));
  const versions: ScriptVersionStore = {
    currentVersionId: request('pointer read', async (projectId: string) => pointer.get(projectId)),
    version: request('version read', async (_projectId: string, versionId: string) => ({
      versionNumber: VERSIONS.indexOf(versionId as never) + 1,
      sha256: '',
    })),
  };
  const keyChecks: KeyCheckStore = {
    checkAndCount: request('key write', (check) => memoryKeys.checkAndCount(check)),
    peek: request('key read', (keyId) => memoryKeys.peek(keyId)),
    watermarkOf: request('watermark read', (keyId) => memoryKeys.watermarkOf(keyId)),
  };
  const scriptStore: ScriptStore = {
    put: (object, body) => scripts.put(object, body),
    delete: (object) => scripts.delete(object),
    get: request('S3 get', (object) => scripts.get(object)),
  };
  const rollback = request('rollback write', async (to: string) => {
    pointer.set(PROJECT, to);
  });
  const revoke = request('revoke write', async (keyId: string) => memoryKeys.revoke(keyId));

  const cache = new ScriptCache(1024 * 1024);
  const deps = {
    keys: keyChecks,
    rateLimits: new MemoryStores(),
    telemetry: { report: async () => undefined },
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    versions,
    scripts: scriptStore,
    cache,
    fullCopies: new FullCopyTally(),
  };
  const fetchOnce = async (key: number) => {
    const delivery = await deliverScript(
      deps,
      { project_id: PROJECT, key: keys[key]?.key ?? '', fingerprint: 'f'.repeat(64), executor: 'Wave' },
      '198.51.100.1',
      START + tick,
      undefined,
    );
    return delivery.outcome === 'served' ? delivery.script.versionId : delivery.outcome === 'refused' ? delivery.code : delivery.outcome;
  };
  // A warm container has read the pointer before (the one-round-trip path); a cold one reads it first.
  if (warm) await scheduler.waitFor(fetchOnce(0));

  const done: Promise<Done>[] = [];
  for (const { op, after } of plan) {
    const perform = async (): Promise<Done> => {
      if (after !== undefined) await done[after];
      const startedAt = clock();
      let outcome: string | undefined;
      if (op.kind === 'fetch') outcome = await fetchOnce(op.key);
      else if (op.kind === 'rollback') await rollback(VERSIONS[op.to] ?? VERSIONS[0]);
      else await revoke(keys[op.key]?.id ?? '');
      return { op, startedAt, endedAt: clock(), ...(outcome ? { outcome } : {}) };
    };
    done.push(perform());
  }
  return scheduler.waitFor(Promise.all(done));
}

/** The rules, checked on what happened: each fetch against the rollbacks and revokes that answered before it began. */
function checkReadAfterWrite(history: Done[]): void {
  for (const fetched of history.filter((entry) => entry.op.kind === 'fetch')) {
    const key = fetched.op.kind === 'fetch' ? fetched.op.key : -1;
    const revokedBefore = history.some((entry) => entry.op.kind === 'revoke' && entry.op.key === key && entry.endedAt < fetched.startedAt);
    if (revokedBefore) {
      expect(fetched.outcome, 'a fetch begun after its key was revoked').toBe('KEY_REVOKED');
      continue;
    }
    // The versions it may serve: the pointer's value at some moment while it ran. Rollbacks in flight together are
    // in no order, so any answered before it began may have written last, unless another began after that one
    // answered and itself answered before the fetch began; and any rollback that overlapped the fetch.
    const rollbacks = history.filter((entry) => entry.op.kind === 'rollback');
    const answeredBefore = rollbacks.filter((entry) => entry.endedAt < fetched.startedAt);
    const overwritten = (entry: Done) => answeredBefore.some((later) => later.startedAt > entry.endedAt);
    const target = (entry: Done) => VERSIONS[entry.op.kind === 'rollback' ? entry.op.to : 0];
    const allowed = new Set([
      ...(answeredBefore.length === 0 ? [VERSIONS[0]] : answeredBefore.filter((entry) => !overwritten(entry)).map(target)),
      ...rollbacks.filter((entry) => entry.endedAt > fetched.startedAt && entry.startedAt < fetched.endedAt).map(target),
    ]);
    if (fetched.outcome !== 'KEY_REVOKED')
      expect(allowed, `fetch ${fetched.startedAt}-${fetched.endedAt} served ${fetched.outcome}`).toContain(fetched.outcome);
  }
}

describe('a script fetch in one round trip keeps read-after-write, under every interleaving the scheduler picks', () => {
  it('after a rollback answered, every later fetch serves the new version; after a revoke answered, every later fetch is refused (warm container: pointer read beside the write)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), planArb, async (scheduler, plan) => checkReadAfterWrite(await run(scheduler, plan, true))),
      { numRuns: 300 },
    );
  });

  it('the same in a cold container, whose first fetch reads the pointer before the write', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), planArb, async (scheduler, plan) => checkReadAfterWrite(await run(scheduler, plan, false))),
      { numRuns: 200 },
    );
  });

  it('a fetch begun after a rollback answered serves its version though the container last saw another (100 of 100)', async () => {
    let served = 0;
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: VERSIONS.length - 1 }), fc.nat(2), async (scheduler, to, key) => {
        const history = await run(
          scheduler,
          [
            { op: { kind: 'rollback', to }, after: undefined },
            { op: { kind: 'fetch', key }, after: 0 },
          ],
          true,
        );
        expect(history[1]?.outcome).toBe(VERSIONS[to]);
        served++;
      }),
      { numRuns: 100 },
    );
    expect(served).toBe(100);
  });

  it('names the execution by the version the container last read, so only its first fetch after a rollback reports the previous one', async () => {
    const keys = new MemoryKeyCheckStore();
    const key = keys.issue(PROJECT, { expiresAt: START + 86_400 });
    const scripts = new MemoryScriptStore();
    for (const versionId of VERSIONS) await scripts.put({ projectId: PROJECT, versionId }, new TextEncoder().encode(`print("${versionId}")`));
    let current: string = VERSIONS[0];
    const deps = {
      keys,
      rateLimits: new MemoryStores(),
      telemetry: { report: async () => undefined },
      addresses: new AddressTally(),
      refusals: new RefusalMemory(),
      versions: {
        currentVersionId: async () => current,
        version: async (_: string, versionId: string) => ({ versionNumber: VERSIONS.indexOf(versionId as never) + 1, sha256: '' }),
      },
      scripts,
      cache: new ScriptCache(1024 * 1024),
      fullCopies: new FullCopyTally(),
    };
    const fetchOnce = async () => {
      const delivery = await deliverScript(
        deps,
        { project_id: PROJECT, key: key.key, fingerprint: 'f'.repeat(64), executor: 'Wave' },
        '198.51.100.1',
        START,
        undefined,
      );
      return { served: delivery.outcome === 'served' ? delivery.script.versionId : delivery.outcome, reported: keys.storedKey(key.id)?.lastCheck?.versionId };
    };
    expect(await fetchOnce()).toEqual({ served: VERSIONS[0], reported: VERSIONS[0] });
    current = VERSIONS[1];
    expect(await fetchOnce()).toEqual({ served: VERSIONS[1], reported: VERSIONS[0] });
    expect(await fetchOnce()).toEqual({ served: VERSIONS[1], reported: VERSIONS[1] });
  });
});
