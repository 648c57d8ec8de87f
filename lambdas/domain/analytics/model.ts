import type { AnalyticsEventName, EventData, KEY_ABUSE_PATTERNS, SingleEventData, SummarizedEventName } from '#schemas/events';
import type { ValidationResult } from '#schemas/telemetry';

/**
 * What the analytics detectors judge and what they fire, as the domain names it; the store keeps it in the
 * table (lambdas/adapters/telemetry-store.ts) and knows nothing of how it is judged.
 */

/**
 * An analytics event a detector fired (spec §6.1). `dedupKey` names the condition: the store writes an event
 * only once per key, so one condition fires one event however often it is detected.
 */
export interface AnalyticsEvent<N extends AnalyticsEventName = AnalyticsEventName> {
  name: N;
  projectId: string;
  dedupKey: string;
  occurredAt: number;
  data: EventData<N>;
}

export type KeyAbusePattern = (typeof KEY_ABUSE_PATTERNS)[number];

/** One key's validations within one UTC hour, as the store has counted them. */
export interface ValidationWindow {
  projectId: string;
  keyId: string;
  /** Start of the UTC hour counted. */
  hourStart: number;
  /** Validations in the hour by result. */
  counts: Record<ValidationResult, number>;
  distinctFingerprints: number;
  /** Latest validation of the hour seen so far: when the pattern was observed. */
  lastAt: number;
  /** Patterns whose event for this key and hour is already written. */
  reported: readonly KeyAbusePattern[];
}

/** A batch's validations of one key within one UTC hour, to add to its window. */
export interface ValidationDelta {
  projectId: string;
  keyId: string;
  hourStart: number;
  counts: Partial<Record<ValidationResult, number>>;
  /** Distinct hashed fingerprints seen in the batch. */
  fingerprints: readonly string[];
  lastAt: number;
}

/** The key's use cap as its record holds it; undefined for a key the project does not have. */
export interface KeyUsage {
  maxUses: number | null;
  currentUses: number;
}

/** One write's answer about a script hash it noted. */
export interface HashSighting {
  /** This write created the hash's record: the first time the hash was reported (or since its record expired). */
  isNew: boolean;
  /** Its clone_detected judgement is done: it is the script's original, or its event is written. */
  judged: boolean;
}

/** What the store keeps per script (and version) so that no judgement reads the script's hashes. */
export interface ScriptTally {
  /** The first hash reported for the script: the one that is not a clone. */
  original: string;
  /** Distinct hashes reported for the script, the original included. */
  distinctHashes: number;
}

export interface ExecutorRef {
  projectId: string;
  executor: string;
}

export interface ScriptRef {
  projectId: string;
  scriptId: string;
  versionId: string | null;
}

/** A project's alerts of one event name in one UTC hour: what the hourly alert budget counts. */
export interface AlertHourRef {
  projectId: string;
  name: SummarizedEventName;
  /** Start of the UTC hour of the ingest that raised them. */
  hourStart: number;
}

/** What one ingest adds to an alert hour beyond its posted alerts. */
export interface HeldAlerts {
  /** Conditions written as dedup memory only, for the hour's digest to count. */
  held: number;
  /** New names (executors, script hashes) a key reported past its hourly limit: neither tracked nor judged. */
  untracked: number;
  /** A few of the held conditions in full, kept only by the first ingest that holds any. */
  sample: readonly SingleEventData<SummarizedEventName>[];
  at: number;
}

/** An alert hour as the store has counted it, read by the hourly digest. */
export interface AlertHour extends AlertHourRef {
  /** Alert slots claimed: posted alerts, plus those past the budget that were held instead. */
  claimed: number;
  held: number;
  untracked: number;
  /** When the first and the last condition was held or name left untracked (the hour's start when none was). */
  firstAt: number;
  lastAt: number;
  sample: SingleEventData<SummarizedEventName>[];
}

/** One key's new names within one UTC hour, as the per-key novelty bound counts them. */
export interface KeyHourRef {
  projectId: string;
  keyId: string;
  hourStart: number;
}

/** What the per-key novelty bound counts: new executor names and new script hashes. */
export type NewNameKind = 'newExecutors' | 'newScriptHashes';
