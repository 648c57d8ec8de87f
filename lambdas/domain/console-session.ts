import { createHash, randomBytes } from 'node:crypto';
import { HOUR_SECONDS } from './time';
import type { TokenLimits, TokenScope } from './token-model';

/**
 * The publisher console's sessions (DESIGN.md "Publisher console", Session): opened with an API token, kept only as
 * the SHA-256 of a random secret that lives in an HttpOnly cookie, ended by sign-out, by 12 hours without use, by 7
 * days in all, and on the next request once the token that opened it is revoked.
 */

export const SESSION_IDLE_SECONDS = 12 * HOUR_SECONDS;
export const SESSION_MAX_SECONDS = 7 * 24 * HOUR_SECONDS;
/** A session's last use is written at most this often: a page's burst of requests costs one write, not one each. */
const SESSION_TOUCH_AFTER_SECONDS = 60;

/** The console's own limit per session, far above what any page asks for (a page load makes a handful of requests). */
export const CONSOLE_RATE_LIMIT = { requests: 600, windowSeconds: 60 } as const;
export const CONSOLE_RATE_LIMIT_MESSAGE = `Rate limit exceeded: the console allows ${CONSOLE_RATE_LIMIT.requests} requests a minute per session`;

/** Live sessions per token at most: opening another ends the oldest (DESIGN.md "Limits that protect every tenant"). */
export const MAX_SESSIONS_PER_TOKEN = 10;

const SESSION_COOKIE = 'sd_session';
const SESSION_COOKIE_PATH = '/console';
/**
 * Over HTTPS the cookie is `__Host-` prefixed, which browsers accept only with `Secure`, `Path=/` and no `Domain`:
 * no subdomain and no plain-http page can set or shadow it.
 */
const SECURE_SESSION_COOKIE = '__Host-sd_session';

/**
 * A stored session: whose, opened by which token, with that token's scope and limits (one project, named routes:
 * the session reaches no further than its token), and when. Never the cookie's secret.
 */
export interface ConsoleSession extends TokenLimits {
  ownerId: string;
  /** The token's hash: checked on each request, so a revoked token ends the session. */
  tokenHash: string;
  tokenId: string;
  scope: TokenScope;
  createdAt: number;
  lastUsedAt: number;
}

/** The cookie's value: 256 random bits. */
export const newSessionSecret = (): string => `sds_${randomBytes(32).toString('base64url')}`;

export const sessionHashOf = (secret: string): string => createHash('sha256').update(`console-session:${secret}`, 'utf8').digest('hex');

/** When the session ends unless used again: 12 hours after its last use, and never past 7 days after it opened. */
export const sessionExpiresAt = (session: Pick<ConsoleSession, 'createdAt' | 'lastUsedAt'>): number =>
  Math.min(session.lastUsedAt + SESSION_IDLE_SECONDS, session.createdAt + SESSION_MAX_SECONDS);

export const sessionIsLive = (session: Pick<ConsoleSession, 'createdAt' | 'lastUsedAt'>, now: number): boolean => now < sessionExpiresAt(session);

export const sessionNeedsTouch = (session: Pick<ConsoleSession, 'lastUsedAt'>, now: number): boolean => now - session.lastUsedAt >= SESSION_TOUCH_AFTER_SECONDS;

/**
 * Failed sign-ins (an unknown or revoked token) from one client address at most, in the rate limit's fixed windows:
 * past them every sign-in from the address is refused until the window ends, so guessing tokens costs a minute per
 * 30 guesses (DESIGN.md "Limits that protect every tenant").
 */
export const SIGN_IN_FAILURE_LIMIT = { requests: 30, windowSeconds: 60 } as const;

export const signInRefusal = (retryAfterSeconds: number): string =>
  `Too many failed sign-ins from this address: at most ${SIGN_IN_FAILURE_LIMIT.requests} a minute. Try again in ${retryAfterSeconds} s`;

/** The bucket of an address's failed sign-ins: apart from every token's and session's. */
export const signInBucket = (address: string): string => `signin#${address}`;

/** The rate-limit bucket of a session: apart from every token's. */
export const sessionRateBucket = (sessionHash: string): string => `console#${sessionHash}`;

/** A session as its owner sees it: an id that tells nothing of the cookie's secret or the stored hash. */
export const sessionIdOf = (sessionHash: string): string =>
  `ses_${createHash('sha256').update(`session-id:${sessionHash}`, 'utf8').digest('hex').slice(0, 20)}`;

export const SESSION_ID_PATTERN = /^ses_[0-9a-f]{20}$/;

/**
 * The sessions to end so that one more fits under MAX_SESSIONS_PER_TOKEN: the oldest of the token's live ones.
 * `sessions` are one token's.
 */
export function sessionsToEnd<T extends Pick<ConsoleSession, 'createdAt' | 'lastUsedAt'>>(sessions: readonly T[], now: number): T[] {
  const live = sessions.filter((session) => sessionIsLive(session, now)).sort((a, b) => a.createdAt - b.createdAt);
  return live.slice(0, Math.max(0, live.length - (MAX_SESSIONS_PER_TOKEN - 1)));
}

/** The session's secret from a Cookie header's pairs (the last one named `__Host-sd_session` or sd_session), or undefined. */
export function sessionSecretOf(cookies: readonly string[]): string | undefined {
  let found: string | undefined;
  for (const pair of cookies.flatMap((header) => header.split(';'))) {
    const at = pair.indexOf('=');
    const name = at === -1 ? '' : pair.slice(0, at).trim();
    if (name === SESSION_COOKIE || name === SECURE_SESSION_COOKIE) found = pair.slice(at + 1).trim();
  }
  return found && /^sds_[A-Za-z0-9_-]{43}$/.test(found) ? found : undefined;
}

/**
 * The Set-Cookie of a new session (or, with an empty value and no age, of its end): HttpOnly, SameSite=Strict, no
 * Domain; over https `__Host-sd_session` with `Path=/` and Secure, over http `sd_session` on /console.
 */
export function sessionCookie(value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return [
    `${options.secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE}=${value}`,
    `Path=${options.secure ? '/' : SESSION_COOKIE_PATH}`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
