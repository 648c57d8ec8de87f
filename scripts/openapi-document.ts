import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as z from 'zod/mini';
import { GRANULARITY, NO_VERSION_NAME, OTHER_NAME, STATS_RESULTS, statsWindow, TOP_NAMES } from '#domain/analytics/stats';
import {
  type DomainError,
  InvalidInput,
  KeyNotFound,
  OrderConflict,
  OrderRepeatClosed,
  PlanNotAllowed,
  PROJECT_NOT_FOUND,
  ProjectNotFound,
  RateLimited,
  ScopeMissing,
  Unauthenticated,
  VersionNotFound,
} from '#domain/errors';
import { ADDRESS_COUNTING, LOADER_LIMITS } from '#domain/key-check';
import { RATE_LIMIT } from '#domain/rate-limit';
import { REFUSAL_SENTENCES, refusalSentence } from '#domain/scripts';
import { ORDER_REPEAT_WINDOW_SECONDS } from '#domain/selling-keys';
import { ERROR_STATUSES, statusOf } from '#http/error-statuses';
import { GATEWAY_RESPONSES } from '#http/gateway-responses';
import { NO_VERSION_YET } from '#http/loader-script';
import { STUB_MAX_AGE_SECONDS } from '#http/loader-stub';
import { MAX_BODY_BYTES } from '#http/middlewares';
import { rateLimitHeaders } from '#http/rate-limit-headers';
import { INTERNAL_ERROR, JSON_BODY_REQUIRED, MALFORMED_JSON } from '#http/responses';
import { LOADER_ROUTE, ROUTES, type Route, SCRIPT_ROUTE, STUB_ROUTE, scopeNeededBy } from '#http/routes';
import { PATH_ID_PATTERN, WATERMARK_PATTERN } from '#schemas/formats';
import {
  LOADER_TIMING_DESCRIPTION,
  LoaderCheckBanned,
  LoaderCheckRefused,
  LoaderCheckRequest,
  LoaderCheckResponse,
  LoaderCheckValid,
  LoaderScriptRefused,
  REFUSAL_CODES,
} from '#schemas/loader';
import {
  BAN_REASON_LENGTH,
  BanKeyBody,
  ExtendKeyBody,
  IssueKeysBody,
  KEYS_PAGE,
  LIFETIME_EXPIRES_AT,
  ListKeysQuery,
  NoQuery,
  ResetHwidBody,
  RevokeBulkBody,
  RevokeKeyBody,
  RollbackBody,
  UnbanKeyBody,
  UpdateKeyBody,
  StatsQuery,
} from '#schemas/requests';
import { IssuedKeySchema, KeyDetailSchema, KeySchema, VersionSchema, WebhookSchema } from '#schemas/resources';
import {
  ErrorResponse,
  type ExtendKeyResponse,
  ExtendKeyResponse as ExtendKeyResponseSchema,
  type IssueKeysResponse,
  IssueKeysResponse as IssueKeysResponseSchema,
  type KeyDetailResponse,
  KeyDetailResponse as KeyDetailResponseSchema,
  type ListKeysResponse,
  ListKeysResponse as ListKeysResponseSchema,
  type ListVersionsResponse,
  ListVersionsResponse as ListVersionsResponseSchema,
  type ListWebhooksResponse,
  ListWebhooksResponse as ListWebhooksResponseSchema,
  type OkResponse,
  OkResponse as OkResponseSchema,
  type ResetHwidResponse,
  ResetHwidResponse as ResetHwidResponseSchema,
  type RevokeBulkResponse,
  RevokeBulkResponse as RevokeBulkResponseSchema,
  type RollbackResponse,
  RollbackResponse as RollbackResponseSchema,
  type StatsResponse,
  StatsResponse as StatsResponseSchema,
} from '#schemas/responses';

/**
 * The OpenAPI 3.1 description of the API, built from the zod schemas the handlers validate with, the
 * route table the stack deploys, and the messages and limits the code uses, so the document cannot say
 * something the service does not do. `npm run openapi` writes it to openapi.json.
 */

export type JsonSchema = { [keyword: string]: unknown };
type Ref = { $ref: string };
type Examples = Record<string, { summary: string; value: unknown }>;
interface MediaType {
  schema: JsonSchema;
  examples?: Examples;
}
interface Header {
  description: string;
  schema: JsonSchema;
  example: unknown;
}
interface ResponseObject {
  description: string;
  headers?: Record<string, Ref>;
  /** Absent for a response without a body (a 304). */
  content?: Record<string, MediaType>;
}
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description: string;
  schema: JsonSchema;
  example?: unknown;
}
export interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  security: Record<string, string[]>[];
  parameters: (Parameter | Ref)[];
  requestBody?: { required: true; description: string; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject | Ref>;
}
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; summary: string; description: string };
  servers: { url: string; description: string; variables?: Record<string, { default: string; description: string }> }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: 'http'; scheme: 'bearer'; description: string }>;
    parameters: Record<string, Parameter>;
    headers: Record<string, Header>;
    schemas: Record<string, JsonSchema>;
    responses: Record<string, ResponseObject>;
  };
}

const SECURITY = [{ bearerAuth: [] }];
const JSON_TYPE = 'application/json';
const schemaRef = (name: string): Ref => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string): Ref => ({ $ref: `#/components/responses/${name}` });
const headerRef = (name: string): Ref => ({ $ref: `#/components/headers/${name}` });

// ---- Examples: ids shaped like the ones the service makes (`<prefix>_` + 20 hex) ----

export const EXAMPLE = {
  projectId: 'prj_5e0c8a3f71b24d9c6a1f',
  keyId: 'key_0b7d4e9a2c6f18e35a70',
  otherKeyId: 'key_9f21c4a8e07b3d5c6e12',
  watermark: '3f9a1c7e5b2d8046',
  versionId: 'ver_a41d09c7e3b25f8e6d10',
  olderVersionId: 'ver_7c2e5b1a9d04f36e8b27',
  webhookId: 'whk_2d8f4a6c0e1b3795c4e8',
} as const;

const listKeysExample = {
  keys: [
    {
      id: EXAMPLE.keyId,
      user_hash: 'c0535e4be2b79ffd93291305436bf889314e4a3faec05ecffcbb7df31ad9e51a',
      tier: 'standard',
      watermark: EXAMPLE.watermark,
      issued_at: 1763788800,
      expires_at: 1766380800,
      max_uses: null,
      current_uses: 12,
      revoked: 0,
    },
    {
      id: EXAMPLE.otherKeyId,
      user_hash: '5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9',
      tier: 'standard',
      watermark: 'b41e07d93ac2f865',
      issued_at: 1763789400,
      expires_at: 1766381400,
      max_uses: 500,
      current_uses: 500,
      revoked: 1,
    },
  ],
  total: 2,
} satisfies ListKeysResponse;

const listVersionsExample = {
  versions: [
    { id: EXAMPLE.versionId, version_number: 3, uploaded_at: 1763875200, size_bytes: 48213, notes: 'Fix the teleport cooldown' },
    { id: EXAMPLE.olderVersionId, version_number: 2, uploaded_at: 1763702400, size_bytes: 47980, notes: '' },
  ],
  current_version_id: EXAMPLE.versionId,
} satisfies ListVersionsResponse;

const listWebhooksExample = {
  webhooks: [
    {
      id: EXAMPLE.webhookId,
      url: 'https://discord.com/api/webhooks/1311223344556677889/Zx9-example-webhook-token',
      events: '["version_deployed","key_abuse"]',
      enabled: 1,
      created_at: 1763616000,
      updated_at: 1763616000,
    },
  ],
} satisfies ListWebhooksResponse;

// ---- Schemas: the handlers' zod schemas, with the documentation JSON Schema cannot read from them ----

/** What the document adds to a zod schema: a component name (`id`), prose, and what a refinement enforces. */
interface SchemaDoc {
  id?: string;
  title?: string;
  description?: string;
  pattern?: string;
  examples?: unknown[];
}

const timestamp = 'Unix timestamp (seconds).';

function describeFields(docs: z.core.$ZodRegistry<SchemaDoc>) {
  docs.add(LoaderCheckRequest.shape.timing, { description: LOADER_TIMING_DESCRIPTION });
  const key = KeySchema.shape;
  docs.add(key.id, { description: 'Key identifier; send it as `key_id` to revoke the key.' });
  docs.add(key.user_hash, { description: 'Hashed identifier of the user the key was issued to.' });
  docs.add(key.tier, { description: 'Key tier, for example `standard`.' });
  docs.add(key.watermark, { description: 'Exactly 16 lowercase hex characters; a leaked script shows it after `WM_`.' });
  docs.add(key.issued_at, { description: timestamp });
  docs.add(key.expires_at, { description: timestamp });
  docs.add(key.max_uses, { description: 'Use cap; null means no cap.' });
  docs.add(key.current_uses, { description: 'Uses so far.' });
  docs.add(key.revoked, { description: '`0` = active, `1` = revoked (a numeric flag, not a boolean).' });

  const version = VersionSchema.shape;
  docs.add(version.id, { description: 'Version identifier; send it as `version_id` to roll back.' });
  docs.add(version.version_number, { description: 'Sequential number of the version.' });
  docs.add(version.uploaded_at, { description: timestamp });
  docs.add(version.size_bytes, { description: 'Size of the script in bytes.' });
  docs.add(version.notes, { description: 'Free text from the uploader; may be empty.' });

  const webhook = WebhookSchema.shape;
  docs.add(webhook.url, {
    description:
      'Destination: a Discord incoming-webhook URL. Its token part is a secret that lets anyone post to the channel, so a `read` token gets the URL with the token replaced by `[redacted]` (for example `https://discord.com/api/webhooks/1311223344556677889/[redacted]`; a URL that is not a Discord webhook URL keeps only its origin); a `write` token gets it whole.',
  });
  docs.add(webhook.events, {
    description: 'JSON array of event names encoded as a string, for example `["version_deployed"]`.',
  });
  docs.add(webhook.enabled, { description: '`1` = enabled, `0` = disabled (numeric flag).' });
  docs.add(webhook.created_at, { description: timestamp });
  docs.add(webhook.updated_at, { description: timestamp });

  docs.add(ListKeysResponseSchema.shape.total, {
    description: 'Number of keys ever issued in the project (revoked ones included); with the `watermark` filter, the number carrying that watermark.',
  });
  docs.add(ListVersionsResponseSchema.shape.current_version_id, { description: 'The current version; null only before the first upload.' });
  docs.add(RevokeBulkResponseSchema.shape.revoked_count, { description: 'Keys this call revoked; 0 when no active key carries the watermark.' });
  docs.add(RevokeBulkResponseSchema.shape.complete, {
    description: 'True when every matching key is revoked. False when the call stopped to answer in time: repeat the same call for the rest.',
  });
  docs.add(RollbackResponseSchema.shape.current_version_id, { description: 'Equal to the requested `version_id`.' });
  docs.add(ErrorResponse.shape.error, { description: 'What went wrong, in words a person can act on.' });
  docs.add(ErrorResponse.shape.request_id, { description: 'Present on 5xx answers from the service, to match a report with the logs.' });

  docs.add(RevokeKeyBody.shape.key_id, { description: 'The `id` of a key of this project.', examples: [EXAMPLE.keyId] });
  docs.add(RollbackBody.shape.version_id, { description: 'The `id` of a version of this project.', examples: [EXAMPLE.versionId] });
  // The body checks the watermark with a refinement (for its friendlier messages), which JSON Schema cannot see.
  docs.add(RevokeBulkBody.shape.watermark, {
    description: 'The 16 lowercase hex characters after `WM_` in the leaked dump, without the prefix.',
    pattern: WATERMARK_PATTERN.source,
    examples: [EXAMPLE.watermark],
  });
}

/** Every JSON number is an integer within ±2^53 here; zod's safe-integer bounds would only add noise. */
function simplify(schema: JsonSchema): void {
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
  // A union of numeric literals is how zod spells the 0/1 flags; an integer enum says it plainly.
  const branches = schema.anyOf;
  if (Array.isArray(branches) && branches.every((branch: JsonSchema) => Number.isInteger(branch.const))) {
    const { anyOf: _, ...rest } = schema;
    for (const keyword of Object.keys(schema)) delete schema[keyword];
    Object.assign(schema, { type: 'integer', enum: branches.map((branch: JsonSchema) => branch.const) }, rest);
  }
}

function componentSchemas(docs: z.core.$ZodRegistry<SchemaDoc>, io: 'input' | 'output', named: Record<string, z.core.$ZodType>) {
  const registry = z.registry<SchemaDoc>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { ...docs.get(schema), id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    uri: (id) => `#/components/schemas/${id}`,
    metadata: docs,
    override: ({ jsonSchema }) => simplify(jsonSchema as JsonSchema),
  });
  // Components live inside the OpenAPI document, whose dialect is already 2020-12; their own `$id`s would
  // make each a separate resource and break the `#/components/...` references between them.
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema as JsonSchema]));
}

function buildSchemas(): Record<string, JsonSchema> {
  const docs = z.registry<SchemaDoc>();
  describeFields(docs);
  docs.add(KeySchema, { description: 'Metadata of an issued key; the raw key value is never returned.' });
  docs.add(VersionSchema, { description: 'A script version.' });
  docs.add(WebhookSchema, { description: 'A webhook configuration (managed in the dashboard).' });
  docs.add(ErrorResponse, { description: 'Every failure has this shape.' });
  docs.add(LoaderCheckResponse, {
    description: 'Either LoaderCheckValid (`valid: true`, the key may run) or LoaderCheckRefused (`valid: false`, with the code saying why).',
  });
  // Titled and inlined in the union (a registry of its own below): Swagger UI names a branch by its title, and
  // shows a `$ref` branch as `any` until it is expanded.
  docs.add(LoaderCheckValid, { title: 'LoaderCheckValid' });
  docs.add(LoaderCheckRefused, { title: 'LoaderCheckRefused' });
  docs.add(LoaderCheckBanned, { title: 'LoaderCheckBanned' });
  docs.add(LoaderCheckBanned.shape.reason, { description: "The publisher's reason for the ban, for the buyer to read." });
  return {
    ...componentSchemas(docs, 'output', {
      Key: KeySchema,
      Version: VersionSchema,
      Webhook: WebhookSchema,
      ListKeysResponse: ListKeysResponseSchema,
      OkResponse: OkResponseSchema,
      RevokeBulkResponse: RevokeBulkResponseSchema,
      ListVersionsResponse: ListVersionsResponseSchema,
      RollbackResponse: RollbackResponseSchema,
      ListWebhooksResponse: ListWebhooksResponseSchema,
      IssuedKey: IssuedKeySchema,
      IssueKeysResponse: IssueKeysResponseSchema,
      KeyDetail: KeyDetailSchema,
      KeyDetailResponse: KeyDetailResponseSchema,
      ResetHwidResponse: ResetHwidResponseSchema,
      ExtendKeyResponse: ExtendKeyResponseSchema,
      StatsResponse: StatsResponseSchema,
      ErrorResponse,
    }),
    ...componentSchemas(docs, 'output', { LoaderCheckResponse }),
    ...componentSchemas(docs, 'output', { LoaderCheckValid, LoaderCheckRefused, LoaderCheckBanned, LoaderScriptRefused }),
    ...componentSchemas(docs, 'input', {
      RevokeKeyRequest: RevokeKeyBody,
      RevokeBulkRequest: RevokeBulkBody,
      RollbackRequest: RollbackBody,
      IssueKeysRequest: IssueKeysBody,
      ResetHwidRequest: ResetHwidBody,
      BanKeyRequest: BanKeyBody,
      UnbanKeyRequest: UnbanKeyBody,
      ExtendKeyRequest: ExtendKeyBody,
      UpdateKeyRequest: UpdateKeyBody,
      LoaderCheckRequest,
    }),
  };
}

// ---- Query parameters, from the same schema the handler parses the query string with ----

const QUERY_DESCRIPTIONS: Record<string, string> = {
  limit: `Keys per page (default ${KEYS_PAGE.defaultLimit}, at most ${KEYS_PAGE.maxLimit}).`,
  offset: 'How many keys to skip, in issue order (default 0). Pages cost the same at any offset.',
  watermark:
    "Only the keys carrying this watermark (16 lowercase hex, the characters after `WM_` in a leaked dump), revoked ones included; `offset` and `total` then count those keys. Not in the spec: an addition that finds a leak's keys without listing the project.",
  granularity: `Bucket length: \`hour\` (a window of at most ${GRANULARITY.hour.limit}) or \`day\` (at most ${GRANULARITY.day.limit}). Buckets are UTC hours or UTC days.`,
  by: `What a bucket counts: \`result\` (key checks by result: ${STATS_RESULTS.join(', ')}), \`executor\` or \`version\` (executions by executor name or version id; at most ${TOP_NAMES} names a bucket, the rest under \`${OTHER_NAME}\`, executions with no version under \`${NO_VERSION_NAME}\`).`,
  from: 'Start of the window, Unix seconds, before `to`. Default: `to` minus a day (`hour`) or 30 days (`day`).',
  to: 'End of the window (exclusive), Unix seconds. Default: now.',
};

function queryParameters(query: z.core.$ZodType): Parameter[] {
  // The handler sees strings; the output side carries the integer type, bounds and defaults a client needs.
  const parsed = z.toJSONSchema(query, { target: 'draft-2020-12', io: 'output' });
  const accepted = z.toJSONSchema(query, { target: 'draft-2020-12', io: 'input' });
  const required = new Set(Array.isArray(accepted.required) ? accepted.required : []);
  return Object.entries(parsed.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    description: QUERY_DESCRIPTIONS[name] ?? name,
    schema: schema as JsonSchema,
  }));
}

// ---- Errors: the messages the code actually produces ----

function firstIssue(schema: z.core.$ZodType, input: unknown): string {
  const result = z.safeParse(schema, input);
  if (result.success) throw new Error(`example input ${JSON.stringify(input)} unexpectedly passed validation`);
  return result.error.issues[0]?.message ?? 'Invalid request';
}

const errorContent = (examples: Examples): Record<string, MediaType> => ({ [JSON_TYPE]: { schema: schemaRef('ErrorResponse'), examples } });

function gatewayExamples(status: number): Examples {
  return Object.fromEntries(
    Object.entries(GATEWAY_RESPONSES)
      .filter(([, response]) => response.status === status)
      .map(([type, response]) => [`gateway_${type.toLowerCase()}`, { summary: `From API Gateway (${type})`, value: { error: response.error } }]),
  );
}

const bodySizeMessage = `Request body too large: at most ${MAX_BODY_BYTES / 1024} KB`;

/** A domain error as an example of the answer it gets: its own message, under a summary. */
interface ErrorExample {
  summary: string;
  error: DomainError;
}

/** Examples named after their summary (`Empty body` → `empty_body`), each showing the message the service sends. */
const errorExamples = (examples: readonly ErrorExample[]): Examples =>
  Object.fromEntries(
    examples.map(({ summary, error }) => [
      summary
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_|_$/g, ''),
      { summary, value: { error: error.message } },
    ]),
  );

/** The failures every operation can meet, whatever it reads: the project gate and the rate limit. */
const EVERY_OPERATION_FAILS_WITH: readonly ErrorExample[] = [
  { summary: 'Unknown project, or not yours', error: new ProjectNotFound() },
  { summary: 'Project not on the Business plan', error: new PlanNotAllowed(EXAMPLE.projectId, 'pro') },
  { summary: `Over ${RATE_LIMIT.requests} requests per minute`, error: new RateLimited(42) },
];

/** Body failures every operation with a JSON body can meet. */
const BODY_FAILS_WITH: readonly ErrorExample[] = [
  { summary: 'Malformed JSON', error: new InvalidInput(MALFORMED_JSON) },
  { summary: 'Not sent as JSON', error: new InvalidInput(`${JSON_BODY_REQUIRED}; got Content-Type text/plain`) },
  { summary: `Body over ${MAX_BODY_BYTES / 1024} KB`, error: new InvalidInput(bodySizeMessage) },
];

/** Shared response components: the statuses and descriptions come from the handlers' own table (ERROR_STATUSES). */
function sharedResponses(): Record<string, ResponseObject> {
  return {
    Unauthorized: {
      description: `${ERROR_STATUSES.Unauthenticated.description} API Gateway answers it before the endpoint runs.`,
      content: errorContent(gatewayExamples(statusOf(new Unauthenticated()))),
    },
    PayloadTooLarge: {
      description: "The request is over API Gateway's own 10 MB payload limit (bodies over the API's 64 KB are a 400).",
      content: errorContent(gatewayExamples(413)),
    },
    TooManyRequests: {
      description: `${ERROR_STATUSES.RateLimited.description} The limit is ${RATE_LIMIT.requests} requests per minute per token.`,
      headers: { 'Retry-After': headerRef('Retry-After'), RateLimit: headerRef('RateLimit'), 'RateLimit-Policy': headerRef('RateLimit-Policy') },
      content: errorContent(errorExamples(EVERY_OPERATION_FAILS_WITH.filter(({ error }) => error instanceof RateLimited))),
    },
    InternalError: {
      description: 'Failure on the service side, or an endpoint that did not answer in time (safe to retry); `request_id` identifies it in the logs.',
      content: errorContent({
        handler: { summary: 'Unexpected failure', value: { error: INTERNAL_ERROR, request_id: 'c7a1f0d2-5b3e-4e8a-9d61-2f4b8c0e7a13' } },
        ...gatewayExamples(500),
      }),
    },
  };
}

function sharedHeaders(): Record<string, Header> {
  const allowed = rateLimitHeaders({ remaining: 57, resetSeconds: 42 });
  return {
    RateLimit: {
      description: 'Requests left in the current one-minute window (`r`) and seconds until it resets (`t`).',
      schema: { type: 'string' },
      example: allowed.RateLimit,
    },
    'RateLimit-Policy': {
      description: `The quota: ${RATE_LIMIT.requests} requests (\`q\`) per ${RATE_LIMIT.windowSeconds}-second window (\`w\`), per token.`,
      schema: { type: 'string' },
      example: allowed['RateLimit-Policy'],
    },
    'Retry-After': {
      description: 'Seconds until the next window opens.',
      schema: { type: 'integer', minimum: 1, maximum: RATE_LIMIT.windowSeconds },
      example: 42,
    },
    ETag: {
      description: 'Strong tag of the served body: the same for the same version and watermark. Send it back as `If-None-Match`.',
      schema: { type: 'string' },
      example: '"577d2eff1378cbcc8207097a0e498908"',
    },
    'X-Version-Id': { description: 'The version served: the current version of the project.', schema: { type: 'string' }, example: 'ver_8c1d4e2f6a0b9e3d7f51' },
    'X-Version-Number': { description: "The served version's number.", schema: { type: 'integer', minimum: 1 }, example: 3 },
    'X-Script-SHA256': {
      description:
        'Lowercase hex SHA-256 of the stamped body, on a 304 too: a loader that keeps a copy runs it only while the copy still hashes to this (another script in the executor may have edited it).',
      schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    },
  };
}

// ---- Operations ----

interface OperationSpec {
  operationId: string;
  tag: 'Keys' | 'Versions' | 'Webhooks' | 'Stats';
  summary: string;
  description: string;
  query: z.core.$ZodType;
  /** The route names one key in its path (`{key_id}`). */
  keyInPath?: true;
  body?: { schema: string; description: string; examples: Examples };
  ok: { schema: string; description: string; example: unknown };
  /** The failures this operation's own rule and input can produce, besides those of every operation. */
  errors: ErrorExample[];
}

const invalid = (summary: string, schema: z.core.$ZodType, input: unknown): ErrorExample => ({ summary, error: new InvalidInput(firstIssue(schema, input)) });
/** The 403 of a read-only token on a route that writes, with the service's own message for that route. */
const readOnlyToken = (entry: Route['entry']): ErrorExample => ({ summary: 'Read-only token', error: new ScopeMissing('read', scopeNeededBy(entry)) });
/** The 400 statsWindow answers for a window it refuses, in its own words. */
function statsWindowError(from: number, to: number): InvalidInput {
  try {
    statsWindow({ granularity: 'hour', by: 'result', from, to }, to);
  } catch (error) {
    if (error instanceof InvalidInput) return error;
  }
  throw new Error(`the window ${from}..${to} unexpectedly passed`);
}

const statsExample = {
  granularity: 'hour',
  by: 'result',
  from: 1_700_000_000,
  to: 1_700_007_200,
  buckets: [
    { t: 1_699_999_200, total: 41, counts: { ok: 38, revoked: 3, expired: 0, hwid_locked: 0, over_limit: 0 } },
    { t: 1_700_002_800, total: 0, counts: { ok: 0, revoked: 0, expired: 0, hwid_locked: 0, over_limit: 0 } },
    { t: 1_700_006_400, total: 12, counts: { ok: 12, revoked: 0, expired: 0, hwid_locked: 0, over_limit: 0 } },
  ],
} satisfies StatsResponse;

const unknownQuery = (): ErrorExample[] => [invalid('Unknown query parameter', NoQuery, { page: '2' })];

function operationSpecs(): Record<Route['entry'], OperationSpec> {
  return {
    'list-keys': {
      operationId: 'listKeys',
      tag: 'Keys',
      summary: 'List key metadata',
      description: `Keys in issue order, \`limit\` per page from \`offset\`. Raw key values are never returned. \`total\` counts every key issued, so a client pages until \`offset\` reaches it. With \`watermark\`, only the keys carrying it, read from the watermark index at a cost that grows with the matching keys, not the project.`,
      query: ListKeysQuery,
      ok: { schema: 'ListKeysResponse', description: 'A page of keys.', example: listKeysExample },
      errors: [
        invalid('limit out of range', ListKeysQuery, { limit: '500' }),
        invalid('offset not a whole number', ListKeysQuery, { offset: '-1' }),
        invalid('watermark with its WM_ prefix', ListKeysQuery, { watermark: 'WM_3f9a1c2e7b4d8a6f' }),
      ],
    },
    'issue-keys': {
      operationId: 'issueKeys',
      tag: 'Keys',
      summary: 'Issue keys (for a shop or a bot)',
      description: `Issues 1 to 100 keys and answers their raw values, in this answer only (the table keeps their SHA-256). \`duration\` is a preset (\`1d\`, \`7d\`, \`30d\`, \`90d\`, \`365d\`), whole seconds (60 to 315,360,000), or \`lifetime\` (\`expires_at\` ${LIFETIME_EXPIRES_AT}, 2100-01-01); default \`30d\`. \`max_fingerprints\` binds each key to that many machines on their first checks (null: not bound). With \`order_id\`, a repeat of the same body in the same project answers the same keys, raw values included, and issues nothing; the same \`order_id\` with another body is a 400. Counts once toward the rate limit.`,
      query: NoQuery,
      body: {
        schema: 'IssueKeysRequest',
        description: 'What to issue.',
        examples: {
          shop_order: {
            summary: "A shop's order",
            value: {
              count: 1,
              duration: '30d',
              max_fingerprints: 1,
              order_id: 'sellauth-48213',
              discord_id: '123456789012345678',
              note: 'SellAuth order 48213',
            },
          },
          batch: { summary: 'A batch of lifetime keys', value: { count: 25, duration: 'lifetime' } },
        },
      },
      ok: {
        schema: 'IssueKeysResponse',
        description: 'The keys, with their raw values (shown here only).',
        example: {
          keys: [{ id: EXAMPLE.keyId, key: 'sdk_7Qm2vYcJ0sX5kR9uWb3nHf1LtA8eDgZo', watermark: EXAMPLE.watermark, expires_at: 1766380800 }],
          repeated: false,
          issued_at: 1763788800,
        } satisfies IssueKeysResponse,
      },
      errors: [
        invalid('count out of range', IssueKeysBody, { count: 101 }),
        invalid('Unknown duration', IssueKeysBody, { duration: '2w' }),
        { summary: 'order_id used with another body or by another token', error: new OrderConflict('sellauth-48213') },
        { summary: 'order_id placed more than 72 hours ago', error: new OrderRepeatClosed('sellauth-48213', ORDER_REPEAT_WINDOW_SECONDS) },
        readOnlyToken('issue-keys'),
      ],
    },
    'get-key': {
      operationId: 'getKey',
      tag: 'Keys',
      summary: 'Read one key in detail',
      description:
        "The key's metadata (the key list's fields) and what selling adds: `note`, `discord_id`, `max_fingerprints`, the machines bound (`fingerprints`, each with `bound_at`), `last_check_at` (the last check that counted a use) `revoked_by` (the id of the API token that revoked the key, or `dashboard`) and `ban` (`{reason, until}` while a ban holds: `until` null for a ban until unbanned); null where unset. Never the raw value.",
      query: NoQuery,
      keyInPath: true,
      ok: {
        schema: 'KeyDetailResponse',
        description: 'The key.',
        example: {
          key: {
            ...listKeysExample.keys[0]!,
            note: 'SellAuth order 48213',
            discord_id: '123456789012345678',
            max_fingerprints: 1,
            fingerprints: [{ fingerprint: createHash('sha256').update('example-machine-id').digest('hex'), bound_at: 1763790000 }],
            last_check_at: 1763875200,
            ban: { reason: 'Shared the key in a public server', until: 1764480000 },
            revoked_by: null,
          },
        } satisfies KeyDetailResponse,
      },
      errors: [...unknownQuery(), { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) }],
    },
    'reset-hwid': {
      operationId: 'resetHwid',
      tag: 'Keys',
      summary: "Unbind a key's machines",
      description:
        'Unbinds every machine the key is bound to, in one write; the next checks bind anew (up to `max_fingerprints`). `cleared` counts the machines unbound: 0 for a key that is not bound.',
      query: NoQuery,
      body: { schema: 'ResetHwidRequest', description: 'The key to reset.', examples: { reset: { summary: 'Reset a key', value: { key_id: EXAMPLE.keyId } } } },
      ok: { schema: 'ResetHwidResponse', description: 'The machines are unbound.', example: { ok: true, cleared: 1 } satisfies ResetHwidResponse },
      errors: [
        invalid('Empty body', ResetHwidBody, {}),
        readOnlyToken('reset-hwid'),
        { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
      ],
    },
    'update-key': {
      operationId: 'updateKey',
      tag: 'Keys',
      summary: 'Edit a key',
      description:
        'Sets any of `note`, `discord_id`, `max_uses` and `max_fingerprints`; null clears one, a field left out stays as it is. One write; answers the key in detail as it is after it. Lowering `max_fingerprints` below the machines bound keeps them bound and binds no new machine until a reset (`reset-hwid`); null makes the key unbound. An empty body is a 400.',
      query: NoQuery,
      keyInPath: true,
      body: {
        schema: 'UpdateKeyRequest',
        description: 'The fields to change.',
        examples: {
          fix_note: { summary: 'Fix a note and link a Discord user', value: { note: 'SellAuth order 48213 (renewed)', discord_id: '123456789012345678' } },
          limit_machines: { summary: 'Give a key a machine limit', value: { max_fingerprints: 2 } },
          clear: { summary: 'Remove the use cap and the Discord link', value: { max_uses: null, discord_id: null } },
        },
      },
      ok: {
        schema: 'KeyDetailResponse',
        description: 'The key after the edit.',
        example: {
          key: {
            ...listKeysExample.keys[0]!,
            note: 'SellAuth order 48213 (renewed)',
            discord_id: '123456789012345678',
            max_fingerprints: 2,
            fingerprints: [],
            last_check_at: 1763875200,
            ban: null,
            revoked_by: null,
          },
        } satisfies KeyDetailResponse,
      },
      errors: [
        invalid('Empty body', UpdateKeyBody, {}),
        invalid('max_fingerprints out of range', UpdateKeyBody, { max_fingerprints: 11 }),
        readOnlyToken('update-key'),
        { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
      ],
    },
    'ban-key': {
      operationId: 'banKey',
      tag: 'Keys',
      summary: 'Ban a key, with a reason the buyer reads',
      description: `Every check of the key is refused \`KEY_BANNED\` with no use counted, until \`until\` (Unix seconds, in the future) or an unban; without \`until\` the ban lasts until unbanned. Validate answers \`{"valid": false, "code": "KEY_BANNED", "reason": ...}\` and a script fetch a 403 whose \`error\` sentence holds the reason. \`reason\` is ${BAN_REASON_LENGTH.min} to ${BAN_REASON_LENGTH.max} characters of one line. Banning a banned key replaces its reason and end. Order of codes: revoked, banned, expired, HWID locked, over limit. One write.`,
      query: NoQuery,
      body: {
        schema: 'BanKeyRequest',
        description: 'The key, the reason and the end.',
        examples: {
          week: { summary: 'A week off', value: { key_id: EXAMPLE.keyId, reason: 'Shared the key in a public server', until: 1764480000 } },
          until_unbanned: { summary: 'Until unbanned', value: { key_id: EXAMPLE.keyId, reason: 'Chargeback: contact support' } },
        },
      },
      ok: { schema: 'OkResponse', description: 'The key is banned.', example: { ok: true } satisfies OkResponse },
      errors: [
        invalid('No reason', BanKeyBody, { key_id: EXAMPLE.keyId }),
        {
          summary: 'until in the past',
          error: new InvalidInput('until must be in the future: a Unix time after now (1763875200); leave it out for a ban until unbanned'),
        },
        readOnlyToken('ban-key'),
        { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
      ],
    },
    'unban-key': {
      operationId: 'unbanKey',
      tag: 'Keys',
      summary: 'Lift the ban of a key',
      description: 'The next check of the key is judged as if there had been no ban. A key without a ban answers the same. One write.',
      query: NoQuery,
      body: { schema: 'UnbanKeyRequest', description: 'The key.', examples: { unban: { summary: 'Unban a key', value: { key_id: EXAMPLE.keyId } } } },
      ok: { schema: 'OkResponse', description: 'The key is not banned.', example: { ok: true } satisfies OkResponse },
      errors: [
        invalid('Empty body', UnbanKeyBody, {}),
        readOnlyToken('unban-key'),
        { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
      ],
    },
    'extend-key': {
      operationId: 'extendKey',
      tag: 'Keys',
      summary: 'Give a key more time',
      description: `The new \`expires_at\` is the later of now and the old \`expires_at\`, plus \`duration\` (the durations of issuing keys: \`1d\`, \`7d\`, \`30d\`, \`90d\`, \`365d\`, whole seconds 60 to 315,360,000, or \`lifetime\`, which sets ${LIFETIME_EXPIRES_AT}). An expired key runs again. One write, with no read before it.`,
      query: NoQuery,
      body: {
        schema: 'ExtendKeyRequest',
        description: 'The key and the time to add.',
        examples: { renewal: { summary: 'A renewal payment', value: { key_id: EXAMPLE.keyId, duration: '30d' } } },
      },
      ok: { schema: 'ExtendKeyResponse', description: "The key's new expiry.", example: { ok: true, expires_at: 1768972800 } satisfies ExtendKeyResponse },
      errors: [
        invalid('Unknown duration', ExtendKeyBody, { key_id: EXAMPLE.keyId, duration: '2w' }),
        readOnlyToken('extend-key'),
        { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
      ],
    },
    'revoke-key': {
      operationId: 'revokeKey',
      tag: 'Keys',
      summary: 'Revoke one key',
      description: 'The key stops working at once. Revoking a key that is already revoked succeeds again, so a retry is safe.',
      query: NoQuery,
      body: {
        schema: 'RevokeKeyRequest',
        description: 'The key to revoke.',
        examples: { revoke: { summary: 'Revoke a key', value: { key_id: EXAMPLE.keyId } } },
      },
      ok: { schema: 'OkResponse', description: 'The key is revoked.', example: { ok: true } satisfies OkResponse },
      errors: [
        invalid('Empty body', RevokeKeyBody, {}),
        readOnlyToken('revoke-key'),
        { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
      ],
    },
    'revoke-bulk': {
      operationId: 'revokeBulk',
      tag: 'Keys',
      summary: 'Revoke every key carrying a watermark',
      description:
        'Revokes every active key of the project whose watermark equals the given one: the 16 hex characters after `WM_` in a leaked script dump. `revoked_count` counts the keys this call revoked; no match is a success with 0. A call stops starting revokes about 20 s in, so that it always answers in time: `complete: false` then says keys may remain, and the caller repeats the same call until `complete` is true (a repeat counts only the keys it revokes, so the counts add up to the total).',
      query: NoQuery,
      body: {
        schema: 'RevokeBulkRequest',
        description: 'The leaked watermark.',
        examples: { revoke_bulk: { summary: 'Revoke a leaked watermark', value: { watermark: EXAMPLE.watermark } } },
      },
      ok: {
        schema: 'RevokeBulkResponse',
        description: 'Matching keys are revoked.',
        example: { ok: true, revoked_count: 3, complete: true } satisfies RevokeBulkResponse,
      },
      errors: [
        invalid('WM_ prefix copied along', RevokeBulkBody, { watermark: `WM_${EXAMPLE.watermark}` }),
        invalid('Not 16 lowercase hex characters', RevokeBulkBody, { watermark: '3f9a1c7e' }),
        readOnlyToken('revoke-bulk'),
      ],
    },
    'list-versions': {
      operationId: 'listVersions',
      tag: 'Versions',
      summary: 'List script versions',
      description: 'Every version of the project, highest `version_number` first, and the current one. Versions are uploaded in the dashboard.',
      query: NoQuery,
      ok: { schema: 'ListVersionsResponse', description: 'The versions.', example: listVersionsExample },
      errors: unknownQuery(),
    },
    rollback: {
      operationId: 'rollbackVersion',
      tag: 'Versions',
      summary: 'Roll back to a version',
      description: 'Makes the given version of the project the current one. Rolling back to the current version is a no-op success.',
      query: NoQuery,
      body: {
        schema: 'RollbackRequest',
        description: 'The version to make current.',
        examples: { rollback: { summary: 'Roll back', value: { version_id: EXAMPLE.olderVersionId } } },
      },
      ok: {
        schema: 'RollbackResponse',
        description: 'The version is current.',
        example: { ok: true, current_version_id: EXAMPLE.olderVersionId } satisfies RollbackResponse,
      },
      errors: [
        invalid('Empty body', RollbackBody, {}),
        readOnlyToken('rollback'),
        { summary: 'No such version in this project', error: new VersionNotFound(EXAMPLE.versionId) },
      ],
    },
    'list-webhooks': {
      operationId: 'listWebhooks',
      tag: 'Webhooks',
      summary: 'List webhook configurations',
      description:
        'Every webhook configuration of the project. Read-only: webhooks are managed in the dashboard. A `read` token sees each `url` with its token redacted; a `write` token sees it whole.',
      query: NoQuery,
      ok: { schema: 'ListWebhooksResponse', description: 'The webhook configurations.', example: listWebhooksExample },
      errors: unknownQuery(),
    },
    'get-stats': {
      operationId: 'getStats',
      tag: 'Stats',
      summary: "The project's traffic by hour or day",
      description: `Key checks by result, or executions by executor or version, in one bucket for every UTC hour (or day) that overlaps \`[from, to)\`, ascending, zero-filled. Counts are exact and include a check within 60 seconds. Hour buckets are kept ${GRANULARITY.hour.keptSeconds / 86_400} days, day buckets ${GRANULARITY.day.keptSeconds / 86_400}.`,
      query: StatsQuery,
      ok: { schema: 'StatsResponse', description: 'The buckets of the window.', example: statsExample },
      errors: [
        invalid('Unknown granularity', StatsQuery, { granularity: 'week' }),
        invalid('Timestamp in milliseconds', StatsQuery, { to: '1700000000000' }),
        { summary: 'from not before to', error: statsWindowError(1_700_003_600, 1_700_000_000) },
        { summary: 'Window past the limit', error: statsWindowError(1_700_000_000 - 8 * 86_400, 1_700_000_000) },
      ],
    },
  };
}

/**
 * An operation's failures, grouped by the status ERROR_STATUSES gives each domain error, with the gateway's own
 * answers of the same status beside them; 401, 413, 429 and 5xx are shared components.
 */
function errorResponses(spec: OperationSpec): Record<string, ResponseObject | Ref> {
  const failures = [...spec.errors, ...(spec.body ? BODY_FAILS_WITH : []), ...EVERY_OPERATION_FAILS_WITH];
  const byStatus = new Map<number, ErrorExample[]>();
  for (const failure of failures) byStatus.set(statusOf(failure.error), [...(byStatus.get(statusOf(failure.error)) ?? []), failure]);
  const responses: Record<string, ResponseObject | Ref> = { 401: responseRef('Unauthorized') };
  for (const [status, examples] of [...byStatus].sort(([a], [b]) => a - b)) {
    if (status === statusOf(new RateLimited(1))) continue;
    const fromGateway = gatewayExamples(status);
    const descriptions: string[] = [...new Set(examples.map(({ error }) => ERROR_STATUSES[error.name].description))];
    if (Object.keys(fromGateway).length > 0) descriptions.push('Or API Gateway refused the request itself.');
    responses[status] = { description: descriptions.join(' '), content: errorContent({ ...errorExamples(examples), ...fromGateway }) };
  }
  if (spec.body) responses[413] = responseRef('PayloadTooLarge');
  return { ...responses, 429: responseRef('TooManyRequests'), 500: responseRef('InternalError') };
}

function operation(spec: OperationSpec): Operation {
  const responses: Record<string, ResponseObject | Ref> = {
    200: {
      description: spec.ok.description,
      headers: { RateLimit: headerRef('RateLimit'), 'RateLimit-Policy': headerRef('RateLimit-Policy') },
      content: { [JSON_TYPE]: { schema: schemaRef(spec.ok.schema), examples: { ok: { summary: spec.summary, value: spec.ok.example } } } },
    },
    ...errorResponses(spec),
  };

  return {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    security: SECURITY,
    parameters: [
      { $ref: '#/components/parameters/ProjectId' },
      ...(spec.keyInPath ? [{ $ref: '#/components/parameters/KeyId' }] : []),
      ...queryParameters(spec.query),
    ],
    ...(spec.body && {
      requestBody: {
        required: true,
        description: `${spec.body.description} JSON, \`Content-Type: application/json\`, at most ${MAX_BODY_BYTES / 1024} KB.`,
        content: { [JSON_TYPE]: { schema: schemaRef(spec.body.schema), examples: spec.body.examples } },
      },
    }),
    responses,
  };
}

// ---- The loader key check: public, its own tag ----

const EXAMPLE_FINGERPRINT = createHash('sha256').update('example-machine-id').digest('hex');
const EXAMPLE_BAN = { reason: 'Shared the key in a public server', until: 1764480000 };

function loaderOperation(): Operation {
  const tooMany: ErrorExample[] = [
    { summary: 'Over the per-key limit', error: new RateLimited(42, `Too many checks of this key: at most ${LOADER_LIMITS.perKeyPerMinute} per minute`) },
    {
      summary: 'Over the per-address limit',
      error: new RateLimited(42, `Too many key checks from this address: at most ${LOADER_LIMITS.perAddressPerMinute} per minute`),
    },
    {
      summary: 'Too many unknown keys from one address',
      error: new RateLimited(42, `Too many unknown keys from this address: at most ${ADDRESS_COUNTING.invalidKeysPerMinute} per minute`),
    },
  ];
  const invalid: ErrorExample[] = [
    invalidBody('No key', { project_id: EXAMPLE.projectId, fingerprint: EXAMPLE_FINGERPRINT, executor: 'Wave' }),
    invalidBody('A raw machine id instead of its hash', { project_id: EXAMPLE.projectId, key: 'sdk_…', fingerprint: 'HWID-1234', executor: 'Wave' }),
    ...BODY_FAILS_WITH,
  ];
  const refused = (code: string) => ({ summary: code, value: { valid: false, code } });
  return {
    operationId: 'validateKey',
    tags: ['Loader'],
    summary: "Check a buyer's key",
    description: `Called by the script's loader at every execution, with no bearer token. Answers 200 for every well-formed request, whatever the key's state: \`valid: true\` counts one use; a refusal counts none. When several refusals apply, revoked wins over banned, which wins over expired, then HWID locked, then over-limit; a banned key's answer carries the publisher's \`reason\`; an unknown key, a key of another project and an unknown project are all \`KEY_INVALID\`. After a revoke or bulk revoke answered 200, every later check of those keys answers \`KEY_REVOKED\`. Limits: ${LOADER_LIMITS.perKeyPerMinute} checks per minute per key, ${LOADER_LIMITS.perAddressPerMinute} per client address (an IPv6 client is its /64) and ${ADDRESS_COUNTING.invalidKeysPerMinute} unknown keys per address; past them, 429 with \`Retry-After\`. In AWS the loader routes are served at the stack's \`LoaderUrl\` output (their own HTTP API) or the custom domain's base URL; that API's own throttle answers 429 \`{"message":"Too Many Requests"}\` without \`Retry-After\`.`,
    security: [],
    parameters: [],
    requestBody: {
      required: true,
      description: `The key check. JSON, \`Content-Type: application/json\`, at most ${MAX_BODY_BYTES / 1024} KB. Fields not listed are ignored.`,
      content: {
        [JSON_TYPE]: {
          schema: schemaRef('LoaderCheckRequest'),
          examples: {
            check: {
              summary: 'A check',
              value: { project_id: EXAMPLE.projectId, key: 'sdk_7Qm2vYcJ0sX5kR9uWb3nHf1LtA8eDgZo', fingerprint: EXAMPLE_FINGERPRINT, executor: 'Wave' },
            },
          },
        },
      },
    },
    responses: {
      200: {
        description: 'Whether the key may run.',
        content: {
          [JSON_TYPE]: {
            schema: schemaRef('LoaderCheckResponse'),
            examples: {
              valid: { summary: 'KEY_VALID', value: { valid: true, code: 'KEY_VALID', key_id: EXAMPLE.keyId, expires_at: 1766380800, uses_left: 41 } },
              revoked: refused('KEY_REVOKED'),
              banned: { summary: 'KEY_BANNED', value: { valid: false, code: 'KEY_BANNED', reason: 'Shared the key in a public server' } },
              expired: refused('KEY_EXPIRED'),
              hwid_locked: refused('KEY_HWID_LOCKED'),
              over_limit: refused('KEY_OVER_LIMIT'),
              invalid: refused('KEY_INVALID'),
            },
          },
        },
      },
      400: { description: ERROR_STATUSES.InvalidInput.description, content: errorContent(errorExamples(invalid)) },
      413: responseRef('PayloadTooLarge'),
      429: {
        description: 'Past a limit; wait `Retry-After` seconds.',
        headers: { 'Retry-After': headerRef('Retry-After') },
        content: errorContent(errorExamples(tooMany)),
      },
      500: responseRef('InternalError'),
    },
  };
}

/** `POST /v1/loader/script`: the same body and check as validate; the script on 200, 304 for a cached copy, 403 refusals. */
function scriptOperation(): Operation {
  const check = loaderOperation();
  const versionHeaders = {
    ETag: headerRef('ETag'),
    'X-Version-Id': headerRef('X-Version-Id'),
    'X-Version-Number': headerRef('X-Version-Number'),
    'X-Script-SHA256': headerRef('X-Script-SHA256'),
  };
  return {
    operationId: 'fetchScript',
    tags: ['Loader'],
    summary: "Fetch the script for a buyer's key",
    description: `Called by the stub loader at every execution, with no bearer token and the body of the key check. One fetch is one check: the same codes in the same order, the same limits, one use counted per 200 or 304 and none otherwise. A valid key gets the project's current version's script with every \`WM_XXXXXXXXXXXXXXXX\` replaced by \`WM_<its watermark>\` (a script without the placeholder gets the line \`--WM_<watermark>\` in front). \`If-None-Match\` with the \`ETag\` of the copy the loader holds answers 304 without a body. After a rollback answered 200 or an upload finished, the next fetch serves the new version; after a revoke answered 200, the next fetch of that key is refused.`,
    security: [],
    parameters: [
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'The `ETag` of the copy the loader holds.',
        schema: { type: 'string' },
        example: '"577d2eff1378cbcc8207097a0e498908"',
      },
    ],
    requestBody: check.requestBody,
    responses: {
      200: {
        description: "The script, stamped with the key's watermark. `Cache-Control: private, no-store`.",
        headers: versionHeaders,
        content: {
          'text/plain; charset=utf-8': {
            schema: { type: 'string' },
            examples: { script: { summary: 'A stamped script', value: 'local WATERMARK = "WM_3f9a1c7e5b2d8046"\nprint("running")\n' } },
          },
        },
      },
      304: { description: 'The copy named by `If-None-Match` is current: no body (one use counted).', headers: versionHeaders },
      400: check.responses[400]!,
      403: {
        description: 'The key may not run: a sentence for the buyer, and the code. No use counted, no script bytes.',
        content: {
          [JSON_TYPE]: {
            schema: schemaRef('LoaderScriptRefused'),
            examples: Object.fromEntries(
              REFUSAL_CODES.map((code) => {
                const error = code === 'KEY_BANNED' ? refusalSentence({ code, ban: EXAMPLE_BAN }) : REFUSAL_SENTENCES[code];
                return [code, { summary: code, value: { error, valid: false, code } }];
              }),
            ),
          },
        },
      },
      404: {
        description: 'A valid key of a project with no version yet (no use counted).',
        content: errorContent({ none: { summary: 'No version yet', value: { error: NO_VERSION_YET } } }),
      },
      413: check.responses[413]!,
      429: check.responses[429]!,
      500: check.responses[500]!,
    },
  };
}

/** `GET /v1/loader/stub/{project_id}`: the hosted stub loader, public text with an ETag. */
function stubOperation(): Operation {
  return {
    operationId: 'getStubLoader',
    tags: ['Loader'],
    summary: "The project's hosted stub loader",
    description:
      'What buyers run, with no bearer token: `script_key = "KEY"` and then `loadstring(game:HttpGet("<this URL>"))()`. The stub loader (`examples/roblox-loader.luau`) with its settings naming this project and the loader routes\' base URL (the one this request came through); it reads the global `script_key` and fetches the script with `POST /v1/loader/script`. The same for every buyer of the project: `Cache-Control: public`, a strong `ETag`, and 304 for `If-None-Match` equal to it.',
    security: [],
    parameters: [
      { name: 'project_id', in: 'path', required: true, description: 'The project (the script id).', schema: { type: 'string' }, example: EXAMPLE.projectId },
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'The `ETag` of the copy the client holds.',
        schema: { type: 'string' },
        example: '"0b6f3c1e9a7d2f4058e1c3b7a9d6f201"',
      },
    ],
    responses: {
      200: {
        description: `The stub loader, as text. \`Cache-Control: public, max-age=${STUB_MAX_AGE_SECONDS}\`.`,
        headers: { ETag: headerRef('ETag') },
        content: {
          'text/plain; charset=utf-8': {
            schema: { type: 'string' },
            examples: { stub: { summary: 'The stub (its start)', value: '--[[\n  Stub loader ...' } },
          },
        },
      },
      304: { description: 'The copy named by `If-None-Match` is current: no body.', headers: { ETag: headerRef('ETag') } },
      404: { description: 'No such project.', content: errorContent({ none: { summary: 'Unknown project', value: { error: PROJECT_NOT_FOUND } } }) },
      500: responseRef('InternalError'),
    },
  };
}

const invalidBody = (summary: string, input: unknown): ErrorExample => ({ summary, error: new InvalidInput(firstIssue(LoaderCheckRequest, input)) });

const DESCRIPTION = `Manage a script-distribution project over HTTP: issue keys (for a shop or a bot, idempotent by order id), read, list and revoke them (one by id, or every key carrying a leaked watermark), ban and unban them with a reason the buyer reads, extend and edit them, reset a key's bound machines, list script versions and roll back, read webhook configurations.

- **Authentication**: every request sends \`Authorization: Bearer <API_TOKEN>\`; a missing, unknown or revoked token gets 401.
- **Token scopes**: a \`read\` token may call the GET operations only; on the operations that write (issue, edit, reset-hwid, ban, unban, extend, revoke, bulk revoke, rollback) it gets 403 naming the \`write\` scope it lacks. A \`write\` token (the default) may call them all.
- **Access**: a project is visible to its owner only (anyone else gets 404 \`${PROJECT_NOT_FOUND}\`), and must be on the Business plan (403 otherwise).
- **Rate limit**: ${RATE_LIMIT.requests} requests per minute per token, in fixed one-minute windows. Every answer carries \`RateLimit\` and \`RateLimit-Policy\`; a 429 carries \`Retry-After\` (seconds).
- **Pagination**: \`limit\` (default ${KEYS_PAGE.defaultLimit}, max ${KEYS_PAGE.maxLimit}) and \`offset\` (default ${KEYS_PAGE.defaultOffset}) on the key list.
- **Watermark**: exactly 16 lowercase hex characters (\`${WATERMARK_PATTERN.source}\`), the text after \`WM_\` in a leaked dump.
- **Bodies**: JSON with \`Content-Type: application/json\`, at most ${MAX_BODY_BYTES / 1024} KB (${MAX_BODY_BYTES} bytes). A JSON object sent with no \`Content-Type\` or with curl's default \`application/x-www-form-urlencoded\` is read as JSON too; an empty body is \`{}\`.
- **Errors**: always \`{"error": "..."}\`; failures on the service side add \`request_id\`.
- **Versioning**: the version is the path prefix \`/v1\`.`;

export function buildOpenApiDocument(): OpenApiDocument {
  const specs = operationSpecs();
  const paths: OpenApiDocument['paths'] = {};
  for (const route of ROUTES) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operation(specs[route.entry]);
  }
  paths[LOADER_ROUTE.path] = { [LOADER_ROUTE.method.toLowerCase()]: loaderOperation() };
  paths[SCRIPT_ROUTE.path] = { [SCRIPT_ROUTE.method.toLowerCase()]: scriptOperation() };
  paths[STUB_ROUTE.path] = { [STUB_ROUTE.method.toLowerCase()]: stubOperation() };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Script Distribution Developer API',
      version: '1.0.0',
      summary: 'Keys, versions and webhooks of a script-distribution project.',
      description: DESCRIPTION,
    },
    servers: [
      {
        url: '{baseUrl}',
        description: 'The `ApiUrl` output of `cdk deploy` (the Loader routes: `LoaderUrl`), the custom domain, or the local stack of `npm start`.',
        variables: {
          baseUrl: { default: 'http://127.0.0.1:3000', description: 'Base URL without a trailing slash; the local stack listens on http://127.0.0.1:3000.' },
        },
      },
    ],
    security: SECURITY,
    tags: [
      { name: 'Keys', description: 'Issued keys: metadata, revocation one by one or by leaked watermark.' },
      { name: 'Versions', description: 'Script versions and the current-version pointer.' },
      { name: 'Webhooks', description: 'Webhook configurations (read-only; managed in the dashboard).' },
      { name: 'Stats', description: "The project's key checks and executions by hour or day." },
      {
        name: 'Loader',
        description:
          "The buyer's loader asks whether its key may run, or fetches the script it may run. Public: no bearer token. In AWS at the `LoaderUrl` output (or the custom domain), not at `ApiUrl`.",
      },
    ],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API token the dashboard issues (`sdt_…`); only its SHA-256 is stored.' },
      },
      parameters: {
        ProjectId: {
          name: 'id',
          in: 'path',
          required: true,
          description: 'Project identifier.',
          schema: { type: 'string', pattern: PATH_ID_PATTERN.source },
          example: EXAMPLE.projectId,
        },
        KeyId: {
          name: 'key_id',
          in: 'path',
          required: true,
          description: 'Key identifier (`key_…`), as the key list and the issue call give it.',
          schema: { type: 'string', pattern: PATH_ID_PATTERN.source },
          example: EXAMPLE.keyId,
        },
      },
      headers: sharedHeaders(),
      schemas: buildSchemas(),
      responses: sharedResponses(),
    },
  };
}

/** Where `npm run openapi` writes the document: the repository root. */
export const OPENAPI_PATH = fileURLToPath(new URL('../openapi.json', import.meta.url));

/** The checked-in form: 2-space indent and a final newline, so regenerating an unchanged document is a no-op. */
export function serializeOpenApiDocument(document: OpenApiDocument = buildOpenApiDocument()): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
