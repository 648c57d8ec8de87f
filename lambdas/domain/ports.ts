import type { ExecutionRecord, ValidationRecord } from '#schemas/telemetry';
import type { AnalyticsEvent, ExecutorRef, HashSighting, KeyAbusePattern, KeyUsage, ScriptRef, ScriptTally, ValidationDelta, ValidationWindow } from './analytics';
import type { AuditDetails, AuditEntry, AuditStatus } from './audit';
import type { CountedCheck, KeyState } from './key-check';
import type { Key, Project, Version, Webhook } from './model';
import type { TokenGrant } from './tokens';

/**
 * What the service's rules and handlers need from storage, as ports. `lambdas/store/` implements them on the one
 * DynamoDB table; tests and the local stack pass the same implementations, or in-memory ones.
 */

export type RevokeOutcome = 'revoked' | 'already_revoked' | 'not_found';

/** What the API's rules need from storage. The DynamoDB repository implements it; tests may fake it. */
export interface ProjectStore {
  getProject(projectId: string): Promise<Project | undefined>;
  /** Keys with issue sequence in (afterSeq, afterSeq + limit], in issue order. */
  listKeysAfter(projectId: string, afterSeq: number, limit: number): Promise<Key[]>;
  /**
   * Revoke one key; tells apart a key that was already revoked from one that does not exist. `entry` is written in
   * the same transaction as the revoke, so it exists exactly when this call revoked the key.
   */
  revokeKey(projectId: string, keyId: string, now: number, entry?: AuditEntry): Promise<RevokeOutcome>;
  /** Active keys carrying `watermark` in this project, in pages as the index returns them. */
  activeKeyIdsWithWatermark(projectId: string, watermark: string): AsyncIterable<string[]>;
  /** Revoke the key only if it is still active; true when this call made the change. */
  revokeIfActive(projectId: string, keyId: string, now: number): Promise<boolean>;
  listVersions(projectId: string): Promise<Version[]>;
  /**
   * Point the project at `versionId` atomically with the check that the version is the project's; false when it is
   * not. `entry` is written in the same transaction.
   */
  setCurrentVersion(projectId: string, versionId: string, entry?: AuditEntry): Promise<boolean>;
  listWebhooks(projectId: string): Promise<Webhook[]>;
}

export interface TokenStore {
  /** Whose token a hash is, its id and scope; undefined for a token that does not exist or was revoked. */
  findToken(tokenHash: string): Promise<TokenGrant | undefined>;
}

/** Where audit entries are written (see #domain/audit). */
export interface AuditLog {
  /** Write an entry whole, on its own. */
  record(entry: AuditEntry): Promise<void>;
  /** Settle an entry written as `started`: its final status and outcome. */
  finish(entry: AuditEntry, status: Exclude<AuditStatus, 'started'>, outcome: AuditDetails): Promise<void>;
}

export interface RateLimitStore {
  /**
   * Count one request in the fixed window of `windowSeconds` opened at `windowStart`, unless `limit` is already
   * reached. Returns the count after this request, or undefined when the request was refused.
   */
  countRequest(bucket: string, window: { start: number; seconds: number }, limit: number): Promise<number | undefined>;
}

// ---- The loader key check ----

/**
 * Judge a key and, when it may run, count one use, in one atomic step on the key's own item; the key's own
 * per-minute limit is kept in the same step. `keyId` is derived from `keyHash` (see #domain/key-values).
 */
export interface KeyCheckStore {
  checkAndCount(check: { projectId: string; keyId: string; keyHash: string; now: number; perKeyPerMinute: number }): Promise<CountedCheck>;
  /** The key's state as last written (a strongly consistent read), counting nothing; undefined when there is no such key. */
  peek(keyId: string): Promise<KeyState | undefined>;
}

// ---- Script delivery ----

/** One version's script, as it is stored: versions are immutable, so is the object. */
export interface ScriptObject {
  projectId: string;
  versionId: string;
}

/** Where version scripts live (S3 in AWS, s3rver locally). */
export interface ScriptStore {
  put(object: ScriptObject, body: Uint8Array): Promise<void>;
  /** The stored bytes, or undefined when there is no such object. */
  get(object: ScriptObject): Promise<Uint8Array | undefined>;
  delete(object: ScriptObject): Promise<void>;
}

/** What a script fetch reads of the table besides the key. */
export interface ScriptVersionStore {
  /** The project's current version pointer, read with strong consistency; undefined for no version or no project. */
  currentVersionId(projectId: string): Promise<string | undefined>;
  /** A version item of the project (immutable once written); undefined when there is none. */
  version(projectId: string, versionId: string): Promise<{ versionNumber: number; sha256: string } | undefined>;
}

/** Where the loader check's telemetry goes, to be ingested off the answer's path (a queue in AWS). */
export interface TelemetrySink {
  report(records: readonly (ValidationRecord | ExecutionRecord)[]): Promise<void>;
}

// ---- Telemetry ----

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

  /** Note a sighting of a script hash (one write); says whether the write created its record and whether it is judged. */
  recordScriptHash(sighting: ScriptRef & { hash: string; firstSeenAt: number; lastSeenAt: number }): Promise<HashSighting>;
  /**
   * Add `newHashes` to the script's count of distinct hashes and keep it alive until `seenAt` + its retention, in one
   * atomic write; the script's original becomes `candidate` only if it has none yet. Returns the tally after the write.
   */
  tallyScript(script: ScriptRef & { newHashes: number; candidate: string; seenAt: number }): Promise<ScriptTally>;
  /** Note that these hashes' clone_detected judgement is done (the original, or clones whose event is written). */
  markHashesJudged(script: ScriptRef, hashes: readonly string[]): Promise<void>;

  /** Add a batch's validations to the key's hourly window; returns the window's totals after the addition. */
  addValidations(delta: ValidationDelta): Promise<ValidationWindow>;
  /** Note that these patterns' events for the window's key and hour are written. */
  markKeyAbuseReported(window: Pick<ValidationWindow, 'projectId' | 'keyId' | 'hourStart'>, patterns: readonly KeyAbusePattern[]): Promise<void>;
  /** Use cap of each key as its record holds it, undefined for a key that is not the project's; in input order. */
  keyUsage(keys: readonly { projectId: string; keyId: string }[]): Promise<(KeyUsage | undefined)[]>;

  /**
   * Write the event unless its dedup key already fired (it is kept as the dedup memory past `now`); true when this
   * call wrote it. With `summarizedBy` (a summary event's dedup key) it is written as dedup memory only: the
   * summary is what gets posted, not this event.
   */
  putEvent(event: AnalyticsEvent, now: number, summarizedBy?: string): Promise<boolean>;
  /** The events whose dedup key has not fired yet (by themselves or in a summary), in input order. */
  notYetFired(events: readonly AnalyticsEvent[]): Promise<AnalyticsEvent[]>;
  projectExists(projectId: string): Promise<boolean>;
}

// ---- Webhook delivery ----

/** A webhook configuration as the fan-out reads it (spec §2.3 fields it needs). */
export interface WebhookTarget {
  id: string;
  url: string;
  /** The spec's JSON-encoded array of event names, unparsed. */
  events: string;
  enabled: number;
}

export interface FanoutStore {
  /** Every webhook configuration of the project, enabled or not. */
  webhooksOf(projectId: string): Promise<WebhookTarget[]>;
  projectName(projectId: string): Promise<string | undefined>;
}

export type ClaimResult =
  | { outcome: 'claimed'; token: string }
  /** Posted already: this delivery is a duplicate. */
  | { outcome: 'sent' }
  /** Another attempt holds the claim; it may be taken over in `retryInSeconds` if that attempt died. */
  | { outcome: 'held'; retryInSeconds: number };

export interface DeliveryStore {
  /** The webhook's current state, or undefined when it no longer exists. */
  webhookState(projectId: string, webhookId: string): Promise<{ enabled: number; url: string } | undefined>;
  /**
   * Claim a delivery id before posting. A claim in state 'sending' older than `staleAfterSeconds` belongs to
   * an attempt that died between claim and post, and is taken over.
   */
  claimDelivery(deliveryId: string, now: number, staleAfterSeconds: number): Promise<ClaimResult>;
  /** Record the post as done; false when the claim was taken over meanwhile. */
  markSent(deliveryId: string, token: string, now: number): Promise<boolean>;
  /** Give the claim up after a post that did not get through, so the retry can claim at once. */
  releaseClaim(deliveryId: string, token: string): Promise<void>;
  /** Set `enabled` to 0 if the config still has this url and is enabled; true when this call disabled it. */
  disableWebhook(projectId: string, webhookId: string, url: string, now: number): Promise<boolean>;
}
