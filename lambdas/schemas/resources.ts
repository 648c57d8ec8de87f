import * as z from 'zod/mini';
import { WATERMARK_PATTERN } from './formats';

// zod/mini rather than zod: the same schemas for ~13 KB instead of ~440 KB per Lambda bundle.

const unixSeconds = () => z.int().check(z.nonnegative());
const flag = () => z.union([z.literal(0), z.literal(1)]);

/** Spec §2.1: key metadata only; the raw key value is never part of it. */
export const KeySchema = z.strictObject({
  id: z.string(),
  user_hash: z.string(),
  tier: z.string(),
  watermark: z.string().check(z.regex(WATERMARK_PATTERN)),
  issued_at: unixSeconds(),
  expires_at: unixSeconds(),
  max_uses: z.nullable(z.int().check(z.positive())),
  current_uses: z.int().check(z.nonnegative()),
  revoked: flag(),
});
export type Key = z.infer<typeof KeySchema>;

/** Spec §2.2. */
export const VersionSchema = z.strictObject({
  id: z.string(),
  version_number: z.int().check(z.positive()),
  uploaded_at: unixSeconds(),
  size_bytes: z.int().check(z.nonnegative()),
  notes: z.string(),
});
export type Version = z.infer<typeof VersionSchema>;

/** Spec §6.1: the five events a webhook can subscribe to. */
export const EVENT_NAMES = ['execution_drop', 'new_executor', 'key_abuse', 'version_deployed', 'clone_detected'] as const;
const EventNameSchema = z.enum(EVENT_NAMES);
export type EventName = z.infer<typeof EventNameSchema>;

/** Spec §2.3: `events` stays a JSON-encoded string and `enabled` a 0/1 flag, exactly as the spec shows. */
export const WebhookSchema = z.strictObject({
  id: z.string(),
  url: z.string(),
  events: z.string(),
  enabled: flag(),
  created_at: unixSeconds(),
  updated_at: unixSeconds(),
});
export type Webhook = z.infer<typeof WebhookSchema>;

/** A machine a bound key holds: SHA-256 hex of the machine's id, as the loader sent it, and when it was bound. */
const BoundFingerprintSchema = z.strictObject({ fingerprint: z.string(), bound_at: unixSeconds() });

/** A ban: the reason the buyer reads, and when it ends by itself (null: when the key is unbanned). */
const KeyBanSchema = z.strictObject({ reason: z.string(), until: z.nullable(unixSeconds()) });

/**
 * One key in detail (DESIGN.md, "Selling keys"): the spec's fields and what selling adds, null where unset. The key
 * list keeps exactly the spec's fields (KeySchema).
 */
export const KeyDetailSchema = z.strictObject({
  ...KeySchema.shape,
  note: z.nullable(z.string()),
  discord_id: z.nullable(z.string()),
  max_fingerprints: z.nullable(z.int().check(z.positive())),
  fingerprints: z.array(BoundFingerprintSchema),
  /** The last check that counted a use (a refusal writes nothing). */
  last_check_at: z.nullable(unixSeconds()),
  /** The publisher's ban (DESIGN.md, "Key lifecycle"); null when there is none or its `until` has passed. */
  ban: z.nullable(KeyBanSchema),
  /**
   * Who revoked the key: the id of the API token (`tok_…`) that revoked it alone or by its watermark, or
   * `dashboard`; null while it is active, and for a key revoked before this was recorded.
   */
  revoked_by: z.nullable(z.string()),
});
export type KeyDetail = z.infer<typeof KeyDetailSchema>;

/** A key as an issue call answers it: `key` is the raw value, in this answer only. */
export const IssuedKeySchema = z.strictObject({
  id: z.string(),
  key: z.string(),
  watermark: z.string().check(z.regex(WATERMARK_PATTERN)),
  expires_at: unixSeconds(),
});
export type IssuedKey = z.infer<typeof IssuedKeySchema>;
