import * as z from 'zod/mini';
import { freeTextProblem, watermarkProblem } from './formats';

/** Longest id accepted in a body; ids this service makes are far shorter, and DynamoDB keys are bounded. */
export const MAX_ID_LENGTH = 128;

type Shape = Parameters<typeof z.strictObject>[0];

/**
 * A request part (JSON body or query string) with exactly the fields of `shape`: anything else is a typo
 * or a misunderstanding worth a 400 that names it, rather than silently ignored input.
 */
function requestPart<S extends Shape>(part: 'body' | 'query', shape: S) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') {
        const what = part === 'body' ? 'field' : 'query parameter';
        if (!allowed) return `This endpoint takes no ${what}s; remove ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
        return `Unknown ${what}${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; allowed: ${allowed}`;
      }
      return part === 'body' ? 'Request body must be a JSON object' : 'Invalid query string';
    },
  });
}

function requiredId(field: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .check(z.minLength(1, `${field} must not be empty`), z.maxLength(MAX_ID_LENGTH, `${field} must be at most ${MAX_ID_LENGTH} characters`));
}

/** A query value that must be a whole number in [min, max]; the text is checked, so `1e2`, `-1`, `1.5` and `""` fail. */
function wholeNumberParam(name: string, min: number, max: number, defaultValue: number) {
  const message = `${name} must be a whole number between ${min} and ${max}`;
  return z._default(
    z.pipe(
      z.string({ error: message }).check(z.regex(/^[0-9]{1,15}$/, message)),
      z.pipe(z.transform(Number), z.int().check(z.gte(min, message), z.lte(max, message))),
    ),
    defaultValue,
  );
}

/** Spec §4.1 and §8. Offsets stop at 15 digits, far past any key count and inside exact JSON numbers. */
export const KEYS_PAGE = { defaultLimit: 50, maxLimit: 100, defaultOffset: 0, maxOffset: 999_999_999_999_999 } as const;

/** A watermark as the spec writes it (§4.3, §8), with advice for the common slips. */
function watermarkValue() {
  return z.string({ error: (issue) => (issue.input === undefined ? 'watermark is required' : 'watermark must be a string') }).check(
    z.refine((value) => watermarkProblem(value) === undefined, {
      error: (issue) => watermarkProblem(String(issue.input)) ?? 'invalid watermark',
    }),
  );
}

/**
 * `GET /v1/projects/:id/keys` (spec §4.1). `watermark` is ours, additive: only the keys carrying it, read from
 * the watermark index, so finding a leak's keys never lists the project.
 */
export const ListKeysQuery = requestPart('query', {
  limit: wholeNumberParam('limit', 1, KEYS_PAGE.maxLimit, KEYS_PAGE.defaultLimit),
  offset: wholeNumberParam('offset', 0, KEYS_PAGE.maxOffset, KEYS_PAGE.defaultOffset),
  watermark: z.optional(watermarkValue()),
});
export type ListKeysQuery = z.infer<typeof ListKeysQuery>;

/** Endpoints that take no query parameters. */
export const NoQuery = requestPart('query', {});

/** `POST /v1/projects/:id/keys/revoke` (spec §4.2). */
export const RevokeKeyBody = requestPart('body', { key_id: requiredId('key_id') });
export type RevokeKeyBody = z.infer<typeof RevokeKeyBody>;

/** `POST /v1/projects/:id/keys/revoke-bulk` (spec §4.3). */
export const RevokeBulkBody = requestPart('body', { watermark: watermarkValue() });
export type RevokeBulkBody = z.infer<typeof RevokeBulkBody>;

/** `POST /v1/projects/:id/versions/rollback` (spec §4.5). */
export const RollbackBody = requestPart('body', { version_id: requiredId('version_id') });
export type RollbackBody = z.infer<typeof RollbackBody>;

// ---- Selling keys (DESIGN.md, "Selling keys: issue over the API, bind to machines") ----

/** Keys one issue call makes at most, as shops and key systems batch them. */
export const MAX_KEYS_PER_ISSUE = 100;
/** Duration presets in seconds; `lifetime` is LIFETIME_EXPIRES_AT instead of a duration. */
export const DURATION_PRESETS = { '1d': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400, '90d': 90 * 86_400, '365d': 365 * 86_400 } as const;
/** Whole-second durations accepted besides the presets: a minute to ten years. */
export const DURATION_SECONDS = { min: 60, max: 315_360_000 } as const;
/**
 * `expires_at` of a `lifetime` key: 2100-01-01T00:00:00Z, a fixed value so that a repeated order answers the same
 * bytes, and far past any script's life.
 */
export const LIFETIME_EXPIRES_AT = 4_102_444_800;
export const MAX_FINGERPRINTS = 10;
export const MAX_NOTE_LENGTH = 255;
export const DISCORD_USER_ID = /^[0-9]{17,20}$/;
/** 1 to 100 printable characters: no control, format or unassigned character, which could hide a difference. */
const ORDER_ID = /^\P{C}{1,100}$/u;

/** A duration: a preset name, `lifetime`, or whole seconds; as seconds, or 'lifetime'. */
export type KeyDuration = number | 'lifetime';

const durationMessage = `duration must be one of ${[...Object.keys(DURATION_PRESETS), 'lifetime'].map((name) => `"${name}"`).join(', ')} or whole seconds from ${DURATION_SECONDS.min} to ${DURATION_SECONDS.max.toLocaleString('en-US')}`;

/** The duration as seconds (or 'lifetime'), undefined when it is none of the accepted forms. */
export function parseDuration(value: unknown): KeyDuration | undefined {
  if (value === 'lifetime') return 'lifetime';
  if (typeof value === 'string' && Object.hasOwn(DURATION_PRESETS, value)) return DURATION_PRESETS[value as keyof typeof DURATION_PRESETS];
  if (typeof value === 'number' && Number.isInteger(value) && value >= DURATION_SECONDS.min && value <= DURATION_SECONDS.max) return value;
  return undefined;
}

/** A free-text field: a string of at most `maxLength` characters under the one printable-text rule (freeTextProblem). */
export const freeText = (field: string, maxLength: number) =>
  z.string({ error: `${field} must be a string` }).check(
    z.maxLength(maxLength, `${field} must be at most ${maxLength} characters`),
    z.refine((text) => freeTextProblem(field, text) === undefined, { error: (issue) => freeTextProblem(field, String(issue.input)) ?? `invalid ${field}` }),
  );

const optionalNullableInt = (field: string, min: number, max: number) =>
  z._default(
    z.nullable(
      z
        .int({ error: `${field} must be a whole number from ${min} to ${max.toLocaleString('en-US')}, or null` })
        .check(z.gte(min, `${field} must be at least ${min}`), z.lte(max, `${field} must be at most ${max.toLocaleString('en-US')}`)),
    ),
    null,
  );

/** `POST /v1/projects/:id/keys`. Defaults are applied here, so a body's meaning is its parsed value. */
export const IssueKeysBody = requestPart('body', {
  count: z._default(
    z
      .int({ error: `count must be a whole number from 1 to ${MAX_KEYS_PER_ISSUE}` })
      .check(z.gte(1, 'count must be at least 1'), z.lte(MAX_KEYS_PER_ISSUE, `count must be at most ${MAX_KEYS_PER_ISSUE}`)),
    1,
  ),
  duration: z._default(
    z.pipe(
      z.unknown(),
      z.transform((value, context) => {
        const duration = parseDuration(value);
        if (duration === undefined) context.issues.push({ code: 'custom', message: durationMessage, input: value });
        return duration ?? 'lifetime';
      }),
    ),
    DURATION_PRESETS['30d'],
  ),
  max_uses: optionalNullableInt('max_uses', 1, Number.MAX_SAFE_INTEGER),
  max_fingerprints: optionalNullableInt('max_fingerprints', 1, MAX_FINGERPRINTS),
  watermark: z.optional(
    z
      .string({ error: 'watermark must be a string' })
      .check(z.refine((value) => watermarkProblem(value) === undefined, { error: (issue) => watermarkProblem(String(issue.input)) ?? 'invalid watermark' })),
  ),
  note: z.optional(freeText('note', MAX_NOTE_LENGTH)),
  discord_id: z.optional(
    z.string({ error: 'discord_id must be a string' }).check(z.regex(DISCORD_USER_ID, 'discord_id must be a Discord user id: 17 to 20 digits')),
  ),
  order_id: z.optional(z.string({ error: 'order_id must be a string' }).check(z.regex(ORDER_ID, 'order_id must be 1 to 100 printable characters'))),
});
export type IssueKeysBody = z.infer<typeof IssueKeysBody>;

/** `POST /v1/projects/:id/keys/reset-hwid`. */
export const ResetHwidBody = requestPart('body', { key_id: requiredId('key_id') });
export type ResetHwidBody = z.infer<typeof ResetHwidBody>;
