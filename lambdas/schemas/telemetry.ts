import * as z from 'zod/mini';
import { EXECUTOR_CHARACTERS_MESSAGE, INVISIBLE_NAME_CHARACTERS, PATH_ID_PATTERN, UNSAFE_TEXT_CHARACTERS } from './formats';

/**
 * What the loader side reports (spec §6.1's analytics events are judged from it). Two record kinds, each with its
 * own schema: a script execution and a key validation.
 */

/** Records per ingest call: a Lambda payload (6 MB) holds far more, but a batch this size stays well inside the timeout. */
export const MAX_BATCH_RECORDS = 10_000;
/** A record dated further ahead than this is refused: a wrong clock would otherwise poison last-seen times. */
export const MAX_CLOCK_SKEW_SECONDS = 300;
/**
 * A record dated further back than this is refused: every detector's window fits in it (new_executor's 7-day
 * absence, execution_drop's two days), and no flood of old dates can fill the table with counters nobody reads.
 */
export const MAX_RECORD_AGE_SECONDS = 8 * 86_400;
/** The most validations one record may stand for: a minute of one key at the address limit, with room to spare. */
const MAX_VALIDATIONS_PER_RECORD = 10_000;
/** An executor's name, as the loader check also takes it (DESIGN.md: 1 to 100 characters). */
export const MAX_EXECUTOR_LENGTH = 100;

/**
 * `hwid_locked`: a machine-bound key refused on a machine past its `max_fingerprints` (DESIGN.md, "Selling keys");
 * `banned`: a key under a ban (DESIGN.md, "Key lifecycle").
 */
export const VALIDATION_RESULTS = ['ok', 'revoked', 'banned', 'expired', 'hwid_locked', 'over_limit', 'unknown'] as const;
export type ValidationResult = (typeof VALIDATION_RESULTS)[number];

const SCRIPT_HASH_PATTERN = /^[0-9a-f]{8,128}$/;
/** Client fingerprints arrive hashed (at least 64 bits of hex); the raw fingerprint never reaches the table. */
const FINGERPRINT_PATTERN = /^[0-9a-f]{16,128}$/;

const requiredMessage = (field: string, type: string) => (issue: { input: unknown }) =>
  issue.input === undefined ? `${field} is required` : `${field} must be ${type}`;

/** Ids as this service makes them (`prj_…`, `key_…`): they become parts of item keys, so nothing else is let in. */
const id = (field: string) =>
  z.string({ error: requiredMessage(field, 'a string') }).check(z.regex(PATH_ID_PATTERN, `${field} must be 1-64 characters of A-Z, a-z, 0-9, _ or -`));

const hex = (field: string, pattern: RegExp, what: string) =>
  z.string({ error: requiredMessage(field, 'a string') }).check(z.toLowerCase(), z.regex(pattern, `${field} must be ${what}`));

const executor = z.string({ error: requiredMessage('executor', 'a string') }).check(
  z.refine((name) => !UNSAFE_TEXT_CHARACTERS.test(name) && !INVISIBLE_NAME_CHARACTERS.test(name), EXECUTOR_CHARACTERS_MESSAGE),
  // One name, however the executor's Unicode spells it (fullwidth `Ｗａｖｅ` is `Wave`): detectors compare names.
  z.normalize('NFKC'),
  z.trim(),
  z.minLength(1, 'executor must not be empty'),
  z.maxLength(MAX_EXECUTOR_LENGTH, `executor must be at most ${MAX_EXECUTOR_LENGTH} characters`),
);

/**
 * The longest script request a loader's timing may report, in milliseconds: five minutes, past any request that was
 * answered (the front door and the HTTP API give up after 30 s; a slow line downloading 5 MiB takes under a minute).
 */
export const MAX_REQUEST_MS = 300_000;
/** The most runs of a stub one executor session may report: a run a second for eleven days. */
export const MAX_RUNS_IN_SESSION = 1_000_000;
/** How a stub's previous script request reached the server, as the service judges it (lambdas/domain/loader-timing.ts). */
const CONNECTION_READINGS = ['reused', 'new', 'unknown'] as const;
export type ConnectionReading = (typeof CONNECTION_READINGS)[number];

const requestMs = (field: string) =>
  z
    .int(`${field} must be a whole number of milliseconds`)
    .check(z.gte(0, `${field} must not be negative`), z.lte(MAX_REQUEST_MS, `${field} must be at most ${MAX_REQUEST_MS}`));

/**
 * What a stub measured of its own earlier script requests in this executor session (examples/roblox-loader.luau,
 * docs/loader.md "Does the executor reuse a connection?"): as the key item's `lastCheck` keeps it, and the figures
 * of an execution record's `timing`.
 */
export const CheckTimingSchema = z.object({
  /** Which run of the stub this is in the executor's session (1: the first the stub saw). */
  runInSession: z
    .int(`runInSession must be a whole number from 1 to ${MAX_RUNS_IN_SESSION}`)
    .check(z.gte(1, 'runInSession must be at least 1'), z.lte(MAX_RUNS_IN_SESSION, `runInSession must be at most ${MAX_RUNS_IN_SESSION}`)),
  /** The previous run's script request, sent to answered. */
  previousRequestMs: z.optional(requestMs('previousRequestMs')),
  /** The session's first script request answered as the previous one was (a script body, or none), when it was an earlier one. */
  firstRequestMs: z.optional(requestMs('firstRequestMs')),
});
export type CheckTiming = z.infer<typeof CheckTimingSchema>;

/** An execution's timing: the stub's figures, and what the service reads from them of the previous request's connection. */
const ExecutionTimingSchema = z.object({
  ...CheckTimingSchema.shape,
  previousConnection: z.enum(CONNECTION_READINGS, { error: `previousConnection must be one of ${CONNECTION_READINGS.join(', ')}` }),
});
export type ExecutionTiming = z.infer<typeof ExecutionTimingSchema>;

const at = z.int({ error: requiredMessage('at', 'a whole number of Unix seconds') }).check(z.nonnegative('at must not be negative'));

export const ExecutionRecordSchema = z.object({
  kind: z.literal('execution'),
  projectId: id('projectId'),
  /** The script run; a project distributes one script, so it defaults to the project id. */
  scriptId: z.optional(id('scriptId')),
  versionId: z.optional(id('versionId')),
  keyId: z.optional(id('keyId')),
  executor,
  scriptHash: z.optional(hex('scriptHash', SCRIPT_HASH_PATTERN, '8-128 hex characters')),
  at,
  /**
   * What the stub measured of its earlier requests in this executor session (optional: older stubs and other loaders
   * send none). Telemetry about telemetry: a malformed one is dropped, never the record that carries it.
   */
  timing: z.optional(z.catch(z.optional(ExecutionTimingSchema), undefined)),
});
export type ExecutionRecord = z.infer<typeof ExecutionRecordSchema>;

export const ValidationRecordSchema = z.object({
  kind: z.literal('validation'),
  projectId: id('projectId'),
  keyId: id('keyId'),
  result: z.enum(VALIDATION_RESULTS, { error: `result must be one of ${VALIDATION_RESULTS.join(', ')}` }),
  executor,
  fingerprint: hex('fingerprint', FINGERPRINT_PATTERN, 'a hashed client fingerprint: 16-128 hex characters'),
  at,
  /**
   * How many identical validations this record stands for (default 1): a container answering a much-refused key
   * from memory reports its refusals together (lambdas/domain/refusal-memory.ts).
   */
  count: z.optional(
    z
      .int({ error: `count must be a whole number from 1 to ${MAX_VALIDATIONS_PER_RECORD}` })
      .check(z.gte(1, 'count must be at least 1'), z.lte(MAX_VALIDATIONS_PER_RECORD, `count must be at most ${MAX_VALIDATIONS_PER_RECORD}`)),
  ),
});
export type ValidationRecord = z.infer<typeof ValidationRecordSchema>;

export const RECORD_SCHEMAS = { execution: ExecutionRecordSchema, validation: ValidationRecordSchema } as const;
export type RecordKind = keyof typeof RECORD_SCHEMAS;
export const isRecordKind = (kind: unknown): kind is RecordKind => typeof kind === 'string' && Object.hasOwn(RECORD_SCHEMAS, kind);

/** What the ingest entry point takes: `{ "records": [ { "kind": "execution" | "validation", ... }, ... ] }`. */
export const IngestRequestSchema = z.object({
  records: z
    .array(z.unknown(), { error: 'records must be an array' })
    .check(z.maxLength(MAX_BATCH_RECORDS, `a batch holds at most ${MAX_BATCH_RECORDS} records`)),
});
