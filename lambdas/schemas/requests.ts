import * as z from 'zod/mini';
import { watermarkProblem } from './formats';

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
  return z.string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) }).check(
    z.minLength(1, `${field} must not be empty`),
    z.maxLength(MAX_ID_LENGTH, `${field} must be at most ${MAX_ID_LENGTH} characters`),
  );
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
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'watermark is required' : 'watermark must be a string') })
    .check(
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
