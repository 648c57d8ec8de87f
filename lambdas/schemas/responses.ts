import * as z from 'zod/mini';
import { STATS_DIMENSIONS, STATS_GRANULARITIES } from './requests';
import { IssuedKeySchema, KeyDetailSchema, KeySchema, VersionSchema, WebhookSchema } from './resources';

export const ListKeysResponse = z.strictObject({ keys: z.array(KeySchema), total: z.int().check(z.nonnegative()) });
export type ListKeysResponse = z.infer<typeof ListKeysResponse>;

export const OkResponse = z.strictObject({ ok: z.literal(true) });
export type OkResponse = z.infer<typeof OkResponse>;

export const RevokeBulkResponse = z.strictObject({
  ok: z.literal(true),
  revoked_count: z.int().check(z.nonnegative()),
  complete: z.boolean(),
});
export type RevokeBulkResponse = z.infer<typeof RevokeBulkResponse>;

export const ListVersionsResponse = z.strictObject({
  versions: z.array(VersionSchema),
  /** Null only for a project with no upload yet. */
  current_version_id: z.nullable(z.string()),
  /** Every version of the project, whatever the page shows. */
  total: z.int().check(z.nonnegative()),
});
export type ListVersionsResponse = z.infer<typeof ListVersionsResponse>;

export const RollbackResponse = z.strictObject({ ok: z.literal(true), current_version_id: z.string() });
export type RollbackResponse = z.infer<typeof RollbackResponse>;

export const ListWebhooksResponse = z.strictObject({
  webhooks: z.array(WebhookSchema),
  /** Every configuration of the project, whatever the page shows. */
  total: z.int().check(z.nonnegative()),
});
export type ListWebhooksResponse = z.infer<typeof ListWebhooksResponse>;

/** Every failure (spec §7). `request_id` comes with 5xx so a report can be matched to the logs. */
export const ErrorResponse = z.object({ error: z.string(), request_id: z.optional(z.string()) });
export type ErrorResponse = z.infer<typeof ErrorResponse>;

export const IssueKeysResponse = z.strictObject({
  keys: z.array(IssuedKeySchema),
  /** True when the call repeated an order and issued nothing: the keys are the order's, as first issued. */
  repeated: z.boolean(),
  /** When the keys were issued: the first call's time on a repeat. */
  issued_at: z.int(),
});
export type IssueKeysResponse = z.infer<typeof IssueKeysResponse>;

export const KeyDetailResponse = z.strictObject({ key: KeyDetailSchema });
export type KeyDetailResponse = z.infer<typeof KeyDetailResponse>;

export const ResetHwidResponse = z.strictObject({ ok: z.literal(true), cleared: z.int().check(z.nonnegative()) });
export type ResetHwidResponse = z.infer<typeof ResetHwidResponse>;

/** `POST /v1/projects/:id/keys/extend`: the key's new expiry. */
export const ExtendKeyResponse = z.strictObject({ ok: z.literal(true), expires_at: z.int().check(z.nonnegative()) });
export type ExtendKeyResponse = z.infer<typeof ExtendKeyResponse>;
/** One bucket of the stats answer: its start (a UTC hour or midnight), its total and its counts by name. */
const StatsBucketSchema = z.strictObject({
  t: z.int().check(z.nonnegative()),
  total: z.int().check(z.nonnegative()),
  counts: z.record(z.string(), z.int().check(z.nonnegative())),
});

export const StatsResponse = z.strictObject({
  granularity: z.enum(STATS_GRANULARITIES),
  by: z.enum(STATS_DIMENSIONS),
  from: z.int().check(z.nonnegative()),
  to: z.int().check(z.nonnegative()),
  buckets: z.array(StatsBucketSchema),
});
export type StatsResponse = z.infer<typeof StatsResponse>;

/** One watermark a leaked dump names (DESIGN.md, "Leak tracing that survives obfuscation: the hidden mark"). */
export const TracedWatermark = z.strictObject({
  watermark: z.string(),
  mark: z.enum(['visible', 'hidden']),
  /** The version a hidden mark was read against; null for a visible marker. */
  version_id: z.nullable(z.string()),
  /** For a hidden mark, the share of its places that agree with it (0..1); null for a visible marker. */
  agreement: z.nullable(z.number().check(z.gte(0), z.lte(1))),
  keys: z.array(z.strictObject({ id: z.string(), revoked: z.union([z.literal(0), z.literal(1)]) })),
});
export type TracedWatermark = z.infer<typeof TracedWatermark>;

export const TraceLeakResponse = z.strictObject({ found: z.array(TracedWatermark) });
export type TraceLeakResponse = z.infer<typeof TraceLeakResponse>;

/** One blacklist entry: exactly one of `fingerprint`, `discord_id`, `email_sha256` names the buyer. */
export const BlacklistEntrySchema = z.strictObject({
  id: z.string(),
  fingerprint: z.optional(z.string()),
  discord_id: z.optional(z.string()),
  email_sha256: z.optional(z.string()),
  reason: z.string(),
  /** Who added it: the token id, or `dashboard`. */
  added_by: z.string(),
  created_at: z.int(),
});
export type BlacklistEntrySchema = z.infer<typeof BlacklistEntrySchema>;

export const AddBlacklistResponse = z.strictObject({ id: z.string(), banned_keys: z.int().check(z.nonnegative()) });
export type AddBlacklistResponse = z.infer<typeof AddBlacklistResponse>;

export const ListBlacklistResponse = z.strictObject({ entries: z.array(BlacklistEntrySchema), total: z.int().check(z.nonnegative()) });
export type ListBlacklistResponse = z.infer<typeof ListBlacklistResponse>;
