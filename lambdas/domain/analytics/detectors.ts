import { DAY_SECONDS, HOUR_SECONDS, utcDate, utcHour } from '#domain/time';
import { type AnalyticsEventName, CLONE_SAMPLE_LIMIT, type EventData, type SingleEventData } from '#schemas/events';
import type { AnalyticsEvent, KeyAbusePattern, KeyUsage, ScriptTally, ValidationWindow } from './model';

/**
 * The four analytics detectors (spec §6.1), as pure functions from what the store keeps to the events to fire.
 * Each event names its condition with a dedup key, and the store writes it only if no event has that key yet, so
 * one condition fires one event however often it is detected.
 */

const analyticsEvent = <N extends AnalyticsEventName>(
  name: N,
  projectId: string,
  dedupKey: string,
  occurredAt: number,
  data: EventData<N>,
): AnalyticsEvent<N> => ({
  name,
  projectId,
  dedupKey,
  occurredAt,
  data,
});

// ---- execution_drop ----

const EXECUTION_DROP_THRESHOLD_PERCENT = 30;

export interface DailyExecutions {
  projectId: string;
  /** The UTC day judged (YYYY-MM-DD). */
  date: string;
  executions: number;
  /** Executions on the UTC day before `date`. */
  previousExecutions: number;
}

/**
 * execution_drop, judged once a day per project for the day that just ended (`date`) against the day before:
 * fires when the day before had executions and `date` had MORE than 30 % fewer, i.e.
 * `(previous − executions) × 100 > 30 × previous`, in exact integer arithmetic so a drop of exactly 30 % does
 * not fire and one of 30.01 % does. A day before with no executions never fires (there is nothing to fall from).
 * Dedup key: `date`, so rerunning the detector for a day fires nothing new.
 */
export function detectExecutionDrop(day: DailyExecutions, now: number): AnalyticsEvent | undefined {
  const { previousExecutions: previous, executions } = day;
  if (previous <= 0 || (previous - executions) * 100 <= EXECUTION_DROP_THRESHOLD_PERCENT * previous) return undefined;
  const dropPercent = Math.round(((previous - executions) / previous) * 10_000) / 100;
  return analyticsEvent('execution_drop', day.projectId, day.date, now, { date: day.date, executions, previousExecutions: previous, dropPercent });
}

// ---- new_executor ----

/** An executor unseen for longer than this (strictly) is new again. */
export const NEW_EXECUTOR_ABSENCE_SECONDS = 7 * DAY_SECONDS;

export interface ExecutorSightings {
  projectId: string;
  executor: string;
  /** When the store last saw the executor for this project, null if never (or so long ago the record expired). */
  lastSeenAt: number | null;
  /** When the batch saw it, in any order. */
  sightings: readonly number[];
}

/**
 * new_executor, judged at ingest: a sighting at `t` is a new appearance when the executor was never seen for the
 * project, or last seen at least 7 × 86400 + 1 s before `t` (`t − lastSeen > 604800`); last seen exactly
 * 7 days before is not new. Sightings are taken in time order, each moving last-seen forward, so a batch
 * spanning two absences can fire twice; a sighting older than last-seen is never new.
 * Dedup key: `<executor>#<UTC day of the appearance>`, so the same appearance reported twice fires once (two
 * genuine appearances are more than 7 days apart, never on the same day).
 * Returns the events and the executor's last-seen time after the batch.
 */
export function detectNewExecutor(input: ExecutorSightings): { events: AnalyticsEvent[]; lastSeenAt: number | null } {
  const events: AnalyticsEvent[] = [];
  let lastSeenAt = input.lastSeenAt;
  for (const at of [...input.sightings].sort((a, b) => a - b)) {
    if (lastSeenAt === null || at - lastSeenAt > NEW_EXECUTOR_ABSENCE_SECONDS) {
      const data = { executor: input.executor, firstSeenAt: at, previouslySeenAt: lastSeenAt };
      events.push(analyticsEvent('new_executor', input.projectId, `${input.executor}#${utcDate(at)}`, at, data));
    }
    lastSeenAt = lastSeenAt === null ? at : Math.max(lastSeenAt, at);
  }
  return { events, lastSeenAt };
}

// ---- key_abuse ----

/**
 * Thresholds of the key_abuse patterns, all counted within one UTC hour of one key:
 * - many_fingerprints: validated from MORE than 5 distinct client fingerprints (6 fires, 5 does not);
 * - revoked_key_burst: AT LEAST 10 validations answered `revoked` (10 fires, 9 does not);
 * - banned_key_burst: AT LEAST 10 validations answered `banned` (a banned key kept in use: shared, or its buyer
 *   ignores the reason);
 * - expired_key_burst: AT LEAST 10 validations answered `expired`;
 * - hwid_locked_burst: AT LEAST 10 validations answered `hwid_locked` (a machine-bound key tried on machines it
 *   is not bound to: shared, or its buyer switched machines and needs a reset);
 * - over_max_uses (only for a key with a use cap `max_uses`): MORE than `max_uses` validations answered `ok`
 *   (more uses in an hour than the key allows in its life), or any validation answered `over_limit` while the
 *   key record confirms `current_uses ≥ max_uses` (someone keeps using a spent key).
 */
export const KEY_ABUSE_THRESHOLDS = {
  windowSeconds: HOUR_SECONDS,
  distinctFingerprintsMoreThan: 5,
  revokedValidationsAtLeast: 10,
  bannedValidationsAtLeast: 10,
  expiredValidationsAtLeast: 10,
  hwidLockedValidationsAtLeast: 10,
} as const;

/**
 * key_abuse, judged at ingest on the hour's counts after the batch was added (see KEY_ABUSE_THRESHOLDS).
 * Dedup key: `<keyId>#<pattern>#<UTC hour, YYYY-MM-DDTHH>`, so each pattern fires at most once per key per hour;
 * a pattern the window records as reported is not judged again, so later batches of the hour write nothing.
 * Returns the events and their patterns, to record as reported once they are written.
 */
export function detectKeyAbuse(window: ValidationWindow, usage: KeyUsage | undefined): { events: AnalyticsEvent[]; patterns: KeyAbusePattern[] } {
  const { windowSeconds } = KEY_ABUSE_THRESHOLDS;
  const hits: SingleEventData<'key_abuse'>[] = [];
  const { counts } = window;
  if (window.distinctFingerprints > KEY_ABUSE_THRESHOLDS.distinctFingerprintsMoreThan) {
    hits.push({
      keyId: window.keyId,
      pattern: 'many_fingerprints',
      count: window.distinctFingerprints,
      threshold: KEY_ABUSE_THRESHOLDS.distinctFingerprintsMoreThan,
      windowSeconds,
    });
  }
  if (counts.revoked >= KEY_ABUSE_THRESHOLDS.revokedValidationsAtLeast) {
    hits.push({
      keyId: window.keyId,
      pattern: 'revoked_key_burst',
      count: counts.revoked,
      threshold: KEY_ABUSE_THRESHOLDS.revokedValidationsAtLeast,
      windowSeconds,
    });
  }
  if (counts.banned >= KEY_ABUSE_THRESHOLDS.bannedValidationsAtLeast) {
    hits.push({
      keyId: window.keyId,
      pattern: 'banned_key_burst',
      count: counts.banned,
      threshold: KEY_ABUSE_THRESHOLDS.bannedValidationsAtLeast,
      windowSeconds,
    });
  }
  if (counts.expired >= KEY_ABUSE_THRESHOLDS.expiredValidationsAtLeast) {
    hits.push({
      keyId: window.keyId,
      pattern: 'expired_key_burst',
      count: counts.expired,
      threshold: KEY_ABUSE_THRESHOLDS.expiredValidationsAtLeast,
      windowSeconds,
    });
  }
  if (counts.hwid_locked >= KEY_ABUSE_THRESHOLDS.hwidLockedValidationsAtLeast) {
    hits.push({
      keyId: window.keyId,
      pattern: 'hwid_locked_burst',
      count: counts.hwid_locked,
      threshold: KEY_ABUSE_THRESHOLDS.hwidLockedValidationsAtLeast,
      windowSeconds,
    });
  }
  const maxUses = usage?.maxUses ?? null;
  if (usage && maxUses !== null) {
    if (counts.ok > maxUses) {
      hits.push({ keyId: window.keyId, pattern: 'over_max_uses', count: counts.ok, threshold: maxUses, windowSeconds });
    } else if (counts.over_limit > 0 && usage.currentUses >= maxUses) {
      hits.push({ keyId: window.keyId, pattern: 'over_max_uses', count: usage.currentUses, threshold: maxUses, windowSeconds });
    }
  }
  const hour = utcHour(window.hourStart);
  const fresh = hits.filter((data) => !window.reported.includes(data.pattern));
  return {
    events: fresh.map((data) => analyticsEvent('key_abuse', window.projectId, `${window.keyId}#${data.pattern}#${hour}`, window.lastAt, data)),
    patterns: fresh.map((data) => data.pattern),
  };
}

// ---- clone_detected ----

export interface ScriptSightings {
  projectId: string;
  scriptId: string;
  versionId: string | null;
  /** The script's tally after the batch's new hashes were added (see TelemetryStore.tallyScript). */
  tally: ScriptTally;
  /** The batch's hashes of the script not judged yet, with when the batch first saw each. */
  unjudged: readonly { hash: string; firstSeenAt: number }[];
}

const byFirstSighting = (a: { hash: string; firstSeenAt: number }, b: { hash: string; firstSeenAt: number }) =>
  a.firstSeenAt - b.firstSeenAt || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0);

/** The hash a batch offers as the script's original, should the script have none yet: its earliest sighting (ties by hash). */
export function originalCandidate(sightings: readonly { hash: string; firstSeenAt: number }[]): string | undefined {
  return [...sightings].sort(byFirstSighting)[0]?.hash;
}

/**
 * clone_detected: the first hash reported for a script id (and version) is its original, kept in the script's tally
 * (set once, atomically, so concurrent ingests agree); every other distinct hash is a clone and fires once. Only
 * hashes not judged yet are looked at, and nothing reads the script's other hashes: an event carries the count of
 * distinct hashes and a sample of at most CLONE_SAMPLE_LIMIT, so its size and cost do not grow with the script.
 * Dedup key: `<scriptId>#<versionId, empty when none>#<hash>`.
 * Returns the events and the hashes to mark judged once they are written.
 */
export function detectClones(script: ScriptSightings): { events: AnalyticsEvent[]; judged: string[] } {
  const { original, distinctHashes } = script.tally;
  const ordered = [...script.unjudged].sort(byFirstSighting);
  const clones = ordered.filter((sighting) => sighting.hash !== original);
  const events = clones.map((clone) => {
    const sampleHashes = [...new Set([original, clone.hash, ...clones.map((other) => other.hash)])].slice(0, CLONE_SAMPLE_LIMIT);
    return analyticsEvent('clone_detected', script.projectId, `${script.scriptId}#${script.versionId ?? ''}#${clone.hash}`, clone.firstSeenAt, {
      scriptId: script.scriptId,
      versionId: script.versionId,
      newHash: clone.hash,
      originalHash: original,
      // A batch that failed between noting a hash and counting it leaves the count short; never show fewer than listed.
      distinctHashes: Math.max(distinctHashes, clones.length + 1),
      sampleHashes,
    });
  });
  return { events, judged: ordered.map((sighting) => sighting.hash) };
}
