import * as z from 'zod/mini';
import type { Route } from '#http/routes';
import { WATERMARK_PATTERN } from '#schemas/formats';
import {
  LOADER_TIMING_DESCRIPTION,
  LoaderCheckBanned,
  LoaderCheckRefused,
  LoaderCheckRequest,
  LoaderCheckResponse,
  LoaderCheckValid,
  LoaderScriptRefused,
} from '#schemas/loader';
import { RevokeBulkBody, RevokeKeyBody, RollbackBody } from '#schemas/requests';
import { IssuedKeySchema, KeyDetailSchema, KeySchema, VersionSchema, WebhookSchema } from '#schemas/resources';
import { ErrorResponse, ListKeysResponse, ListVersionsResponse, RevokeBulkResponse, RollbackResponse } from '#schemas/responses';
import { EXAMPLE } from './examples';
import { OWNER_DOCS } from './owner-docs';
import type { JsonSchema } from './types';

// The document's components.schemas: the handlers' zod schemas (each route's answer and body, from its
// definition), with the documentation JSON Schema cannot read from them.

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

  docs.add(ListKeysResponse.shape.total, {
    description: 'Number of keys ever issued in the project (revoked ones included); with the `watermark` filter, the number carrying that watermark.',
  });
  docs.add(ListVersionsResponse.shape.current_version_id, { description: 'The current version; null only before the first upload.' });
  docs.add(RevokeBulkResponse.shape.revoked_count, { description: 'Keys this call revoked; 0 when no active key carries the watermark.' });
  docs.add(RevokeBulkResponse.shape.complete, {
    description: 'True when every matching key is revoked. False when the call stopped to answer in time: repeat the same call for the rest.',
  });
  docs.add(RollbackResponse.shape.current_version_id, { description: 'Equal to the requested `version_id`.' });
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

/**
 * The order openapi.json has listed the components in since each was added, kept so that adding a route adds lines
 * to the file and moves none; a component not listed here (a new route's) comes after these.
 */
const PUBLISHED_ORDER = [
  'Key',
  'Version',
  'Webhook',
  'ListKeysResponse',
  'OkResponse',
  'RevokeBulkResponse',
  'ListVersionsResponse',
  'RollbackResponse',
  'ListWebhooksResponse',
  'IssuedKey',
  'IssueKeysResponse',
  'KeyDetail',
  'KeyDetailResponse',
  'ResetHwidResponse',
  'ExtendKeyResponse',
  'StatsResponse',
  'ErrorResponse',
  'RevokeKeyRequest',
  'RevokeBulkRequest',
  'RollbackRequest',
  'IssueKeysRequest',
  'ResetHwidRequest',
  'BanKeyRequest',
  'UnbanKeyRequest',
  'ExtendKeyRequest',
  'UpdateKeyRequest',
];

/** `named` in PUBLISHED_ORDER; a name given two different schemas is a mistake in a route's definition. */
function inPublishedOrder(named: [string, z.core.$ZodType][]): Record<string, z.core.$ZodType> {
  const byName = new Map<string, z.core.$ZodType>();
  for (const [name, schema] of named) {
    if (byName.has(name) && byName.get(name) !== schema) throw new Error(`Two schemas are named ${name} in the OpenAPI document`);
    byName.set(name, schema);
  }
  const rank = (name: string) => (PUBLISHED_ORDER.includes(name) ? PUBLISHED_ORDER.indexOf(name) : PUBLISHED_ORDER.length);
  return Object.fromEntries([...byName].sort(([a], [b]) => rank(a) - rank(b)));
}

/** The components: the resources the answers share, each route's answer and body, the error, and the loader's schemas. */
export function buildSchemas(routes: readonly Route[]): Record<string, JsonSchema> {
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

  const operations = routes.map((route) => ({ route, doc: OWNER_DOCS[route.entry]() }));
  const answers = inPublishedOrder([
    ['Key', KeySchema],
    ['Version', VersionSchema],
    ['Webhook', WebhookSchema],
    ['IssuedKey', IssuedKeySchema],
    ['KeyDetail', KeyDetailSchema],
    ...operations.map(({ doc }): [string, z.core.$ZodType] => [doc.ok.name, doc.ok.schema]),
    ['ErrorResponse', ErrorResponse],
  ]);
  const bodies = inPublishedOrder(
    operations.flatMap(({ route, doc }): [string, z.core.$ZodType][] =>
      doc.requestBody && 'body' in route && route.body ? [[doc.requestBody.name, route.body]] : [],
    ),
  );
  return {
    ...componentSchemas(docs, 'output', answers),
    ...componentSchemas(docs, 'output', { LoaderCheckResponse }),
    ...componentSchemas(docs, 'output', { LoaderCheckValid, LoaderCheckRefused, LoaderCheckBanned, LoaderScriptRefused }),
    ...componentSchemas(docs, 'input', { ...bodies, LoaderCheckRequest }),
  };
}
