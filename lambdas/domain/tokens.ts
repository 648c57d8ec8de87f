import { createHash, randomBytes } from 'node:crypto';
import { RouteNotAllowed, ScopeMissing } from './errors';
import type { Caller } from './model';

/** Tokens are long random strings; only their SHA-256 is ever stored or logged. */
export function newApiToken(): string {
  return `sdt_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** RFC 6750 `Bearer <token68>`; the scheme is case-insensitive. Longer tokens than ours are refused unread. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]{1,512}=*)$/i;

/** The token from an `Authorization` header value, or undefined when it is missing or malformed. */
export function parseBearer(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header.trim())?.[1] : undefined;
}

/**
 * What a token may do (spec §5 leaves scopes open): `read` calls the three GET endpoints only, `write` (the
 * default) calls all six. A token keeps the scope it was created with.
 */
export const TOKEN_SCOPES = ['read', 'write'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * The scope a stored token (or an authorizer's answer) carries. Only `write` writes: no scope, or a value this code
 * does not know, grants the least. Tokens created before scopes existed carry none; the migration (`token migrate`,
 * run by `npm run deploy` and at every `npm start`) gives them LEGACY_TOKEN_SCOPE first, and one it has not reached
 * yet can read, never more.
 */
export function scopeOf(stored: unknown): TokenScope {
  return stored === 'write' ? 'write' : 'read';
}

/** Tokens created before scopes existed could always write: the migration keeps them able to. */
export const LEGACY_TOKEN_SCOPE: TokenScope = 'write';

/**
 * A token's id: what `token list` shows and `token revoke` takes. Derived from the token's hash (80 bits of a
 * SHA-256 of it, so the id tells nothing of the hash either), which gives tokens made before ids existed the same
 * id wherever it is needed.
 */
export const tokenIdOf = (tokenHash: string): string => `tok_${createHash('sha256').update(`token-id:${tokenHash}`, 'utf8').digest('hex').slice(0, 20)}`;

export const TOKEN_ID_PATTERN = /^tok_[0-9a-f]{20}$/;

/**
 * What a token may reach besides its scope allows: one project, and named routes (their entries, as in
 * lambdas/http/routes.ts). A shop's delivery hook gets `issue-keys` on its project and nothing else, so a leak of
 * it can neither read nor revoke keys, nor touch another project. Absent: every project and route of the owner.
 */
export interface TokenLimits {
  projectId?: string;
  routes?: readonly string[];
}

/** What the authorizer learns from a token: whose it is, which one, what it may do and where. */
export interface TokenGrant extends TokenLimits {
  ownerId: string;
  tokenId: string;
  scope: TokenScope;
}

/** The caller a token makes: its owner, its hash (the rate-limit bucket), the id derived from that, its scope. */
export const callerOfToken = (ownerId: string, tokenHash: string, scope: TokenScope, limits: TokenLimits = {}): Caller => ({
  ownerId,
  tokenHash,
  tokenId: tokenIdOf(tokenHash),
  scope,
  ...limits,
});

/**
 * The limits as the authorizer's context carries them (API Gateway keeps only strings, numbers and booleans there):
 * an empty string for none, routes joined by commas.
 */
export const limitsToContext = (limits: TokenLimits): { projectId: string; routes: string } => ({
  projectId: limits.projectId ?? '',
  routes: limits.routes?.join(',') ?? '',
});

export const limitsFromContext = (context: { projectId?: unknown; routes?: unknown } | null | undefined): TokenLimits => ({
  ...(typeof context?.projectId === 'string' && context.projectId !== '' && { projectId: context.projectId }),
  ...(typeof context?.routes === 'string' && context.routes !== '' && { routes: context.routes.split(',') }),
});

/** What a route needs of the caller's token, and what the route does, in words for the 403 of a token without it. */
export interface ScopeNeed {
  scope: TokenScope;
  doing: string;
  /** The route's entry, for a token limited to named routes. */
  route?: string;
}

/** `write` covers `read`; a read token asking to write is refused with a message naming the missing scope. */
export function requireScope(held: TokenScope, need: ScopeNeed): void {
  if (need.scope === 'write' && held !== 'write') throw new ScopeMissing(held, need);
}

/** A token limited to named routes calls those only; the 403 names the routes it may call. */
export function requireRoute(routes: readonly string[] | undefined, need: ScopeNeed): void {
  if (routes !== undefined && need.route !== undefined && !routes.includes(need.route)) throw new RouteNotAllowed(routes, need);
}

/**
 * The longest API Gateway answers from a cached authorizer decision (its results cache TTL). A revoked token stops
 * at once when the dashboard's cache flush succeeds, and within this many seconds when it fails.
 */
export const AUTHORIZER_CACHE_SECONDS = 30;

/** The authorizer function's timeout: no answer it computes can arrive later than this after its token read. */
export const AUTHORIZER_TIMEOUT_SECONDS = 10;

/**
 * A revoke flushes the authorizer cache twice: at once, and again this long after, when every authorizer run that
 * read the token before the revoke has ended. An answer in flight during the first flush, cached after it, would
 * otherwise let the revoked token through for another AUTHORIZER_CACHE_SECONDS.
 */
export const SECOND_FLUSH_AFTER_SECONDS = AUTHORIZER_TIMEOUT_SECONDS + 1;
