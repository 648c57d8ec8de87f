import { describe, expect, it } from 'vitest';
import {
  bucketStart,
  bucketStarts,
  foldStats,
  NO_VERSION_NAME,
  OTHER_NAME,
  STATS_RESULTS,
  type StatsDelta,
  type StoredStatsBucket,
  statsAnswer,
  statsWindow,
  TOP_NAMES,
} from '#domain/analytics/stats';
import { InvalidInput } from '#domain/errors';
import { StatsQuery } from '#schemas/requests';
import type { ExecutionRecord, ValidationRecord } from '#schemas/telemetry';
import { expectError, invoke, memoryApi, NOW, PROJECT_ID } from '#test-support/api-harness';
import { apiEvent, DEFAULT_CALLER } from '#test-support/fixtures';

const HOUR = 3600;
const DAY = 86_400;
const utc = (iso: string) => Date.parse(iso) / 1000;
const iso = (t: number) => new Date(t * 1000).toISOString();

const validation = (at: number, result: ValidationRecord['result'] = 'ok'): ValidationRecord => ({
  kind: 'validation',
  projectId: 'prj_a',
  keyId: 'key_a',
  result,
  executor: 'Wave',
  fingerprint: 'a'.repeat(64),
  at,
});
const execution = (at: number, fields: Partial<ExecutionRecord> = {}): ExecutionRecord => ({
  kind: 'execution',
  projectId: 'prj_a',
  executor: 'Wave',
  at,
  ...fields,
});
const stored = (t: number, counts: Record<string, number>, rest = 0): StoredStatsBucket => ({
  t,
  total: Object.values(counts).reduce((sum, n) => sum + n, rest),
  counts,
  rest,
});
const deltaOf = (deltas: StatsDelta[], granularity: StatsDelta['granularity'], dimension: StatsDelta['dimension']) =>
  deltas
    .filter((delta) => delta.granularity === granularity && delta.dimension === dimension)
    .map(({ t, total, counts }) => ({ t, total, counts: Object.fromEntries(counts) }));

describe('bucket alignment', () => {
  it('puts a time in the UTC hour and the UTC day that hold it, a bucket start in its own bucket', () => {
    expect(iso(bucketStart(utc('2024-03-10T13:59:59Z'), 'hour'))).toBe('2024-03-10T13:00:00.000Z');
    expect(iso(bucketStart(utc('2024-03-10T14:00:00Z'), 'hour'))).toBe('2024-03-10T14:00:00.000Z');
    expect(iso(bucketStart(utc('2024-03-10T23:59:59Z'), 'day'))).toBe('2024-03-10T00:00:00.000Z');
    expect(iso(bucketStart(utc('2024-03-11T00:00:00Z'), 'day'))).toBe('2024-03-11T00:00:00.000Z');
  });

  it('zero-fills every hour overlapping the window across a day and a month boundary, a partial first and last hour included', () => {
    const starts = bucketStarts(utc('2024-02-29T22:30:00Z'), utc('2024-03-01T02:10:00Z'), 'hour').map(iso);
    expect(starts).toEqual([
      '2024-02-29T22:00:00.000Z',
      '2024-02-29T23:00:00.000Z',
      '2024-03-01T00:00:00.000Z',
      '2024-03-01T01:00:00.000Z',
      '2024-03-01T02:00:00.000Z',
    ]);
    const answer = statsAnswer({ granularity: 'hour', by: 'result', from: utc('2024-02-29T22:30:00Z'), to: utc('2024-03-01T02:10:00Z') }, [
      stored(utc('2024-03-01T00:00:00Z'), { ok: 4, revoked: 1 }),
    ]);
    expect(answer.buckets.map(({ t, total }) => [iso(t), total])).toEqual([
      ['2024-02-29T22:00:00.000Z', 0],
      ['2024-02-29T23:00:00.000Z', 0],
      ['2024-03-01T00:00:00.000Z', 5],
      ['2024-03-01T01:00:00.000Z', 0],
      ['2024-03-01T02:00:00.000Z', 0],
    ]);
  });

  it('zero-fills every day across a month and a year boundary; `to` on a boundary opens no bucket', () => {
    const starts = bucketStarts(utc('2023-12-30T05:00:00Z'), utc('2024-01-02T00:00:00Z'), 'day').map(iso);
    expect(starts).toEqual(['2023-12-30T00:00:00.000Z', '2023-12-31T00:00:00.000Z', '2024-01-01T00:00:00.000Z']);
    expect(bucketStarts(utc('2024-01-31T00:00:00Z'), utc('2024-03-01T00:00:01Z'), 'day').map(iso).slice(-3)).toEqual([
      '2024-02-28T00:00:00.000Z',
      '2024-02-29T00:00:00.000Z',
      '2024-03-01T00:00:00.000Z',
    ]);
  });
});

describe('folding a batch', () => {
  it("counts each check in its hour and its day by result, and each execution by executor and by version, leaving out checks of values that are no project's key", () => {
    const at = utc('2024-03-10T13:20:00Z');
    const deltas = foldStats(
      [validation(at), validation(at + 60, 'revoked'), validation(at + HOUR, 'ok'), validation(at, 'unknown')],
      [execution(at, { versionId: 'ver_1' }), execution(at + 10, { executor: 'Delta' })],
    );
    const hour = utc('2024-03-10T13:00:00Z');
    expect(deltaOf(deltas, 'hour', 'result')).toEqual([
      { t: hour, total: 2, counts: { ok: 1, revoked: 1 } },
      { t: hour + HOUR, total: 1, counts: { ok: 1 } },
    ]);
    expect(deltaOf(deltas, 'day', 'result')).toEqual([{ t: utc('2024-03-10T00:00:00Z'), total: 3, counts: { ok: 2, revoked: 1 } }]);
    expect(deltaOf(deltas, 'hour', 'executor')).toEqual([{ t: hour, total: 2, counts: { Wave: 1, Delta: 1 } }]);
    expect(deltaOf(deltas, 'day', 'version')).toEqual([{ t: utc('2024-03-10T00:00:00Z'), total: 2, counts: { ver_1: 1, [NO_VERSION_NAME]: 1 } }]);
  });

  it('keeps an executor named __proto__ as a name like any other', () => {
    const deltas = foldStats([], [execution(NOW, { executor: '__proto__' }), execution(NOW, { executor: '__proto__' })]);
    expect(deltaOf(deltas, 'hour', 'executor')[0]?.counts).toEqual(Object.fromEntries([['__proto__', 2]]));
  });

  it('counts under every result of the validation enum but unknown, so a result added there is counted too', () => {
    expect(STATS_RESULTS).toEqual(['ok', 'revoked', 'banned', 'expired', 'hwid_locked', 'over_limit']);
  });
});

describe('the roll-up of a bucket', () => {
  const window = { granularity: 'hour', by: 'executor', from: NOW, to: NOW + 1 } as const;

  it(`names the ${TOP_NAMES} largest (ties by name) and sums the rest with what the counter kept as its rest under "${OTHER_NAME}"`, () => {
    const counts = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`Exec ${String(i).padStart(2, '0')}`, i < 3 ? 30 : 25 - i]));
    const [bucket] = statsAnswer(window, [stored(bucketStart(NOW, 'hour'), counts, 7)]).buckets;
    const named = Object.entries(bucket?.counts ?? {}).filter(([name]) => name !== OTHER_NAME);
    expect(named).toHaveLength(TOP_NAMES);
    expect(named.slice(0, 4)).toEqual([
      ['Exec 00', 30],
      ['Exec 01', 30],
      ['Exec 02', 30],
      ['Exec 03', 22],
    ]);
    // Left out: Exec 20..24 (5 + 4 + 3 + 2 + 1), plus the counter's rest of 7.
    expect(bucket?.counts[OTHER_NAME]).toBe(22);
    expect(Object.values(bucket?.counts ?? {}).reduce((sum, n) => sum + n, 0)).toBe(bucket?.total);
  });

  it('names every result by result, zeros included; by executor an empty hour has no names', () => {
    const [byResult] = statsAnswer({ ...window, by: 'result' }, []).buckets;
    expect(byResult).toEqual({ t: bucketStart(NOW, 'hour'), total: 0, counts: { ok: 0, revoked: 0, banned: 0, expired: 0, hwid_locked: 0, over_limit: 0 } });
    expect(statsAnswer(window, []).buckets).toEqual([{ t: bucketStart(NOW, 'hour'), total: 0, counts: {} }]);
  });

  it(`adds the rest to an executor literally named "${OTHER_NAME}": the answer has one key of that name`, () => {
    const [bucket] = statsAnswer(window, [stored(bucketStart(NOW, 'hour'), { [OTHER_NAME]: 3, Wave: 1 }, 2)]).buckets;
    expect(bucket?.counts).toEqual({ [OTHER_NAME]: 5, Wave: 1 });
  });
});

describe('the window and its limits', () => {
  const ask = (query: Partial<Parameters<typeof statsWindow>[0]>) => statsWindow({ granularity: 'hour', by: 'result', ...query }, NOW);
  const refusal = (query: Partial<Parameters<typeof statsWindow>[0]>) => {
    try {
      ask(query);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInput);
      return (error as Error).message;
    }
    throw new Error('the window was accepted');
  };

  it('defaults to the day before now by hour and the 30 days before `to` by day', () => {
    expect(ask({})).toEqual({ granularity: 'hour', by: 'result', from: NOW - DAY, to: NOW });
    expect(ask({ granularity: 'day', to: NOW - HOUR })).toEqual({ granularity: 'day', by: 'result', from: NOW - HOUR - 30 * DAY, to: NOW - HOUR });
  });

  it('takes exactly 7 days by hour and 90 by day, and refuses a second more naming from and the limit', () => {
    expect(ask({ from: NOW - 7 * DAY, to: NOW }).from).toBe(NOW - 7 * DAY);
    expect(ask({ granularity: 'day', from: NOW - 90 * DAY, to: NOW }).from).toBe(NOW - 90 * DAY);
    expect(refusal({ from: NOW - 7 * DAY - 1, to: NOW })).toMatch(/^from: a window of granularity hour spans at most 7 days \(168 buckets\)/);
    expect(refusal({ granularity: 'day', from: NOW - 90 * DAY - 1, to: NOW })).toMatch(/^from: a window of granularity day spans at most 90 days/);
  });

  it('refuses from at or after to, naming both', () => {
    expect(refusal({ from: NOW, to: NOW })).toBe(`from (${NOW}) must be before to (${NOW})`);
    expect(refusal({ from: NOW + 1 })).toBe(`from (${NOW + 1}) must be before to (${NOW})`);
  });

  it('refuses a value of the wrong form naming the parameter', () => {
    const message = (query: Record<string, string>) => {
      const parsed = StatsQuery.safeParse(query);
      return parsed.success ? 'accepted' : parsed.error.issues[0]?.message;
    };
    expect(message({ granularity: 'minute' })).toBe('granularity must be hour or day');
    expect(message({ by: 'key' })).toBe('by must be result, executor or version');
    for (const value of ['-1', '1.5', '1e9', '', 'now', '17000000000']) expect(message({ from: value })).toMatch(/^from must be Unix seconds/);
    expect(message({ to: '1700000000000' })).toMatch(/^to must be Unix seconds: .* \(not milliseconds\)$/);
    expect(StatsQuery.parse({})).toEqual({ granularity: 'hour', by: 'result' });
  });
});

describe('GET /v1/projects/:id/stats handler', () => {
  it("answers a read of the project's counters in the window, zero-filled, and a 400 naming the parameter past a limit", async () => {
    const { store, handlers } = memoryApi();
    store.addStatsBucket(PROJECT_ID, 'hour', 'executor', stored(bucketStart(NOW, 'hour'), { Wave: 3 }));
    const ok = await invoke(handlers['get-stats'], apiEvent('get-stats', { projectId: PROJECT_ID, caller: DEFAULT_CALLER, query: { by: 'executor' } }));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ granularity: 'hour', by: 'executor', from: NOW - DAY, to: NOW });
    const buckets = ok.body.buckets as { t: number; total: number }[];
    expect(buckets).toHaveLength(25);
    expect(buckets.at(-1)).toEqual({ t: bucketStart(NOW, 'hour'), total: 3, counts: { Wave: 3 } });
    expect(buckets.slice(0, -1).every(({ total }) => total === 0)).toBe(true);
    const tooLong = await invoke(
      handlers['get-stats'],
      apiEvent('get-stats', { projectId: PROJECT_ID, caller: DEFAULT_CALLER, query: { from: String(NOW - 8 * DAY) } }),
    );
    expectError(tooLong, 400, /^from: a window of granularity hour spans at most 7 days \(168 buckets\)/);
  });
});
