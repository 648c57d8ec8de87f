import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  detectClones,
  detectExecutionDrop,
  detectKeyAbuse,
  detectNewExecutor,
  KEY_ABUSE_THRESHOLDS,
  NEW_EXECUTOR_ABSENCE_SECONDS,
  originalCandidate,
} from '#domain/analytics/detectors';
import type { AnalyticsEvent, ValidationWindow } from '#domain/analytics/model';
import { CLONE_SAMPLE_LIMIT, EVENT_DATA } from '#schemas/events';

const NOW = 1_700_000_000; // Tue, 14 Nov 2023 22:13:20 UTC
const HOUR = 1_699_999_200; // 22:00 UTC that day

/** The event is what the delivery path expects: a condition named by its dedup key, and data its schema accepts. */
function expectWellFormed(event: AnalyticsEvent): void {
  expect(event.dedupKey).not.toBe('');
  expect(EVENT_DATA[event.name].safeParse(event.data)).toEqual({ success: true, data: event.data });
}

describe('execution_drop', () => {
  const day = (previousExecutions: number, executions: number) =>
    detectExecutionDrop({ projectId: 'prj_a', date: '2023-11-13', executions, previousExecutions }, NOW);

  it('does not fire on a drop of exactly 30 %', () => {
    expect(day(100, 70)).toBeUndefined();
    expect(day(10_000, 7_000)).toBeUndefined();
  });

  it('fires on a drop of 30.01 %', () => {
    const event = day(10_000, 6_999);
    expect(event?.data).toEqual({ date: '2023-11-13', executions: 6_999, previousExecutions: 10_000, dropPercent: 30.01 });
  });

  it('does not fire when the day before had no executions', () => {
    expect(day(0, 0)).toBeUndefined();
  });

  it('fires with a 100 % drop when the day had no executions at all', () => {
    expect(day(3, 0)?.data).toMatchObject({ executions: 0, dropPercent: 100 });
  });

  it('does not fire on a rise', () => {
    expect(day(50, 80)).toBeUndefined();
  });

  it('fires an execution_drop item deduplicated by the judged date', () => {
    const event = day(100, 10);
    if (!event) throw new Error('expected an event');
    expectWellFormed(event);
    expect(event).toMatchObject({ name: 'execution_drop', projectId: 'prj_a', dedupKey: '2023-11-13', occurredAt: NOW });
  });

  it('fires exactly when executions < 70 % of a non-zero day before, for any counts', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000_000 }), fc.nat({ max: 10_000_000 }), (previous, executions) => {
        // "fell by more than 30 %" as a fraction of the day before, compared in exact rationals.
        const definition = previous > 0 && 10 * executions < 7 * previous;
        expect(day(previous, executions) !== undefined).toBe(definition);
      }),
    );
  });

  it('reports the drop percentage to two decimals of the exact value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.nat(), (previous, seed) => {
        const executions = seed % previous;
        const event = day(previous, executions);
        if (event?.name !== 'execution_drop') return;
        const exact = ((previous - executions) / previous) * 100;
        expect(Math.abs((event.data as { dropPercent: number }).dropPercent - exact)).toBeLessThanOrEqual(0.005 + 1e-9);
      }),
    );
  });
});

describe('new_executor', () => {
  const judge = (lastSeenAt: number | null, sightings: number[]) => detectNewExecutor({ projectId: 'prj_a', executor: 'Synapse X', lastSeenAt, sightings });

  it('fires for an executor never seen for the project', () => {
    const { events, lastSeenAt } = judge(null, [NOW - 60]);
    expect(events.map((event) => event.data)).toEqual([{ executor: 'Synapse X', firstSeenAt: NOW - 60, previouslySeenAt: null }]);
    expect(lastSeenAt).toBe(NOW - 60);
  });

  it('does not fire when last seen exactly 7 days before', () => {
    expect(judge(NOW - NEW_EXECUTOR_ABSENCE_SECONDS, [NOW]).events).toEqual([]);
  });

  it('fires when last seen 7 days and 1 second before', () => {
    const [event, ...rest] = judge(NOW - NEW_EXECUTOR_ABSENCE_SECONDS - 1, [NOW]).events;
    expect(rest).toEqual([]);
    expect(event?.data).toEqual({ executor: 'Synapse X', firstSeenAt: NOW, previouslySeenAt: NOW - NEW_EXECUTOR_ABSENCE_SECONDS - 1 });
  });

  it('does not fire for a sighting older than the last one seen', () => {
    const result = judge(NOW, [NOW - 30 * 86_400]);
    expect(result.events).toEqual([]);
    expect(result.lastSeenAt).toBe(NOW);
  });

  it('fires once for many sightings of one appearance, at the earliest', () => {
    const { events, lastSeenAt } = judge(null, [NOW, NOW - 100, NOW - 50]);
    expect(events.map((event) => event.occurredAt)).toEqual([NOW - 100]);
    expect(lastSeenAt).toBe(NOW);
  });

  it('fires twice for a batch that holds two appearances more than 7 days apart', () => {
    const first = NOW - NEW_EXECUTOR_ABSENCE_SECONDS - 10;
    expect(judge(null, [NOW, first]).events.map((event) => event.data)).toEqual([
      { executor: 'Synapse X', firstSeenAt: first, previouslySeenAt: null },
      { executor: 'Synapse X', firstSeenAt: NOW, previouslySeenAt: first },
    ]);
  });

  it('deduplicates by executor and the UTC day of the appearance', () => {
    const [event] = judge(null, [NOW]).events;
    if (!event) throw new Error('expected an event');
    expectWellFormed(event);
    expect(event.dedupKey).toBe('Synapse X#2023-11-14');
  });

  it('fires exactly when the absence is longer than 604800 s, for any gap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 * 86_400 }), (gap) => {
        expect(judge(NOW - gap, [NOW]).events.length).toBe(gap > 7 * 86_400 ? 1 : 0);
      }),
    );
  });
});

describe('key_abuse', () => {
  const window = (counts: Partial<ValidationWindow['counts']>, distinctFingerprints = 1): ValidationWindow => ({
    projectId: 'prj_a',
    keyId: 'key_1',
    hourStart: HOUR,
    counts: { ok: 0, revoked: 0, banned: 0, expired: 0, hwid_locked: 0, over_limit: 0, unknown: 0, ...counts },
    distinctFingerprints,
    lastAt: HOUR + 120,
    reported: [],
  });
  const judge = (...args: Parameters<typeof detectKeyAbuse>) => detectKeyAbuse(...args).events;
  const patterns = (items: AnalyticsEvent[]) => items.map((item) => (item.data as { pattern: string }).pattern);

  it('fires many_fingerprints at 6 distinct fingerprints in an hour, not at 5', () => {
    expect(judge(window({ ok: 5 }, 5), undefined)).toEqual([]);
    const [event] = judge(window({ ok: 6 }, 6), undefined);
    expect(event?.data).toEqual({ keyId: 'key_1', pattern: 'many_fingerprints', count: 6, threshold: 5, windowSeconds: 3600 });
  });

  it('fires revoked_key_burst at 10 revoked validations in an hour, not at 9', () => {
    expect(judge(window({ revoked: 9 }), undefined)).toEqual([]);
    const [event] = judge(window({ revoked: 10 }), undefined);
    expect(event?.data).toEqual({ keyId: 'key_1', pattern: 'revoked_key_burst', count: 10, threshold: 10, windowSeconds: 3600 });
  });

  it('fires expired_key_burst at 10 expired validations in an hour, not at 9', () => {
    expect(judge(window({ expired: 9 }), undefined)).toEqual([]);
    expect(patterns(judge(window({ expired: 10 }), undefined))).toEqual(['expired_key_burst']);
  });

  it('fires banned_key_burst at 10 banned validations in an hour, not at 9', () => {
    expect(judge(window({ banned: 9 }), undefined)).toEqual([]);
    const [event] = judge(window({ banned: 10 }), undefined);
    expect(event?.data).toEqual({ keyId: 'key_1', pattern: 'banned_key_burst', count: 10, threshold: 10, windowSeconds: 3600 });
  });

  it('fires hwid_locked_burst at 10 HWID-locked validations in an hour, not at 9', () => {
    expect(judge(window({ hwid_locked: 9 }), undefined)).toEqual([]);
    const [event] = judge(window({ hwid_locked: 10 }), undefined);
    expect(event?.data).toEqual({ keyId: 'key_1', pattern: 'hwid_locked_burst', count: 10, threshold: 10, windowSeconds: 3600 });
  });

  it('fires over_max_uses at max_uses + 1 ok validations in an hour, not at max_uses', () => {
    const usage = { maxUses: 3, currentUses: 0 };
    expect(judge(window({ ok: 3 }), usage)).toEqual([]);
    const [event] = judge(window({ ok: 4 }), usage);
    expect(event?.data).toEqual({ keyId: 'key_1', pattern: 'over_max_uses', count: 4, threshold: 3, windowSeconds: 3600 });
  });

  it('fires over_max_uses on an over_limit validation once current_uses reaches max_uses, not one use before', () => {
    expect(judge(window({ over_limit: 1 }), { maxUses: 3, currentUses: 2 })).toEqual([]);
    const [event] = judge(window({ over_limit: 1 }), { maxUses: 3, currentUses: 3 });
    expect(event?.data).toEqual({ keyId: 'key_1', pattern: 'over_max_uses', count: 3, threshold: 3, windowSeconds: 3600 });
  });

  it('never fires over_max_uses for a key without a use cap, or one the project does not have', () => {
    expect(judge(window({ ok: 1_000, over_limit: 5 }), { maxUses: null, currentUses: 1_000 })).toEqual([]);
    expect(judge(window({ ok: 1_000, over_limit: 5 }), undefined)).toEqual([]);
  });

  it('fires every pattern the hour shows, each once', () => {
    const events = judge(window({ ok: 20, revoked: 10, expired: 10 }, 7), { maxUses: 5, currentUses: 5 });
    expect(patterns(events)).toEqual(['many_fingerprints', 'revoked_key_burst', 'expired_key_burst', 'over_max_uses']);
  });

  it('names the patterns it fired, and does not judge a pattern the window already reported', () => {
    const busy = window({ revoked: 10, expired: 10 });
    expect(detectKeyAbuse(busy, undefined).patterns).toEqual(['revoked_key_burst', 'expired_key_burst']);
    const later = detectKeyAbuse({ ...busy, counts: { ...busy.counts, revoked: 30 }, reported: ['revoked_key_burst'] }, undefined);
    expect(later.patterns).toEqual(['expired_key_burst']);
    expect(patterns(later.events)).toEqual(['expired_key_burst']);
  });

  it('deduplicates by key, pattern and UTC hour, and dates the event at the last validation seen', () => {
    const [event] = judge(window({ revoked: 12 }), undefined);
    if (!event) throw new Error('expected an event');
    expectWellFormed(event);
    expect(event.dedupKey).toBe('key_1#revoked_key_burst#2023-11-14T22');
    expect(event.occurredAt).toBe(HOUR + 120);
  });

  it('fires many_fingerprints exactly above the threshold, for any count', () => {
    fc.assert(
      fc.property(fc.nat({ max: 200 }), (distinct) => {
        const fired = patterns(judge(window({}, distinct), undefined)).includes('many_fingerprints');
        expect(fired).toBe(distinct > KEY_ABUSE_THRESHOLDS.distinctFingerprintsMoreThan);
      }),
    );
  });
});

describe('clone_detected', () => {
  type Sighting = { hash: string; firstSeenAt: number };
  const judge = (original: string, distinctHashes: number, unjudged: Sighting[], versionId: string | null = 'ver_1') =>
    detectClones({ projectId: 'prj_a', scriptId: 'prj_a', versionId, tally: { original, distinctHashes }, unjudged });
  const seen = (hash: string, firstSeenAt: number): Sighting => ({ hash, firstSeenAt });
  const newHashes = (events: AnalyticsEvent[]) => events.map((event) => (event.data as { newHash: string }).newHash);

  it('fires nothing for the original and marks it judged', () => {
    expect(judge('aaaa1111', 1, [seen('aaaa1111', 10)])).toEqual({ events: [], judged: ['aaaa1111'] });
  });

  it('fires for a hash other than the original, with the count and a sample, not the list of every hash', () => {
    const { events, judged } = judge('aaaa1111', 600, [seen('bbbb2222', 20)]);
    expect(events.map((event) => event.data)).toEqual([
      { scriptId: 'prj_a', versionId: 'ver_1', newHash: 'bbbb2222', originalHash: 'aaaa1111', distinctHashes: 600, sampleHashes: ['aaaa1111', 'bbbb2222'] },
    ]);
    expect(events[0]?.occurredAt).toBe(20);
    expect(judged).toEqual(['bbbb2222']);
  });

  it('fires for every unjudged hash but the original, in order of first sighting, each listing itself in its sample', () => {
    const { events, judged } = judge('aaaa1111', 3, [seen('cccc3333', 30), seen('aaaa1111', 10), seen('bbbb2222', 20)]);
    expect(newHashes(events)).toEqual(['bbbb2222', 'cccc3333']);
    expect(events.map((event) => (event.data as { sampleHashes: string[] }).sampleHashes)).toEqual([
      ['aaaa1111', 'bbbb2222', 'cccc3333'],
      ['aaaa1111', 'cccc3333', 'bbbb2222'],
    ]);
    expect(judged).toEqual(['aaaa1111', 'bbbb2222', 'cccc3333']);
  });

  it(`keeps the sample to ${CLONE_SAMPLE_LIMIT} hashes however many are new at once`, () => {
    const { events } = judge(
      '00000000',
      51,
      Array.from({ length: 50 }, (_, i) => seen((i + 1).toString(16).padStart(8, '0'), i)),
    );
    expect(events).toHaveLength(50);
    for (const event of events) {
      expectWellFormed(event);
      expect((event.data as { sampleHashes: string[] }).sampleHashes).toHaveLength(CLONE_SAMPLE_LIMIT);
    }
  });

  it('never shows fewer distinct hashes than it lists, should the count have fallen short', () => {
    const [event] = judge('aaaa1111', 1, [seen('bbbb2222', 20)]).events;
    expect(event?.data).toMatchObject({ distinctHashes: 2 });
  });

  it('fires nothing when nothing is unjudged', () => {
    expect(judge('aaaa1111', 2, [])).toEqual({ events: [], judged: [] });
  });

  it('deduplicates by script, version and hash, with an empty version when the report named none', () => {
    const [versioned] = judge('aaaa1111', 2, [seen('bbbb2222', 20)]).events;
    const [unversioned] = judge('aaaa1111', 2, [seen('bbbb2222', 20)], null).events;
    if (!versioned || !unversioned) throw new Error('expected events');
    expectWellFormed(versioned);
    expectWellFormed(unversioned);
    expect(versioned.dedupKey).toBe('prj_a#ver_1#bbbb2222');
    expect(unversioned.dedupKey).toBe('prj_a##bbbb2222');
    expect(unversioned.data).toMatchObject({ versionId: null });
  });

  it('offers the earliest sighting as the original, ties broken by the hash, so a batch of first hashes agrees', () => {
    expect(originalCandidate([seen('cccc3333', 30), seen('bbbb2222', 10), seen('aaaa1111', 20)])).toBe('bbbb2222');
    expect(originalCandidate([seen('ffff0000', 10), seen('0000ffff', 10)])).toBe('0000ffff');
    expect(originalCandidate([])).toBeUndefined();
  });

  it('fires one event per distinct hash other than the original, for any batch', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[0-9a-f]{8}$/), { minLength: 1, maxLength: 20 }),
        fc.array(fc.nat(1000), { minLength: 20, maxLength: 20 }),
        (hashes, times) => {
          const sightings = hashes.map((value, i) => seen(value, times[i] ?? 0));
          const original = originalCandidate(sightings) ?? '';
          const { events, judged } = judge(original, hashes.length, sightings);
          expect(new Set(newHashes(events))).toEqual(new Set(hashes.filter((hash) => hash !== original)));
          expect(new Set(judged)).toEqual(new Set(hashes));
        },
      ),
      { numRuns: 200 },
    );
  });
});
