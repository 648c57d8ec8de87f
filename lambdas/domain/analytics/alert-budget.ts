import { HOUR_SECONDS, utcHour } from '#domain/time';
import { type EventDigest, SUMMARIZED_EVENTS, SUMMARY_SAMPLE_LIMIT, type SummarizedEventName } from '#schemas/events';
import type { AlertHour, AnalyticsEvent } from './model';

/**
 * Alert floods, bounded across ingest batches. Coalescing (coalesce.ts) only sees one batch, so anyone holding a
 * key could pace checks (one new executor name each) and have every one posted: Discord takes about 30 posts a
 * minute per webhook, and the project's real alerts would queue behind the flood. Two bounds hold however the
 * checks are paced, because both are counted in the table with atomic ADDs, not in a batch:
 * - per project, event name and UTC hour, the first ALERTS_PER_HOUR alerts (a single condition or a batch's
 *   summary each) are posted; every later condition of the hour is kept as dedup memory only and counted, and after
 *   the hour one digest tells the owner how many there were, with a sample;
 * - per key and UTC hour, at most NEW_EXECUTORS_PER_KEY_PER_HOUR executor names and NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR
 *   script hashes the project has never seen are tracked (a record each, judged by the detectors); past that a key's
 *   new names are only counted, in the same digest, so a key cannot grow the table or the detectors' work at will.
 */

export const ALERTS_PER_HOUR = 3;
/** An honest key runs on one machine under one or two executors; a leaked one shows long before this many. */
export const NEW_EXECUTORS_PER_KEY_PER_HOUR = 5;
/** An honest key runs the project's current script, and maybe the one before it. */
export const NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR = 3;
/** The digest of an hour runs this long after the hour ends, so the hour's last telemetry has been ingested. */
export const DIGEST_DELAY_SECONDS = 2 * 60;

export const isBudgeted = (name: string): name is SummarizedEventName => (SUMMARIZED_EVENTS as readonly string[]).includes(name);

/**
 * Of `count` items whose atomic claim brought a counter to `total`, how many fit under `limit`: the claims before
 * this one took the counter's first slots, so concurrent claimers never admit more than `limit` together.
 */
export const admittedOf = (total: number, count: number, limit: number): number => Math.max(0, Math.min(count, limit - (total - count)));

/** The dedup key of an hour's digest; the conditions it stands for are remembered as summarized by it. */
export const digestKey = (hourStart: number): string => `digest#${utcHour(hourStart)}`;

/** The digest event of an alert hour that held conditions or left names untracked; dated at the hour's end. */
export function digestEvent(hour: AlertHour): AnalyticsEvent {
  const data: EventDigest<SummarizedEventName> = {
    hour: utcHour(hour.hourStart),
    // Claims past the budget were held, not posted.
    posted: Math.min(hour.claimed, ALERTS_PER_HOUR),
    held: hour.held,
    untracked: hour.untracked,
    firstAt: hour.firstAt,
    lastAt: hour.lastAt,
    sample: hour.sample.slice(0, SUMMARY_SAMPLE_LIMIT),
  };
  // The digest of one name, though the type system sees the digests of the three names as one union.
  return {
    name: hour.name,
    projectId: hour.projectId,
    dedupKey: digestKey(hour.hourStart),
    occurredAt: hour.hourStart + HOUR_SECONDS,
    data: data as AnalyticsEvent['data'],
  };
}
