import type { TokenSummary } from '#adapters/token-store';
import { InvalidInput, KeyNotFound, ProjectNotFound } from '#domain/errors';
import {
  hashToken,
  issueToken,
  newApiToken,
  requireRoomForToken,
  requireWithinReach,
  revokeToken,
  type TokenLimits,
  tokenIdOf,
  widerLimits,
} from '#domain/tokens';
import { CreateTokenBody } from '#schemas/console';
import { defineConsoleRoute, json, NO_CONTENT, read, write } from '../console-route';
import { ROUTES } from '../routes';

/**
 * The owner's API tokens, as the dashboard's `token` commands make and revoke them. A session limited to a project
 * or to routes lists, makes and revokes only tokens within its own token's reach (DESIGN.md "Limits that protect
 * every tenant").
 */

class TokenNotFound extends KeyNotFound {
  override readonly message: string;
  constructor(tokenId: string) {
    super(tokenId);
    this.message = `Token ${tokenId} not found among your working tokens`;
  }
}

/** A token as the Tokens page shows it: its id, scope, creation and limits (absent ones absent). */
const tokenAnswer = (token: TokenSummary) => ({
  token_id: token.tokenId,
  scope: token.scope,
  created_at: token.createdAt,
  ...(token.projectId !== undefined && { project_id: token.projectId }),
  ...(token.routes !== undefined && { routes: token.routes }),
});

/** The limits a new token is asked for: `project_id` and `routes` (owner route entries, each known, once each). */
function newTokenLimits(body: { project_id?: string | undefined; routes?: string[] | undefined }): TokenLimits {
  const entries: readonly string[] = ROUTES.map((route) => route.entry);
  const unknown = body.routes?.filter((route) => !entries.includes(route)) ?? [];
  if (unknown.length > 0) throw new InvalidInput(`routes must name owner routes among ${entries.join(', ')}; unknown: ${unknown.join(', ')}`);
  return {
    ...(body.project_id !== undefined && { projectId: body.project_id }),
    ...(body.routes !== undefined && { routes: [...new Set(body.routes)] }),
  };
}

export const listTokens = defineConsoleRoute({
  method: 'GET',
  path: '/tokens',
  need: read('listing tokens'),
  everySession: true,
  run: async ({ stores, session, caller }) => {
    const tokens = await stores.tokens.tokensOf(session.ownerId);
    return json({ tokens: tokens.filter((token) => widerLimits(token, caller) === undefined).map(tokenAnswer) });
  },
});

export const createToken = defineConsoleRoute({
  method: 'POST',
  path: '/tokens',
  need: write('creating a token'),
  everySession: true,
  body: CreateTokenBody,
  run: async ({ body, stores, session, caller, now, trail, deps }) => {
    const { scope } = body;
    const limits = newTokenLimits(body);
    requireWithinReach({ scope, ...limits }, caller);
    if (limits.projectId !== undefined && (await stores.projects.getProject(limits.projectId))?.ownerId !== session.ownerId) throw new ProjectNotFound();
    await requireRoomForToken(stores.tokens, session.ownerId);
    const token = newApiToken();
    const tokenHash = hashToken(token);
    const tokenId = tokenIdOf(tokenHash);
    // At the gateway first, so a failure there leaves the table untouched (as the dashboard's `token create`).
    await deps.tokenKeys.register({ tokenHash, tokenId });
    await issueToken(stores.tokens, { ownerId: session.ownerId, tokenHash, now, scope, limits, by: trail.actor });
    return json({ token, ...tokenAnswer({ tokenId, scope, createdAt: now, ...limits }) });
  },
});

export const revokeTokenRoute = defineConsoleRoute({
  method: 'DELETE',
  path: '/tokens/{token_id}',
  need: write('revoking a token'),
  everySession: true,
  run: async ({ params, stores, session, caller, now, trail, deps }) => {
    const tokenId = params.token_id ?? '';
    const token = await stores.tokens.tokenById(tokenId);
    if (!token || token.ownerId !== session.ownerId || token.revokedAt !== undefined || widerLimits(token, caller) !== undefined)
      throw new TokenNotFound(tokenId);
    if (!(await revokeToken(stores.tokens, token, now, trail.actor))) throw new TokenNotFound(tokenId);
    await deps.tokenKeys.revoke(tokenId);
    await stores.tokens.markRevokeCleanedUp(tokenId, now);
    return NO_CONTENT;
  },
});
