import { describe, expect, it } from 'vitest';
import { EVENT_NAMES, KeySchema, VersionSchema, WebhookSchema } from '#schemas/resources';
import { ErrorResponse, ListKeysResponse, RevokeBulkResponse, RollbackResponse } from '#schemas/responses';

const key = {
  id: 'key_1',
  user_hash: 'a'.repeat(64),
  tier: 'standard',
  watermark: '0123456789abcdef',
  issued_at: 1_700_000_000,
  expires_at: 1_702_592_000,
  max_uses: null,
  current_uses: 0,
  revoked: 0,
};

const webhook = {
  id: 'whk_1',
  url: 'https://discord.com/api/webhooks/1/abc',
  events: '["version_deployed","key_abuse"]',
  enabled: 1,
  created_at: 1_700_000_000,
  updated_at: 1_700_000_000,
};

describe('Key (spec §2.1)', () => {
  it('accepts the spec fields, with a numeric revoked flag and a nullable max_uses', () => {
    expect(KeySchema.safeParse(key).success).toBe(true);
    expect(KeySchema.safeParse({ ...key, revoked: 1, max_uses: 10 }).success).toBe(true);
  });

  it.each([
    ['a boolean revoked flag', { revoked: true }],
    ['a revoked flag other than 0/1', { revoked: 2 }],
    ['an uppercase watermark', { watermark: '0123456789ABCDEF' }],
    ['a short watermark', { watermark: '0123' }],
    ['a float timestamp', { issued_at: 1.5 }],
    ['a raw key value', { key: 'sk_live_secret' }],
    ['an internal attribute', { issueSeq: 1 }],
  ])('refuses %s', (_case, change) => {
    expect(KeySchema.safeParse({ ...key, ...change }).success).toBe(false);
  });
});

describe('Version (spec §2.2)', () => {
  it('accepts the spec fields, notes possibly empty', () => {
    expect(VersionSchema.safeParse({ id: 'ver_1', version_number: 1, uploaded_at: 1, size_bytes: 0, notes: '' }).success).toBe(true);
  });

  it('refuses a missing notes field', () => {
    expect(VersionSchema.safeParse({ id: 'ver_1', version_number: 1, uploaded_at: 1, size_bytes: 0 }).success).toBe(false);
  });
});

describe('Webhook configuration (spec §2.3)', () => {
  it('keeps events a JSON-encoded string and enabled a 0/1 flag', () => {
    expect(WebhookSchema.safeParse(webhook).success).toBe(true);
    expect(WebhookSchema.safeParse({ ...webhook, events: ['version_deployed'] }).success).toBe(false);
    expect(WebhookSchema.safeParse({ ...webhook, enabled: true }).success).toBe(false);
  });

  it('knows the five events of spec §6.1', () => {
    expect([...EVENT_NAMES].sort()).toEqual(['clone_detected', 'execution_drop', 'key_abuse', 'new_executor', 'version_deployed']);
  });
});

describe('responses (spec §4, §7)', () => {
  it('shape the list of keys as { keys, total } and nothing else', () => {
    expect(ListKeysResponse.safeParse({ keys: [key], total: 1 }).success).toBe(true);
    expect(ListKeysResponse.safeParse({ keys: [key], total: 1, next: 2 }).success).toBe(false);
  });

  it('answer bulk revoke with ok and an integer revoked_count, rollback with the new current version', () => {
    expect(RevokeBulkResponse.safeParse({ ok: true, revoked_count: 3, complete: true }).success).toBe(true);
    expect(RevokeBulkResponse.safeParse({ ok: true, revoked_count: '3', complete: true }).success).toBe(false);
    expect(RollbackResponse.safeParse({ ok: true, current_version_id: 'ver_1' }).success).toBe(true);
  });

  it('give every error a string error field', () => {
    expect(ErrorResponse.safeParse({ error: 'Project not found' }).success).toBe(true);
    expect(ErrorResponse.safeParse({ message: 'Project not found' }).success).toBe(false);
  });
});
