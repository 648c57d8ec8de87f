import { InvalidInput } from '#domain/errors';
import { DAY_SECONDS, HOUR_SECONDS } from '#domain/time';
import { type STATS_DIMENSIONS, STATS_GRANULARITIES } from '#schemas/requests';
import type { StatsResponse } from '#schemas/responses';
import { type ExecutionRecord, VALIDATION_RESULTS, type ValidationRecord, type ValidationResult } from '#schemas/telemetry';

/**
 * Stats (DESIGN.md, "Stats"): a project's key checks by result, and its executions by executor and by version, in
 * UTC hour and day buckets. Ingest folds each batch into one counter addition per project, bucket and dimension
 * (foldStats); the answer zero-fills the window and keeps each bucket's 20 largest names (statsAnswer).
 */

export type StatsGranularity = (typeof STATS_GRANULARITIES)[number];
export type StatsDimension = (typeof STATS_DIMENSIONS)[number];

/**
 * The results a check is counted under: every validation result but `unknown`, since a value that is no key of the
 * project is not the project's traffic. Derived from the enum, so a result added there (`banned`) is counted too.
 */
export type StatsResult = Exclude<ValidationResult, 'unknown'>;
export const STATS_RESULTS: readonly StatsResult[] = VALIDATION_RESULTS.filter((result): result is StatsResult => result !== 'unknown');

/** Each granularity's bucket length, the window it may span, its default window and how long its buckets are kept. */
export const GRANULARITY = {
  hour: {
    seconds: HOUR_SECONDS,
    maxSpanSeconds: 7 * DAY_SECONDS,
    limit: '7 days (168 buckets)',
    defaultSpanSeconds: DAY_SECONDS,
    keptSeconds: 8 * DAY_SECONDS,
  },
  day: { seconds: DAY_SECONDS, maxSpanSeconds: 90 * DAY_SECONDS, limit: '90 days', defaultSpanSeconds: 30 * DAY_SECONDS, keptSeconds: 400 * DAY_SECONDS },
} as const satisfies Record<StatsGranularity, unknown>;

/** Names a bucket of the answer lists at most; the rest are summed under OTHER_NAME. */
export const TOP_NAMES = 20;
export const OTHER_NAME = '(other)';
/** What an execution that named no version is counted under, by version. */
export const NO_VERSION_NAME = '(none)';
/**
 * Names a counter item keeps one by one; a name first seen once a bucket holds this many is counted in its rest
 * (OTHER_NAME). Well past TOP_NAMES, and it bounds the item (and so each write's and each answer's cost) however many
 * executor names buyers make up.
 */
export const STORED_NAMES_PER_BUCKET = 32;

export const bucketStart = (at: number, granularity: StatsGranularity): number => at - (at % GRANULARITY[granularity].seconds);

/** The start of every bucket that overlaps [from, to), ascending. */
export function bucketStarts(from: number, to: number, granularity: StatsGranularity): number[] {
  const starts: number[] = [];
  for (let t = bucketStart(from, granularity); t < to; t += GRANULARITY[granularity].seconds) starts.push(t);
  return starts;
}

/** What one batch adds to one counter: a project's records of one bucket, by one dimension. */
export interface StatsDelta {
  granularity: StatsGranularity;
  dimension: StatsDimension;
  /** The bucket's start. */
  t: number;
  total: number;
  /** A Map, not an object: names are buyers' text, and `__proto__` is a fine executor name. */
  counts: Map<string, number>;
}

/**
 * A batch's records of one project and one UTC day from one delivery unit (a stream batch, a queue message, a direct
 * call): the store applies it at most once, so a redelivered unit adds nothing. `unitId` names the delivery unit.
 */
export interface StatsUnit {
  unitId: string;
  projectId: string;
  /** Start of the UTC day the records fall in: a unit's counters then fit one transaction (24 hours + 1 day, 3 ways). */
  day: number;
  deltas: StatsDelta[];
}

/** One counter as the store holds it: its names one by one, and the rest counted past STORED_NAMES_PER_BUCKET. */
export interface StoredStatsBucket {
  t: number;
  total: number;
  counts: Record<string, number>;
  rest: number;
}

/** The records of one project (and day) folded into one delta per granularity, bucket and dimension. */
export function foldStats(validations: readonly ValidationRecord[], executions: readonly ExecutionRecord[]): StatsDelta[] {
  const deltas = new Map<string, StatsDelta>();
  const count = (granularity: StatsGranularity, dimension: StatsDimension, at: number, name: string) => {
    const t = bucketStart(at, granularity);
    const id = `${granularity}#${dimension}#${t}`;
    let delta = deltas.get(id);
    if (!delta) {
      delta = { granularity, dimension, t, total: 0, counts: new Map() };
      deltas.set(id, delta);
    }
    delta.total++;
    delta.counts.set(name, (delta.counts.get(name) ?? 0) + 1);
  };
  for (const granularity of STATS_GRANULARITIES) {
    for (const record of validations) if (isStatsResult(record.result)) count(granularity, 'result', record.at, record.result);
    for (const record of executions) {
      count(granularity, 'executor', record.at, record.executor);
      count(granularity, 'version', record.at, record.versionId ?? NO_VERSION_NAME);
    }
  }
  return [...deltas.values()];
}

const isStatsResult = (result: ValidationResult): result is StatsResult => (STATS_RESULTS as readonly string[]).includes(result);

export interface StatsWindow {
  granularity: StatsGranularity;
  by: StatsDimension;
  from: number;
  to: number;
}

/**
 * The window a request asks for, its defaults filled in (`to` now, `from` a day or 30 days before `to`), or a 400
 * naming the parameter: `from` not before `to`, or a span past the granularity's limit.
 */
export function statsWindow(
  query: { granularity: StatsGranularity; by: StatsDimension; from?: number | undefined; to?: number | undefined },
  now: number,
): StatsWindow {
  const { granularity, by } = query;
  const limits = GRANULARITY[granularity];
  const to = query.to ?? now;
  const from = query.from ?? Math.max(0, to - limits.defaultSpanSeconds);
  if (from >= to) throw new InvalidInput(`from (${from}) must be before to (${to})`);
  if (to - from > limits.maxSpanSeconds) {
    throw new InvalidInput(
      `from: a window of granularity ${granularity} spans at most ${limits.limit}; from ${from} to ${to} is ${describeSpan(to - from)}. Move from or to closer, or ask for granularity day`,
    );
  }
  return { granularity, by, from, to };
}

const describeSpan = (seconds: number) => (seconds % DAY_SECONDS === 0 ? `${seconds / DAY_SECONDS} days` : `${(seconds / DAY_SECONDS).toFixed(2)} days`);

/**
 * The answer: one bucket for every hour (or day) overlapping the window, ascending, zero where nothing was counted.
 * By result, every result is named (0 included); by executor or version, a bucket names its TOP_NAMES largest
 * (ties by name) and sums the rest, with what the counter kept as its rest, under OTHER_NAME.
 */
export function statsAnswer(window: StatsWindow, stored: readonly StoredStatsBucket[]): StatsResponse {
  const byStart = new Map(stored.map((bucket) => [bucket.t, bucket]));
  const buckets = bucketStarts(window.from, window.to, window.granularity).map((t) => {
    const bucket = byStart.get(t);
    return { t, total: bucket?.total ?? 0, counts: window.by === 'result' ? resultCounts(bucket) : topNames(bucket) };
  });
  return { ...window, buckets };
}

function resultCounts(bucket: StoredStatsBucket | undefined): Record<string, number> {
  return { ...Object.fromEntries(STATS_RESULTS.map((result) => [result, 0])), ...bucket?.counts };
}

function topNames(bucket: StoredStatsBucket | undefined): Record<string, number> {
  if (!bucket) return {};
  const ranked = Object.entries(bucket.counts)
    .filter(([, n]) => n > 0)
    .sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0));
  const counts: Record<string, number> = Object.fromEntries(ranked.slice(0, TOP_NAMES));
  const other = ranked.slice(TOP_NAMES).reduce((sum, [, n]) => sum + n, bucket.rest);
  // A name that is literally "(other)" shares the rest's slot: the answer has one key of that name.
  if (other > 0) counts[OTHER_NAME] = (counts[OTHER_NAME] ?? 0) + other;
  return counts;
}
