import * as z from 'zod/mini';
import { PATH_ID_PATTERN, UNSAFE_TEXT_CHARACTERS } from './formats';

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
  z.trim(),
  z.minLength(1, 'executor must not be empty'),
  z.maxLength(MAX_EXECUTOR_LENGTH, `executor must be at most ${MAX_EXECUTOR_LENGTH} characters`),
  z.refine((name) => !UNSAFE_TEXT_CHARACTERS.test(name), 'executor must not contain control or bidirectional-override characters'),
);

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
