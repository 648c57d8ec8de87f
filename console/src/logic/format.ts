/**
 * How the console writes numbers, times and key states. Plain functions (no DOM), so the unit tests run them as the
 * pages do. Times are UTC: a publisher and their support staff read the same hour.
 */

/** The fixed far-future `expires_at` of a `lifetime` key (DESIGN.md "Selling keys"; LIFETIME_EXPIRES_AT on the server). */
export const LIFETIME_EXPIRES_AT = 4_102_444_800;

const NUMBER = new Intl.NumberFormat('en-US');

export function formatCount(value: number): string {
  return NUMBER.format(value);
}

/** `2026-11-26 09:32 UTC`; a dash for a time never set. */
export function formatTime(unixSeconds: number | null | undefined): string {
  if (unixSeconds === null || unixSeconds === undefined) return '—';
  const iso = new Date(unixSeconds * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** Sizes as the version embed writes them: one decimal, KB for anything from 1 KB (1,024 bytes), MB from 1 MB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function formatExpiry(expiresAt: number): string {
  return expiresAt >= LIFETIME_EXPIRES_AT ? 'Never (lifetime)' : formatTime(expiresAt);
}

/** The fields of a key the status depends on; `ban` only once keys can be banned. */
export interface KeyState {
  revoked: number;
  expires_at: number;
  ban?: { reason: string; until: number | null } | null;
}

export type KeyStatus = 'Active' | 'Revoked' | 'Banned' | 'Expired';

/** In the order the loader check refuses: revoked, banned, expired (DESIGN.md "Key lifecycle"). */
export function keyStatus(key: KeyState, nowSeconds: number): KeyStatus {
  if (key.revoked === 1) return 'Revoked';
  if (key.ban && (key.ban.until === null || key.ban.until > nowSeconds)) return 'Banned';
  if (nowSeconds >= key.expires_at) return 'Expired';
  return 'Active';
}

/** `3 of 10`, or `3 (no cap)`. */
export function formatUses(currentUses: number, maxUses: number | null): string {
  return maxUses === null ? `${formatCount(currentUses)} (no cap)` : `${formatCount(currentUses)} of ${formatCount(maxUses)}`;
}

/** `1 of 2` bound machines, or `Not bound` for a key without `max_fingerprints`. */
export function formatMachines(bound: number, maxFingerprints: number | null): string {
  return maxFingerprints === null ? 'Not bound' : `${bound} of ${maxFingerprints}`;
}

/** A fingerprint is 64 hex: its head is enough to tell machines apart on screen. */
export function shortFingerprint(fingerprint: string): string {
  return fingerprint.length > 16 ? `${fingerprint.slice(0, 16)}…` : fingerprint;
}

/** A token's limits in words (`project prj_…, routes issue-keys`), or an empty string for a token without any. */
export function formatLimits(limits: { project_id?: string | undefined; routes?: readonly string[] | undefined }): string {
  const parts = [
    ...(limits.project_id === undefined ? [] : [`project ${limits.project_id}`]),
    ...(limits.routes === undefined ? [] : [`routes ${limits.routes.join(', ')}`]),
  ];
  return parts.join('; ');
}
