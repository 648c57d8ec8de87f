import * as z from 'zod/mini';
import { PATH_ID_PATTERN, printableTextProblem, WATERMARK_PATTERN } from './formats';
import { EVENT_NAMES } from './resources';

/** Bodies and queries of the console's own routes (docs/console.md); the mirrored owner routes keep the API's. */

const text = (field: string) => z.string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) });

export const SignInBody = z.object({ token: text('token').check(z.minLength(1, 'token must not be empty'), z.maxLength(512, 'token is too long')) });

export const SearchQuery = z.object({
  q: z.optional(z.string().check(z.maxLength(200, 'q must be at most 200 characters'))),
  status: z._default(z.enum(['all', 'active', 'revoked', 'expired'], { error: 'status must be all, active, revoked or expired' }), 'all'),
  offset: z._default(z.pipe(z.string().check(z.regex(/^[0-9]{1,15}$/, 'offset must be a whole number')), z.transform(Number)), 0),
});

const keyId = text('key_ids[]').check(z.regex(PATH_ID_PATTERN, 'key_ids must hold key ids such as key_0123456789abcdef0123'));
export const RevokeSelectedBody = z.object({
  key_ids: z
    .array(keyId, { error: 'key_ids must be an array of key ids' })
    .check(z.minLength(1, 'key_ids must name 1 to 100 keys'), z.maxLength(100, 'key_ids must name 1 to 100 keys')),
});

/** A Discord embed field value holds 1024 characters; a version's notes are shown in one (as `versions upload`). */
export const MAX_VERSION_NOTES_LENGTH = 1024;
export const UploadBody = z.object({
  size_bytes: z
    .int({ error: 'size_bytes must be a whole number of bytes' })
    .check(z.gte(1, 'size_bytes must be at least 1'), z.lte(5 * 1024 * 1024, 'size_bytes must be at most 5242880 (5 MiB)')),
  sha256: text('sha256').check(z.regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex characters')),
  notes: z._default(
    text('notes').check(
      z.refine((value) => printableTextProblem(value, MAX_VERSION_NOTES_LENGTH) === undefined, {
        error: (issue) => `notes ${printableTextProblem(String(issue.input), MAX_VERSION_NOTES_LENGTH)}`,
      }),
    ),
    '',
  ),
});

const events = z
  .array(z.enum(EVENT_NAMES, { error: `events must be names among ${EVENT_NAMES.join(', ')}` }), { error: 'events must be an array of event names' })
  .check(z.minLength(1, 'events must name at least one event'));
export const AddWebhookBody = z.object({ url: text('url'), events, enabled: z._default(z.boolean({ error: 'enabled must be true or false' }), true) });
export const EditWebhookBody = z.object({ events: z.optional(events), enabled: z.optional(z.boolean({ error: 'enabled must be true or false' })) });

/** A page of the CSV export: the keys issued after position `after` (0, the default, is the first page, with the header row). */
export const ExportQuery = z.object({
  after: z._default(z.pipe(z.string().check(z.regex(/^[0-9]{1,15}$/, 'after must be a whole number')), z.transform(Number)), 0),
});

export const AuditQuery = z.object({
  limit: z._default(z.pipe(z.string().check(z.regex(/^[0-9]{1,4}$/, 'limit must be a whole number from 1 to 1000')), z.transform(Number)), 100),
});

/** A new token: its scope, and its limits (one project, named owner routes; the console checks the names). */
export const CreateTokenBody = z.object({
  scope: z._default(z.enum(['read', 'write'], { error: 'scope must be read or write' }), 'write'),
  project_id: z.optional(text('project_id').check(z.regex(PATH_ID_PATTERN, 'project_id must be a project id such as prj_0123456789abcdef0123'))),
  routes: z.optional(
    z
      .array(text('routes[]'), { error: 'routes must be an array of owner route names such as issue-keys' })
      .check(z.minLength(1, 'routes must name at least one route (leave it out for every route)'), z.maxLength(20, 'routes must name at most 20 routes')),
  ),
});

/**
 * `PUT /projects/{id}/discord`: the project's Discord application, as `discord link` takes it. The forms (64 hex, an
 * application id, the cooldown's range) are the rule's to judge: discordLinkProblem in lambdas/domain/discord/link.ts.
 */
/**
 * `POST /console/api/projects/{id}/shops`: a shop connection, as `shop add` takes it. What the values may be is the
 * rule's to judge: addShopProblem in lambdas/domain/shops/connections.ts.
 */
export const ShopAddBody = z.object({
  provider: text('provider'),
  secret: text('secret'),
  products: z.record(z.string(), z.string({ error: 'products must map product ids to TERMS text, e.g. {"12345": "30d,machines=1"}' })),
});

export const DiscordLinkBody = z.object({
  public_key: text('public_key'),
  application_id: z.optional(z.nullable(text('application_id'))),
  reset_cooldown: z.optional(z.number({ error: 'reset_cooldown must be a whole number of seconds' })),
});

export const LeakRevokeBody = z.object({
  watermarks: z
    .array(text('watermarks[]').check(z.regex(WATERMARK_PATTERN, 'watermarks must be 16 lowercase hex characters each')))
    .check(z.minLength(1, 'watermarks must name 1 to 100 watermarks'), z.maxLength(100, 'watermarks must name 1 to 100 watermarks')),
});
