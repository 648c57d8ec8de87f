import * as z from 'zod/mini';
import { EXECUTOR_CHARACTERS_MESSAGE, INVISIBLE_NAME_CHARACTERS, PATH_ID_PATTERN, UNSAFE_TEXT_CHARACTERS } from './formats';
import { MAX_EXECUTOR_LENGTH, MAX_REQUEST_MS, MAX_RUNS_IN_SESSION } from './telemetry';

/** The loader key check, `POST /v1/loader/validate` (DESIGN.md, "Loader key check"). */

/** Longest key value read: far past the values this service makes (36 characters), and a bound on hashing. */
const MAX_KEY_VALUE_LENGTH = 256;
const SHA256_HEX = /^[0-9a-f]{64}$/;

const required = (field: string, type: string) => (issue: { input: unknown }) =>
  issue.input === undefined ? `${field} is required` : `${field} must be ${type}`;

const sha256Hex = (field: string, what: string) =>
  z.string({ error: required(field, 'a string') }).check(z.regex(SHA256_HEX, `${field} must be 64 lowercase hex characters: ${what}`));

const requestMs = z.optional(z.nullable(z.int().check(z.gte(0), z.lte(MAX_REQUEST_MS))));

/**
 * What the stub measured of its own earlier script requests in this executor session (issue 32; docs/loader.md, "Does
 * the executor reuse a connection?"). A request's time is known only once it is answered, so a run reports the runs
 * before it. Absent or null: not measured. Telemetry only: it never changes the answer.
 */
export const LoaderTiming = z.object({
  /** Which run of the stub this is in the executor's session (getgenv() lasts as long as the session): 1 is the first. */
  run_in_session: z.int().check(z.gte(1), z.lte(MAX_RUNS_IN_SESSION)),
  /** The previous run's script request, in whole milliseconds from sending it to its answer (the first attempt). */
  previous_request_ms: requestMs,
  /** The session's first script request answered as the previous one was (a script body, or none), when it was an earlier one. */
  first_request_ms: requestMs,
});
export type LoaderTiming = z.infer<typeof LoaderTiming>;

/** What the OpenAPI document says of `timing` (lambdas/http/openapi/schemas.ts). */
export const LOADER_TIMING_DESCRIPTION =
  "Optional, telemetry only: what the stub measured of its earlier script requests in this executor session (the run's number in it, the previous run's request and the session's first answered alike, in milliseconds), from which the service reads whether the previous request reused a connection. It never changes the answer; one that is not of this shape is ignored, never refused.";

/**
 * The request. Fields the contract does not name are ignored rather than refused: loaders are pasted into
 * scripts that live for years, and a newer loader must keep working against this service.
 */
export const LoaderCheckRequest = z.object(
  {
    project_id: z
      .string({ error: required('project_id', 'a string') })
      .check(z.regex(PATH_ID_PATTERN, 'project_id must be the project id, 1-64 characters of A-Z, a-z, 0-9, _ or -')),
    key: z
      .string({ error: required('key', 'a string') })
      .check(z.minLength(1, 'key must not be empty'), z.maxLength(MAX_KEY_VALUE_LENGTH, `key must be at most ${MAX_KEY_VALUE_LENGTH} characters`)),
    fingerprint: sha256Hex('fingerprint', "the SHA-256 of the machine's id, never the id itself"),
    // Trimmed as the ingest path trims it: a name of only spaces would be answered yet its telemetry refused by
    // ingest, so such checks (a leaked key's included) would reach no detector.
    executor: z.string({ error: required('executor', 'a string') }).check(
      z.refine((name) => !UNSAFE_TEXT_CHARACTERS.test(name) && !INVISIBLE_NAME_CHARACTERS.test(name), EXECUTOR_CHARACTERS_MESSAGE),
      // One name, however the executor's Unicode spells it (fullwidth `Ｗａｖｅ` is `Wave`): detectors compare names.
      z.normalize('NFKC'),
      z.trim(),
      z.minLength(1, 'executor must not be empty'),
      z.maxLength(MAX_EXECUTOR_LENGTH, `executor must be at most ${MAX_EXECUTOR_LENGTH} characters`),
    ),
    script_hash: z.optional(sha256Hex('script_hash', 'the SHA-256 of the script text')),
    version_id: z.optional(
      z
        .string({ error: required('version_id', 'a string') })
        .check(z.regex(PATH_ID_PATTERN, 'version_id must be a version id, 1-64 characters of A-Z, a-z, 0-9, _ or -')),
    ),
    // Ignored, never refused, when it is not LoaderTiming (a string, a negative or absurd figure): a buyer's run must
    // not fail for the sake of telemetry, and a stub already in buyers' hands can never be corrected.
    timing: z.optional(z.catch(z.optional(LoaderTiming), undefined)),
  },
  { error: 'Request body must be a JSON object' },
);
export type LoaderCheckRequest = z.infer<typeof LoaderCheckRequest>;

/** In the order they win when several apply (DESIGN.md: revoked, banned, expired, HWID locked, over limit). */
export const REFUSAL_CODES = ['KEY_REVOKED', 'KEY_BANNED', 'KEY_EXPIRED', 'KEY_HWID_LOCKED', 'KEY_OVER_LIMIT', 'KEY_INVALID'] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];
/** The refusals validate answers with the code alone; a ban also carries its reason (LoaderCheckBanned). */
const PLAIN_REFUSAL_CODES = REFUSAL_CODES.filter((code) => code !== 'KEY_BANNED') as Exclude<RefusalCode, 'KEY_BANNED'>[];

/** A key that may run: this check counted one of its uses. */
export const LoaderCheckValid = z.strictObject({
  valid: z.literal(true),
  code: z.literal('KEY_VALID'),
  key_id: z.string(),
  expires_at: z.int(),
  /** `max_uses - current_uses` after this check; null for a key without a cap. */
  uses_left: z.nullable(z.int().check(z.nonnegative())),
});

/** A key that may not run: no use was counted. */
export const LoaderCheckRefused = z.strictObject({ valid: z.literal(false), code: z.enum(PLAIN_REFUSAL_CODES) });

/** A banned key (DESIGN.md, "Key lifecycle"): no use counted, and the publisher's reason for the buyer to read. */
export const LoaderCheckBanned = z.strictObject({ valid: z.literal(false), code: z.literal('KEY_BANNED'), reason: z.string() });

export const LoaderCheckResponse = z.union([LoaderCheckValid, LoaderCheckRefused, LoaderCheckBanned]);
export type LoaderCheckResponse = z.infer<typeof LoaderCheckResponse>;

/**
 * A fetch of the script that is refused (`POST /v1/loader/script`, 403): the refusal of validate, with a sentence
 * the stub loader shows the buyer as `error`. No script bytes.
 */
export const LoaderScriptRefused = z.strictObject({ error: z.string(), valid: z.literal(false), code: z.enum(REFUSAL_CODES) });
export type LoaderScriptRefused = z.infer<typeof LoaderScriptRefused>;
