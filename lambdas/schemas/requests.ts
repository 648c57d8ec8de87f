import * as z from 'zod/mini';
import { freeTextProblem, UNSAFE_TEXT_CHARACTERS, watermarkProblem } from './formats';

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
function wholeNumberText(name: string, min: number, max: number) {
  const message = `${name} must be a whole number between ${min} and ${max}`;
  return z.pipe(
    z.string({ error: message }).check(z.regex(/^[0-9]{1,15}$/, message)),
    z.pipe(z.transform(Number), z.int().check(z.gte(min, message), z.lte(max, message))),
  );
}

const wholeNumberParam = (name: string, min: number, max: number, defaultValue: number) => z._default(wholeNumberText(name, min, max), defaultValue);

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

/**
 * `GET …/versions` and `GET …/webhooks` (spec §4.4, §4.6), paged as the keys are (§4.1) but only when asked: without
 * `limit` the answer is every item from `offset`, as these lists always answered (§4.6: "It returns all
 * configurations of the project"); `total` (additive) says how many there are, so a client pages until `offset`
 * reaches it.
 */
export const ListPageQuery = requestPart('query', {
  limit: z.optional(wholeNumberText('limit', 1, KEYS_PAGE.maxLimit)),
  offset: wholeNumberParam('offset', 0, KEYS_PAGE.maxOffset, KEYS_PAGE.defaultOffset),
});
export type ListPageQuery = z.infer<typeof ListPageQuery>;

// ---- Stats (DESIGN.md, "Stats") ----

export const STATS_GRANULARITIES = ['hour', 'day'] as const;
export const STATS_DIMENSIONS = ['result', 'executor', 'version'] as const;
/** Largest `from`/`to`: Unix seconds have 10 digits until 2286; more is a timestamp in milliseconds. */
const MAX_UNIX_SECONDS = 9_999_999_999;

function unixSecondsParam(name: string) {
  const message = `${name} must be Unix seconds: a whole number from 0 to ${MAX_UNIX_SECONDS} (not milliseconds)`;
  return z.optional(
    z.pipe(z.string({ error: message }).check(z.regex(/^[0-9]{1,10}$/, message)), z.pipe(z.transform(Number), z.int().check(z.lte(MAX_UNIX_SECONDS, message)))),
  );
}

/**
 * `GET /v1/projects/:id/stats`: every parameter optional. That `from` is before `to` and the window within the
 * granularity's limit is the domain's rule (statsWindow), which fills in the defaults that depend on the clock.
 */
export const StatsQuery = requestPart('query', {
  granularity: z._default(z.enum(STATS_GRANULARITIES, { error: `granularity must be ${STATS_GRANULARITIES.join(' or ')}` }), 'hour'),
  by: z._default(z.enum(STATS_DIMENSIONS, { error: `by must be ${STATS_DIMENSIONS.slice(0, -1).join(', ')} or ${STATS_DIMENSIONS.at(-1)}` }), 'result'),
  from: unixSecondsParam('from'),
  to: unixSecondsParam('to'),
});
export type StatsQuery = z.infer<typeof StatsQuery>;

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
export const MAX_KEYS_PER_API_ISSUE = 100;
/** Duration presets in seconds; `lifetime` is LIFETIME_EXPIRES_AT instead of a duration. */
export const DURATION_PRESETS = { '1d': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400, '90d': 90 * 86_400, '365d': 365 * 86_400 } as const;
/** Whole-second durations accepted besides the presets: a minute to ten years. */
const DURATION_SECONDS = { min: 60, max: 315_360_000 } as const;
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
const freeText = (field: string, maxLength: number) =>
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
      .int({ error: `count must be a whole number from 1 to ${MAX_KEYS_PER_API_ISSUE}` })
      .check(z.gte(1, 'count must be at least 1'), z.lte(MAX_KEYS_PER_API_ISSUE, `count must be at most ${MAX_KEYS_PER_API_ISSUE}`)),
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

// ---- Key lifecycle (DESIGN.md, "Key lifecycle: ban, extend, edit") ----

/** A ban's reason: what the buyer's loader prints, so one line of text a person wrote. */
export const BAN_REASON_LENGTH = { min: 1, max: 200 } as const;

/** A ban's (or a blacklist entry's) reason, the sentence the buyer's loader prints. */
const banReason = () =>
  z.string({ error: (issue) => (issue.input === undefined ? 'reason is required: the sentence the buyer reads' : 'reason must be a string') }).check(
    z.minLength(BAN_REASON_LENGTH.min, 'reason must not be empty: it is what the buyer reads'),
    z.maxLength(BAN_REASON_LENGTH.max, `reason must be at most ${BAN_REASON_LENGTH.max} characters`),
    z.refine((reason) => !UNSAFE_TEXT_CHARACTERS.test(reason), 'reason must be one line, without control or bidirectional-override characters'),
  );

/** `POST /v1/projects/:id/keys/ban`. `until` must be in the future, which only the rule (knowing now) can check. */
export const BanKeyBody = requestPart('body', {
  key_id: requiredId('key_id'),
  reason: banReason(),
  until: z.optional(
    z
      .int({ error: 'until must be a whole number of Unix seconds (when the ban ends), or left out for a ban until unbanned' })
      .check(z.nonnegative('until must be a Unix time in the future')),
  ),
});
export type BanKeyBody = z.infer<typeof BanKeyBody>;

/** `POST /v1/projects/:id/keys/unban`. */
export const UnbanKeyBody = requestPart('body', { key_id: requiredId('key_id') });
export type UnbanKeyBody = z.infer<typeof UnbanKeyBody>;

/** `POST /v1/projects/:id/keys/extend`: the durations of issuing keys, required here. */
export const ExtendKeyBody = requestPart('body', {
  key_id: requiredId('key_id'),
  duration: z.pipe(
    z.unknown(),
    z.transform((value, context) => {
      const duration = parseDuration(value);
      if (duration === undefined)
        context.issues.push({ code: 'custom', message: value === undefined ? 'duration is required' : durationMessage, input: value });
      return duration ?? 'lifetime';
    }),
  ),
});
export type ExtendKeyBody = z.infer<typeof ExtendKeyBody>;

const editable = <T extends z.core.SomeType>(schema: T) => z.optional(z.nullable(schema));

/** `PATCH /v1/projects/:id/keys/:key_id`: any of the four fields; null clears one. An empty body changes nothing: 400. */
export const UpdateKeyBody = requestPart('body', {
  // The one printable-text rule of every free-text field (freeTextProblem), as issuing holds a note to.
  note: editable(freeText('note', MAX_NOTE_LENGTH)),
  discord_id: editable(
    z
      .string({ error: 'discord_id must be a string or null' })
      .check(z.regex(DISCORD_USER_ID, 'discord_id must be a Discord user id: 17 to 20 digits, or null')),
  ),
  max_uses: editable(
    z
      .int({ error: 'max_uses must be a whole number of at least 1, or null' })
      .check(z.gte(1, 'max_uses must be at least 1, or null'), z.lte(Number.MAX_SAFE_INTEGER, 'max_uses is too large')),
  ),
  max_fingerprints: editable(
    z
      .int({ error: `max_fingerprints must be a whole number from 1 to ${MAX_FINGERPRINTS}, or null` })
      .check(
        z.gte(1, 'max_fingerprints must be at least 1, or null'),
        z.lte(MAX_FINGERPRINTS, `max_fingerprints must be at most ${MAX_FINGERPRINTS}, or null`),
      ),
  ),
}).check(z.refine((body) => Object.keys(body).length > 0, 'Send at least one of note, discord_id, max_uses, max_fingerprints (null clears one)'));
export type UpdateKeyBody = z.infer<typeof UpdateKeyBody>;

/** A leaked dump to trace (`POST /v1/projects/{id}/leak/trace`): text; its size and encoding are the rule's to judge. */
export const LeakDump = z.string();

// ---- Buyer blacklist (DESIGN.md, "Buyer blacklist") ----

/** 64 lowercase hex: a machine fingerprint (as the loader sends it) or the SHA-256 of an email address. */
const HEX64 = /^[0-9a-f]{64}$/;

/** The three ways a buyer is named on the blacklist, as the body names them. */
export const BLACKLIST_FIELDS = ['fingerprint', 'discord_id', 'email_sha256'] as const;

/** `POST /v1/projects/:id/blacklist`: exactly one of the three, and the reason. */
export const AddBlacklistBody = requestPart('body', {
  fingerprint: z.optional(
    z
      .string({ error: 'fingerprint must be a string' })
      .check(z.regex(HEX64, "fingerprint must be 64 lowercase hex characters: the SHA-256 of the machine's id, as the loader sends it")),
  ),
  discord_id: z.optional(
    z.string({ error: 'discord_id must be a string' }).check(z.regex(DISCORD_USER_ID, 'discord_id must be a Discord user id: 17 to 20 digits')),
  ),
  email_sha256: z.optional(
    z
      .string({ error: 'email_sha256 must be a string' })
      .check(z.regex(HEX64, 'email_sha256 must be 64 lowercase hex characters: the SHA-256 of the trimmed, lowercased email address')),
  ),
  reason: banReason(),
}).check(
  z.refine((body) => BLACKLIST_FIELDS.filter((field) => body[field] !== undefined).length === 1, {
    error: (issue) => {
      const sent = BLACKLIST_FIELDS.filter((field) => (issue.input as Record<string, unknown>)[field] !== undefined);
      return sent.length === 0
        ? 'Send one of fingerprint, discord_id or email_sha256: the buyer to blacklist'
        : `Send exactly one of fingerprint, discord_id or email_sha256, not ${sent.join(' and ')}: one entry names one buyer`;
    },
  }),
);
export type AddBlacklistBody = z.infer<typeof AddBlacklistBody>;

/** `GET /v1/projects/:id/blacklist`: pages as `GET …/keys` does. */
export const ListBlacklistQuery = requestPart('query', {
  limit: wholeNumberParam('limit', 1, KEYS_PAGE.maxLimit, KEYS_PAGE.defaultLimit),
  offset: wholeNumberParam('offset', 0, KEYS_PAGE.maxOffset, KEYS_PAGE.defaultOffset),
});
export type ListBlacklistQuery = z.infer<typeof ListBlacklistQuery>;
