import { createHash, randomBytes } from 'node:crypto';
import { type ApiActor, AUDIT_ACTIONS, dashboardEntry, ownerEntryBy } from './audit';
import { RouteNotAllowed, ScopeMissing, TokenLimitReached, TokenTooWide } from './errors';
import type { Caller } from './model';
import type { TokenWrites } from './ports';
import type { ScopeNeed, TokenGrant, TokenLimits, TokenScope } from './token-model';

export { type ScopeNeed, TOKEN_SCOPES, type TokenGrant, type TokenLimits, type TokenScope } from './token-model';

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

/** `write` covers `read`; a read token asking to write is refused with a message naming the missing scope. */
export function requireScope(held: TokenScope, need: ScopeNeed): void {
  if (need.scope === 'write' && held !== 'write') throw new ScopeMissing(held, need);
}

/** A token limited to named routes calls those only; the 403 names the routes it may call. */
export function requireRoute(routes: readonly string[] | undefined, need: ScopeNeed): void {
  if (routes !== undefined && need.route !== undefined && !routes.includes(need.route)) throw new RouteNotAllowed(routes, need);
}

/** A token's reach: its scope and its limits. */
type Reach = TokenLimits & { scope: TokenScope };

/**
 * How `candidate` reaches further than `holder` (DESIGN.md "Limits that protect every tenant"), in words, or
 * undefined when it reaches no further: writing where the holder reads, or limits wider than the holder's.
 */
export function widerReach(candidate: Reach, holder: Reach): string | undefined {
  if (candidate.scope === 'write' && holder.scope !== 'write') return 'the write scope (it has the read scope)';
  return widerLimits(candidate, holder);
}

/**
 * How `candidate`'s limits are wider than `holder`'s, in words, or undefined: another project or every project where
 * the holder has one, a route outside the holder's named routes or every route where the holder has named ones.
 */
export function widerLimits(candidate: TokenLimits, holder: TokenLimits): string | undefined {
  if (holder.projectId !== undefined && candidate.projectId !== holder.projectId)
    return `${candidate.projectId === undefined ? 'every project' : `project ${candidate.projectId}`} (it reaches project ${holder.projectId} only)`;
  if (holder.routes !== undefined) {
    const only = `(it calls only ${holder.routes.join(', ')})`;
    if (candidate.routes === undefined) return `every route ${only}`;
    const outside = candidate.routes.filter((route) => !holder.routes?.includes(route));
    if (outside.length > 0) return `${outside.join(', ')} ${only}`;
  }
  return undefined;
}

/** A session makes (or manages) only tokens within its own token's reach; a wider one is a 403 saying how. */
export function requireWithinReach(candidate: Reach, holder: Reach): void {
  const wider = widerReach(candidate, holder);
  if (wider !== undefined) throw new TokenTooWide(wider);
}

/**
 * An owner's working tokens at most (DESIGN.md "Limits that protect every tenant"): each token is an API key on the
 * usage plan, and an AWS account holds 10,000 API keys a Region for every owner together.
 */
export const MAX_TOKENS_PER_OWNER = 100;

/**
 * Room for one more token of `ownerId`, checked before anything is made (its API key at the gateway first), or the
 * 403 naming the limit. Two creations racing at the last place can both pass: the limit guards the account's keys
 * from one owner's loop, and a person or a script creating tokens one by one meets it exactly.
 */
export async function requireRoomForToken(store: { tokensOf(ownerId: string): Promise<readonly unknown[]> }, ownerId: string): Promise<void> {
  const working = (await store.tokensOf(ownerId)).length;
  if (working >= MAX_TOKENS_PER_OWNER)
    throw new TokenLimitReached(
      `An owner has at most ${MAX_TOKENS_PER_OWNER} working tokens, and this one has ${working}: revoke tokens no one uses, then create the token again`,
    );
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

/**
 * Keep a new token of `ownerId` by its hash, with its scope and limits, and the owner's `token.create` audit entry in
 * the same write; returns its id. The entry names the dashboard, or `by`: the console request that made it.
 */
export async function issueToken(
  store: Pick<TokenWrites, 'saveToken'>,
  token: { ownerId: string; tokenHash: string; now: number; scope?: TokenScope; limits?: TokenLimits; by?: ApiActor },
): Promise<string> {
  const { ownerId, tokenHash, now, scope = 'write', limits = {}, by } = token;
  const tokenId = tokenIdOf(tokenHash);
  const change = {
    ownerId,
    at: now,
    action: AUDIT_ACTIONS.createToken,
    target: { scope, project_id: limits.projectId ?? null, routes: limits.routes?.join(',') ?? null },
    outcome: { token_id: tokenId },
  };
  await store.saveToken({ ownerId, tokenId, tokenHash, scope, createdAt: now, ...limits }, by ? ownerEntryBy(by, change) : dashboardEntry(change));
  return tokenId;
}

/**
 * Revoke a working token, with the owner's `token.revoke` audit entry in the same write (naming the dashboard, or
 * `by`: the console request); false when it was revoked meanwhile, and then nothing is written.
 */
export function revokeToken(store: Pick<TokenWrites, 'revokeToken'>, token: TokenGrant & { tokenHash: string }, now: number, by?: ApiActor): Promise<boolean> {
  const change = { ownerId: token.ownerId, at: now, action: AUDIT_ACTIONS.revokeToken, target: { token_id: token.tokenId }, outcome: { scope: token.scope } };
  return store.revokeToken(token, now, by ? ownerEntryBy(by, change) : dashboardEntry(change));
}
