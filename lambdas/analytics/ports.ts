import type { EventItem } from '#events/event-types';
import type { KeyAbusePattern, KeyUsage, KnownHash, ValidationWindow } from './detectors';
import type { ValidationResult } from './telemetry';

/** What ingest and the detectors need from storage; `lambdas/store/telemetry-store.ts` implements it on the table. */
export interface TelemetryStore {
  /** Add executions to the per-project daily counters. */
  addExecutions(count: { projectId: string; date: string; executions: number }): Promise<void>;
  /** Executions per project on a UTC day, for every project that had any. */
  executionsOn(date: string): Promise<Map<string, number>>;

  /** Last-seen time of each executor for its project (null: not seen, or its record expired), in input order. */
  executorsLastSeen(executors: readonly ExecutorRef[]): Promise<(number | null)[]>;
  /** Move the executor's last-seen time forward to `lastSeenAt` (never back). */
  recordExecutorSeen(executor: ExecutorRef & { lastSeenAt: number }): Promise<void>;

  /** Note a sighting of a script hash; returns the hash as the store now knows it. */
  recordScriptHash(sighting: ScriptRef & { hash: string; firstSeenAt: number; lastSeenAt: number }): Promise<KnownHash>;
  /** Every hash known for the script (and version). */
  scriptHashes(script: ScriptRef): Promise<KnownHash[]>;
  markHashesClassified(script: ScriptRef, hashes: readonly string[]): Promise<void>;

  /** Add a batch's validations to the key's hourly window; returns the window's totals after the addition. */
  addValidations(delta: ValidationDelta): Promise<ValidationWindow>;
  /** Note that these patterns' events for the window's key and hour are written. */
  markKeyAbuseReported(window: Pick<ValidationWindow, 'projectId' | 'keyId' | 'hourStart'>, patterns: readonly KeyAbusePattern[]): Promise<void>;
  /** Use cap of each key as its record holds it, undefined for a key that is not the project's; in input order. */
  keyUsage(keys: readonly { projectId: string; keyId: string }[]): Promise<(KeyUsage | undefined)[]>;

  /** Write the event unless its dedup key already fired; true when this call wrote it. */
  putEvent(event: EventItem): Promise<boolean>;
  projectExists(projectId: string): Promise<boolean>;
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

export interface ValidationDelta {
  projectId: string;
  keyId: string;
  hourStart: number;
  counts: Partial<Record<ValidationResult, number>>;
  /** Distinct hashed fingerprints seen in the batch. */
  fingerprints: readonly string[];
  lastAt: number;
}
