import { describe, expect, it } from 'vitest';
import { LIFETIME_EXPIRES_AT as SERVER_LIFETIME } from '#schemas/requests';
import {
  formatBytes,
  formatExpiry,
  formatLimits,
  formatMachines,
  formatTime,
  formatUses,
  keyStatus,
  LIFETIME_EXPIRES_AT,
  shortFingerprint,
} from '../../../console/src/logic/format';

const NOW = 1_764_150_000;

describe('console formatting', () => {
  it('writes times in UTC to the minute, and a dash for a time never set', () => {
    expect(formatTime(0)).toBe('1970-01-01 00:00 UTC');
    expect(formatTime(1_764_149_520)).toBe('2025-11-26 09:32 UTC');
    expect(formatTime(null)).toBe('—');
  });

  it('writes sizes with one decimal from 1 KB, as the version embed does', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(12_595)).toBe('12.3 KB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.0 MB');
  });

  it('calls a lifetime key never-expiring, with the same far-future value the server uses', () => {
    expect(LIFETIME_EXPIRES_AT).toBe(SERVER_LIFETIME);
    expect(formatExpiry(LIFETIME_EXPIRES_AT)).toBe('Never (lifetime)');
    expect(formatExpiry(NOW)).toBe(formatTime(NOW));
  });

  it('judges a key in the order checks refuse: revoked, then banned, then expired', () => {
    const active = { revoked: 0, expires_at: NOW + 60 };
    expect(keyStatus(active, NOW)).toBe('Active');
    expect(keyStatus({ ...active, expires_at: NOW }, NOW)).toBe('Expired');
    expect(keyStatus({ revoked: 1, expires_at: NOW - 1, ban: { reason: 'x', until: null } }, NOW)).toBe('Revoked');
    expect(keyStatus({ ...active, expires_at: NOW - 1, ban: { reason: 'chargeback', until: null } }, NOW)).toBe('Banned');
    expect(keyStatus({ ...active, ban: { reason: 'cool off', until: NOW } }, NOW)).toBe('Active');
  });

  it('writes uses and machines with their caps, or says there is none', () => {
    expect(formatUses(3, 10)).toBe('3 of 10');
    expect(formatUses(1234, null)).toBe('1,234 (no cap)');
    expect(formatMachines(1, 2)).toBe('1 of 2');
    expect(formatMachines(0, null)).toBe('Not bound');
  });

  it('shortens a fingerprint to its first 16 characters', () => {
    expect(shortFingerprint('a'.repeat(64))).toBe(`${'a'.repeat(16)}…`);
    expect(shortFingerprint('abc')).toBe('abc');
  });
});

describe('formatLimits', () => {
  it("writes a token's project and routes, and nothing for a token without limits", () => {
    expect(formatLimits({ project_id: 'prj_a', routes: ['issue-keys', 'get-key'] })).toBe('project prj_a; routes issue-keys, get-key');
    expect(formatLimits({ routes: ['issue-keys'] })).toBe('routes issue-keys');
    expect(formatLimits({})).toBe('');
  });
});
