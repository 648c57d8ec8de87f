import type {
  AlertHour,
  AlertHourRef,
  AnalyticsEvent,
  ExecutorRef,
  HashSighting,
  HeldAlerts,
  KeyAbusePattern,
  KeyHourRef,
  KeyUsage,
  NewNameKind,
  ScriptRef,
  ScriptTally,
  ValidationDelta,
  ValidationWindow,
} from '#domain/analytics/model';
import type { ExecutionRecord, ValidationRecord } from '#schemas/telemetry';
import type { StatsDimension, StatsGranularity, StatsUnit, StoredStatsBucket } from './analytics/stats';
import type { AuditDetails, AuditEntry, AuditStatus } from './audit-entry';
import type { BlacklistAdd, BlacklistEntry, BlacklistTarget } from './blacklist-model';
import type { ConsoleSession } from './console-session';
import type { CheckReport, CheckWrite, KeyState } from './key-check-model';
import type { Key, KeyDetail, Project, Version, Webhook } from './model';
import type { KeyBan } from './refusal';
import type { NewToken, TokenGrant } from './token-model';

/**
 * What the service's rules and handlers need from storage, as ports. `lambdas/adapters/` implements them on the one
 * DynamoDB table; tests and the local stack pass the same implementations, or in-memory ones.
 */

export type RevokeOutcome = 'revoked' | 'already_revoked' | 'not_found';

/** What the API's rules need from storage. The DynamoDB repository implements it; tests may fake it. */
export interface ProjectStore {
  getProject(projectId: string): Promise<Project | undefined>;
  /** Keys with issue sequence in (afterSeq, afterSeq + limit], in issue order. */
  listKeysAfter(projectId: string, afterSeq: number, limit: number): Promise<Key[]>;
  /**
   * The keys carrying `watermark` in this project (revoked ones too), in issue order: `limit` of them from
   * position `offset` among them, and how many there are. Costs O(matching keys), whatever the project's size.
   */
  listKeysWithWatermark(projectId: string, watermark: string, offset: number, limit: number): Promise<{ keys: Key[]; total: number }>;
  /**
   * Revoke one key; tells apart a key that was already revoked from one that does not exist. `entry` is written in
   * the same transaction as the revoke, so it exists exactly when this call revoked the key. The key records who
   * revoked it (`revoked_by`): the entry's token id, or its source where it has none.
   */
  revokeKey(projectId: string, keyId: string, now: number, entry?: AuditEntry): Promise<RevokeOutcome>;
  /**
   * Every key carrying `watermark` in this project, revoked ones too, in pages as the index returns them: no key is
   * read, so a caller that writes each one conditionally (revokeIfActive) makes one request per key.
   */
  keyIdsWithWatermark(projectId: string, watermark: string): AsyncIterable<string[]>;
  /**
   * Revoke the key only if it is this project's and still active, recording `by` as who did; true when this call
   * made the change. One conditional write, whatever the key's state: a key already revoked costs its failed condition.
   */
  revokeIfActive(projectId: string, keyId: string, now: number, by?: string): Promise<boolean>;
  /** Of these keys (at most 100), those not revoked, read consistently in one request. */
  activeAmong(keyIds: readonly string[]): Promise<string[]>;
  listVersions(projectId: string): Promise<Version[]>;
  /**
   * Point the project at `versionId` atomically with the check that the version is the project's; false when it is
   * not. `entry` is written in the same transaction.
   */
  setCurrentVersion(projectId: string, versionId: string, entry?: AuditEntry): Promise<boolean>;
  listWebhooks(projectId: string): Promise<Webhook[]>;
  /** The project's stored counters of one granularity and dimension whose buckets start in [first, last]: one Query. */
  statsBuckets(query: StatsBucketsQuery): Promise<StoredStatsBucket[]>;
}

export interface StatsBucketsQuery {
  projectId: string;
  granularity: StatsGranularity;
  by: StatsDimension;
  first: number;
  last: number;
}

export interface TokenStore {
  /** Whose token a hash is, its id and scope; undefined for a token that does not exist or was revoked. */
  findToken(tokenHash: string): Promise<TokenGrant | undefined>;
}

/**
 * Where tokens are created and revoked, each write with the owner's audit entry in one transaction; the entry is
 * made by the token rules (#domain/tokens issueToken, revokeToken), the store only writes it.
 */
export interface TokenWrites {
  /** Put the new token's items and `entry`. */
  saveToken(token: NewToken, entry: AuditEntry): Promise<void>;
  /** Remove a working token's hash and place in its owner's list, mark it revoked at `now`, and put `entry`; false (nothing written) when it was revoked meanwhile. */
  revokeToken(token: TokenGrant & { tokenHash: string }, now: number, entry: AuditEntry): Promise<boolean>;
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
  /** Whether the window already holds `limit` requests, counting nothing. */
  isFull(bucket: string, window: { start: number; seconds: number }, limit: number): Promise<boolean>;
}

// ---- Selling keys ----

/** A key as issuance decided it, ready to store: its value is hashed already, so no raw value reaches a store. */
export interface NewKey {
  id: string;
  keyHash: string;
  watermark: string;
}

/** Keys issued together: every key of a batch shares all but its id, hash and watermark. */
export interface KeyBatch {
  projectId: string;
  keys: readonly NewKey[];
  tier: string;
  maxUses: number | null;
  /** null: the keys are not bound to machines. */
  maxFingerprints: number | null;
  note: string | null;
  discordId: string | null;
  issuedAt: number;
  expiresAt: number;
}

/** A shop's order as the table remembers it: enough to derive its keys again, never a raw value. */
export interface IssueOrder {
  projectId: string;
  orderId: string;
  /** SHA-256 of the request's meaning (its parsed body without `order_id`): a repeat must send the same. */
  bodyHash: string;
  /** The issue sequence number of the order's first key; its keys hold the next `count` numbers. */
  firstSeq: number;
  count: number;
  issuedAt: number;
  /**
   * The id of the order's first key as the first call derived it: a repeat that derives another (the stack's key
   * secret was replaced) must not answer, let alone write, keys the order never had.
   */
  firstKeyId: string;
  /**
   * The id of the token that placed the order (`tok_…`): only it may repeat the order. Absent on orders placed
   * before orders were bound to tokens (and on the dashboard's), which any token of the owner may still repeat.
   */
  tokenId?: string;
}

/** What a first call records of an order besides the numbers the store gives it. */
export type NewOrder = Pick<IssueOrder, 'orderId' | 'bodyHash' | 'tokenId'>;

export type IssueOutcome = { outcome: 'issued'; firstSeq: number } | { outcome: 'order_exists'; order: IssueOrder };

export interface KeyStore {
  /** The order recorded under this id in the project, read consistently. */
  findOrder(projectId: string, orderId: string): Promise<IssueOrder | undefined>;
  /**
   * Give the batch the next numbers of the project's dense issue sequence and write its keys. With `order`, the
   * order is recorded atomically with the numbers; when another call recorded the same order id first, nothing is
   * written and that order is returned.
   */
  issue(batch: KeyBatch, order?: NewOrder): Promise<IssueOutcome>;
  /** Write those keys of an order's batch (numbered from `firstSeq`) the table lacks; how many it wrote. */
  completeOrder(batch: KeyBatch, firstSeq: number): Promise<number>;
  /** The key in detail, or undefined for no key or another project's. */
  getKey(projectId: string, keyId: string): Promise<KeyDetail | undefined>;
  /** Unbind every machine of the project's key in one write; the number unbound, undefined for no such key. */
  resetFingerprints(projectId: string, keyId: string): Promise<number | undefined>;
  /** Set (or with null, lift) the ban of the project's key in one conditional write; false for no such key. */
  setBan(projectId: string, keyId: string, ban: KeyBan | null): Promise<boolean>;
  /**
   * Move the project's key's `expires_at` to the later of `now` and its old value, plus `seconds` (or to
   * `lifetimeAt` for a lifetime extension), in one conditional write that reads nothing first; the new
   * `expires_at`, undefined for no such key.
   */
  extendExpiry(projectId: string, keyId: string, extension: { seconds: number; now: number } | { lifetimeAt: number }): Promise<number | undefined>;
  /** Apply an edit to the project's key in one conditional write; the key in detail after it, undefined for no such key. */
  editKey(projectId: string, keyId: string, edit: KeyEdit): Promise<KeyDetail | undefined>;
  /** Ids of the project's keys linked to this Discord id (the byDiscordId index), in issue order. */
  keyIdsByDiscordId(projectId: string, discordId: string): Promise<string[]>;
  /** The project's keys among `keyIds` in detail, in the order given; ids of no key or another project's are left out. */
  keyDetails(projectId: string, keyIds: readonly string[]): Promise<KeyDetail[]>;
}

/** What a PATCH of a key changes: each field present is set, null removes it; absent fields stay as they are. */
export interface KeyEdit {
  note?: string | null;
  discordId?: string | null;
  maxUses?: number | null;
  maxFingerprints?: number | null;
}

// ---- Buyer blacklist ----

/** A project's buyer blacklist (#domain/blacklist decides; the store says what the table holds and did). */
export interface BlacklistStore {
  /** The project's entry naming this buyer, read consistently (one GetItem); undefined when none. */
  findEntry(projectId: string, target: BlacklistTarget): Promise<BlacklistEntry | undefined>;
  /**
   * Add the entry at the end of the project's dense positions, atomically with the count; `exists` (with the entry
   * kept) when the buyer is listed already, `full` when the project holds `maxEntries`.
   */
  addEntry(projectId: string, entry: BlacklistEntry, maxEntries: number): Promise<BlacklistAdd>;
  /** Remove the entry naming this buyer (the last position moves into its place); the entry removed, undefined when none. */
  removeEntry(projectId: string, target: BlacklistTarget): Promise<BlacklistEntry | undefined>;
  /** Entries at positions offset+1 … offset+limit (one Query, whatever the offset), and how many the project holds. */
  listEntries(projectId: string, offset: number, limit: number): Promise<{ entries: BlacklistEntry[]; total: number }>;
  /**
   * Ids of the project's keys this buyer holds, at most `limit`: the keys the machine was ever bound to, the keys
   * linked to the Discord id; none for an email hash (no key carries one).
   */
  keyIdsOfBuyer(projectId: string, target: BlacklistTarget, limit: number): Promise<string[]>;
  /**
   * Ban each of the project's keys among `keyIds` without end, with `reason`, unless it is revoked or banned for
   * good already; how many this call banned.
   */
  banKeys(projectId: string, keyIds: readonly string[], reason: string): Promise<number>;
}

// ---- Discord ----

/** Where a project's Discord link lives (the project item). */
/** A project's linked Discord application (lambdas/domain/discord/link.ts makes it). */
export interface DiscordLink {
  /** 64 lowercase hex: the application's Ed25519 public key. */
  publicKey: string;
  applicationId: string | null;
  resetCooldown: number;
  linkedAt: number;
}

export interface DiscordLinkStore {
  /** The project's link, read consistently; undefined for no link or no project. */
  discordLink(projectId: string): Promise<DiscordLink | undefined>;
  /** Replace the project's link; false when there is no such project. */
  setDiscordLink(projectId: string, link: DiscordLink): Promise<boolean>;
  /** Remove the link (none is fine); false when there is no such project. */
  removeDiscordLink(projectId: string): Promise<boolean>;
}

/** A key as a Discord reply speaks of it: its state, never its value. */
export interface DiscordKeyView {
  id: string;
  projectId: string;
  keyHash: string;
  discordId: string | null;
  revoked: boolean;
  expiresAt: number;
  maxUses: number | null;
  currentUses: number;
  /** null: not bound to machines. */
  maxFingerprints: number | null;
  boundMachines: number;
  /** When a buyer last reset its machines in Discord (the cooldown runs from it); null when never. */
  hwidResetAt: number | null;
}

/**
 * A conditional write's result, with the key as the table holds it after the write (undefined: no such item); after
 * a machine reset, `boundMachines` is how many it unbound.
 */
export type ConditionalWrite = { written: true; key: DiscordKeyView } | { written: false; key: DiscordKeyView | undefined };

/** The writes and reads the Discord commands make on key items; the rules that judge them are #domain/discord/interactions. */
export interface DiscordKeyStore extends DiscordLinkStore {
  /**
   * Link the key to `discordId` in one conditional write: only a key of this project with this hash, not revoked,
   * not expired at `now`, with no Discord id or this one already.
   */
  linkKeyToUser(key: { projectId: string; keyId: string; keyHash: string }, discordId: string, now: number): Promise<ConditionalWrite>;
  /** The user's keys of this project (looked up by the byDiscordId index, each read consistently and checked to still be theirs). */
  keysOfUser(projectId: string, discordId: string): Promise<DiscordKeyView[]>;
  /**
   * Unbind every machine of the user's key and start its cooldown, in one conditional write: only a key of this
   * project still linked to `discordId`, with a machine bound, last reset in Discord at or before `cooldownCutoff`.
   */
  resetMachinesOfUser(key: { projectId: string; keyId: string }, discordId: string, now: number, cooldownCutoff: number): Promise<ConditionalWrite>;
}

/** The stack's secret that order keys are derived under (AWS Secrets Manager; a file under .local/ locally). */
export interface KeySecret {
  get(): Promise<Uint8Array>;
}

// ---- The loader key check ----

/** One check of a key: `keyId` is derived from `keyHash` (see #domain/key-values). */
export interface KeyCheck {
  projectId: string;
  keyId: string;
  keyHash: string;
  /** The machine asking: SHA-256 hex of its id, as the loader sends it. */
  fingerprint: string;
  now: number;
  perKeyPerMinute: number;
  /** What a counted check tells the detectors, written with the use it counts (a refusal writes none of it). */
  report: CheckReport;
  /**
   * The key rule for this check (refusalFor's verdict): a write the table refused on a state the rule refuses too is
   * not tried again in another form, so a refusal costs one write.
   */
  mayRun(key: KeyState | undefined): boolean;
}

/**
 * Count one use of a key in one atomic step on the key's own item, on the condition that the key may run (the
 * rule of refusalOf, as the table states it) and that its own per-minute window has room; say what was done and
 * what the item held. The store decides nothing: checkKey reads the answer.
 */
export interface KeyCheckStore {
  /**
   * A key bound to machines (`max_fingerprints`) also binds `fingerprint` in the same write when it has room; with
   * none, nothing is counted (refusalOf says KEY_HWID_LOCKED of the state returned).
   */
  checkAndCount(check: KeyCheck): Promise<CheckWrite>;
  /** The key's state as last written (a strongly consistent read), counting nothing; undefined when there is no such key. */
  peek(keyId: string): Promise<KeyState | undefined>;
  /** The watermark a served script is stamped with (set at issue, never changed); undefined when there is no such key. */
  watermarkOf(keyId: string): Promise<string | undefined>;
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

/** What ingest and the detectors need from storage; `lambdas/adapters/telemetry-store.ts` implements it on the table. */
export interface TelemetryStore {
  /**
   * Add units of one project and day to its stats counters, each unit at most once: a unit already applied (a
   * redelivery) adds nothing, and a unit's counters move together or not at all.
   */
  addStats(units: readonly StatsUnit[], now: number): Promise<void>;
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
  /** The SHA-256 of each version's script as uploaded, undefined for a version the project does not have; in input order. */
  versionHashes(versions: readonly { projectId: string; versionId: string }[]): Promise<(string | undefined)[]>;

  /** Claim `alerts` slots of the hour's alert budget in one atomic count; returns the hour's claims after this one. */
  claimAlerts(hour: AlertHourRef, alerts: number): Promise<number>;
  /** Add held conditions and untracked names to the hour, for its digest. */
  holdAlerts(hour: AlertHourRef, held: HeldAlerts): Promise<void>;
  /** Every alert hour starting at `hourStart` that held conditions or left names untracked. */
  heldAlerts(hourStart: number): Promise<AlertHour[]>;
  /** Add `count` new names of `kind` to the key's hour in one atomic count; returns the hour's count after this one. */
  countNewNames(hour: KeyHourRef, kind: NewNameKind, count: number): Promise<number>;
  /** Whether each script hash has a record already (it was reported before), in input order. */
  scriptHashesKnown(hashes: readonly (ScriptRef & { hash: string })[]): Promise<boolean[]>;
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

// ---- The publisher console ----

/** A session in its owner's list: its hash (the store's key), id, token and times. */
export interface ListedSession {
  sessionHash: string;
  sessionId: string;
  tokenId: string;
  createdAt: number;
  lastUsedAt: number;
}

/**
 * The console's sessions, by the hash of their cookie's secret (#domain/console-session), and listed under their
 * owner (each with its token), so an owner sees and ends them and a token's oldest can be found.
 */
export interface SessionStore {
  create(sessionHash: string, session: ConsoleSession): Promise<void>;
  get(sessionHash: string): Promise<ConsoleSession | undefined>;
  touch(sessionHash: string, session: ConsoleSession, now: number): Promise<void>;
  /** The session and its place in its owner's list. */
  delete(sessionHash: string, session: Pick<ConsoleSession, 'ownerId' | 'tokenId' | 'createdAt'>): Promise<void>;
  /** The owner's sessions (of one token when `tokenId` is given), oldest first, live or not yet swept. */
  sessionsOf(ownerId: string, tokenId?: string): Promise<ListedSession[]>;
}

/** What the console reads besides the owner API's stores. */
export interface ConsoleReads {
  /** The owner's projects (their place in the owner's list, then the projects), by name. */
  projectsOf(ownerId: string): Promise<Project[]>;
  /** Key ids in issue order after `afterSeq` (the byIssueOrder index), `limit` of them, with each one's number. */
  keyIdsAfter(projectId: string, afterSeq: number, limit: number): Promise<{ keyId: string; seq: number }[]>;
  /** Ids of the project's keys carrying the watermark (the byWatermark index), at most `limit`. */
  keyIdsWithWatermark(projectId: string, watermark: string, limit: number): Promise<string[]>;
  /** Ids of the project's keys with a note word starting with `prefix` (the note-word items), at most `limit`. */
  keyIdsWithNoteWord(projectId: string, prefix: string, limit: number): Promise<string[]>;
}

/** A console upload waiting for its commit: what the browser promised to PUT. */
export interface PendingUpload {
  uploadId: string;
  projectId: string;
  sizeBytes: number;
  sha256: string;
  notes: string;
  createdAt: number;
}

export interface UploadStore {
  save(upload: PendingUpload): Promise<void>;
  find(projectId: string, uploadId: string): Promise<PendingUpload | undefined>;
  remove(projectId: string, uploadId: string): Promise<void>;
}

/** Where the browser PUTs a script before its commit: a presigned S3 URL in AWS, the local server locally. */
export interface UploadStaging {
  /** A URL (and the headers to send with it) that accepts exactly this upload's bytes for a while. */
  presign(upload: PendingUpload): Promise<{ url: string; headers: Record<string, string> }>;
  /**
   * The staged bytes, or undefined when nothing was put. A staged object of another size than `sizeBytes` is
   * refused (InvalidInput naming both sizes) before any of it is read.
   */
  read(upload: Pick<PendingUpload, 'projectId' | 'uploadId' | 'sizeBytes'>): Promise<Uint8Array | undefined>;
  discard(upload: Pick<PendingUpload, 'projectId' | 'uploadId'>): Promise<void>;
}

/**
 * Seals a secret at rest and opens it again. `context` binds the sealed text to one connection: a sealed secret
 * copied to another connection (or project) does not open (AES-GCM's additional data, see lambdas/adapters/secret-sealer.ts).
 */
export interface SecretSealer {
  seal(plaintext: string, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<string>;
}
