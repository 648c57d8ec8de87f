import { describe, expect, it } from 'vitest';
import {
  SESSION_IDLE_SECONDS,
  SESSION_MAX_SECONDS,
  sessionCookie,
  sessionExpiresAt,
  sessionHashOf,
  sessionIsLive,
  sessionNeedsTouch,
  sessionSecretOf,
} from '#domain/console-session';

const SECRET = `sds_${'a'.repeat(43)}`;

describe('console session rules', () => {
  it('ends 12 hours after the last use, and never later than 7 days after sign-in', () => {
    expect(sessionExpiresAt({ createdAt: 0, lastUsedAt: 0 })).toBe(SESSION_IDLE_SECONDS);
    expect(sessionExpiresAt({ createdAt: 0, lastUsedAt: SESSION_MAX_SECONDS - 60 })).toBe(SESSION_MAX_SECONDS);
    expect(sessionIsLive({ createdAt: 0, lastUsedAt: 100 }, 100 + SESSION_IDLE_SECONDS - 1)).toBe(true);
    expect(sessionIsLive({ createdAt: 0, lastUsedAt: 100 }, 100 + SESSION_IDLE_SECONDS)).toBe(false);
  });

  it('writes the last use at most once a minute', () => {
    expect(sessionNeedsTouch({ lastUsedAt: 1000 }, 1059)).toBe(false);
    expect(sessionNeedsTouch({ lastUsedAt: 1000 }, 1060)).toBe(true);
  });

  it('reads the secret from the Cookie pairs, the last sd_session winning, and refuses any other shape', () => {
    expect(sessionSecretOf([`theme=dark; sd_session=${SECRET}`])).toBe(SECRET);
    expect(sessionSecretOf([`sd_session=sds_${'b'.repeat(43)}`, `sd_session=${SECRET}`])).toBe(SECRET);
    expect(sessionSecretOf(['sd_session=sdt_not-a-session'])).toBeUndefined();
    expect(sessionSecretOf(['other=1'])).toBeUndefined();
  });

  it('hashes the secret: the stored key never is the cookie value', () => {
    expect(sessionHashOf(SECRET)).toMatch(/^[0-9a-f]{64}$/);
    expect(sessionHashOf(SECRET)).not.toContain(SECRET.slice(4));
  });

  it('sets the cookie HttpOnly, SameSite=Strict, on /console, Secure only when asked, and clears it with Max-Age=0', () => {
    expect(sessionCookie(SECRET, { secure: false, maxAgeSeconds: 60 })).toBe(`sd_session=${SECRET}; Path=/console; Max-Age=60; HttpOnly; SameSite=Strict`);
    expect(sessionCookie(SECRET, { secure: true, maxAgeSeconds: 60 })).toMatch(/; Secure$/);
    expect(sessionCookie('', { secure: false, maxAgeSeconds: 0 })).toBe('sd_session=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict');
  });
});
