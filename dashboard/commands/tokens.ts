import type { MigratedToken, TokenSummary } from '#adapters/token-store';
import { type Flags, oneOf, UsageError } from '#dashboard/args';
import type { Command } from '#dashboard/command';
import { CommandError, type DashboardContext } from '#dashboard/context';
import type { AuditEntry } from '#domain/audit';
import {
  hashToken,
  issueToken,
  newApiToken,
  requireRoomForToken,
  revokeToken,
  TOKEN_ID_PATTERN,
  TOKEN_SCOPES,
  type TokenLimits,
  type TokenScope,
  tokenIdOf,
} from '#domain/tokens';
import { ROUTES } from '#http/routes';
import { auditLimit, idFlag, ownerId, requireOwner } from './input';

/**
 * `token create`, `token list`, `token revoke`, `token audit` and `token migrate`: an owner's API tokens, which the
 * table keeps as hashes only. `owner create` (owner.ts) makes an owner's first token the same way.
 */

function tokenId(flags: Flags): string {
  const text = flags.required('token-id');
  if (!TOKEN_ID_PATTERN.test(text))
    throw new UsageError(`--token-id must be a token id like tok_0123456789abcdef0123 (see "token list --owner ID"); got "${text}"`);
  return text;
}

/** `issue-keys,get-key` → owner API route entries (lambdas/http/routes.ts), each known, in the order given. */
function routeList(text: string): string[] {
  const entries: readonly string[] = ROUTES.map((route) => route.entry);
  const names = [...new Set(text.split(',').map((name) => name.trim()))];
  const unknown = names.filter((name) => !entries.includes(name));
  if (names.length === 0 || unknown.length > 0) throw new UsageError(`--routes must be a comma-separated list of routes: ${entries.join(', ')}; got "${text}"`);
  return names;
}

/**
 * A new token for an owner: registered at the gateway first, so a failure there leaves the table untouched. The
 * raw token is in the answer, this once; the table keeps its hash, its id and the owner's audit entry.
 */
export async function newTokenFor(
  context: DashboardContext,
  owner: string | undefined,
  scope: TokenScope,
  limits: TokenLimits = {},
): Promise<{ ownerId: string; token: string; tokenId: string }> {
  await context.tokenKeys.check();
  // A new owner has none yet; an owner's token past MAX_TOKENS_PER_OWNER is refused before its API key is made.
  if (owner !== undefined) await requireRoomForToken(context.stores.tokens, owner);
  const token = newApiToken();
  const tokenHash = hashToken(token);
  const tokenId = tokenIdOf(tokenHash);
  await context.tokenKeys.register({ tokenHash, tokenId });
  const now = context.now();
  const tokenOwner = owner ?? (await context.stores.dashboard.createOwner(now));
  await issueToken(context.stores.tokens, { ownerId: tokenOwner, tokenHash, now, scope, limits });
  return { ownerId: tokenOwner, token, tokenId };
}

/**
 * Rotation: create the new token, move the clients to it, revoke the old one. `--project` and `--routes` limit it
 * (TokenLimits): a shop's delivery hook gets `--project ID --routes issue-keys` and can do nothing else.
 */
export const tokenCreate: Command<
  { ownerId: string; scope: TokenScope; limits: TokenLimits },
  { token: string; tokenId: string; scope: TokenScope; project?: string; routes?: readonly string[] }
> = {
  name: 'token create',
  flags: {
    owner: { required: true, placeholder: 'ID' },
    scope: { placeholder: TOKEN_SCOPES.join('|') },
    project: { placeholder: 'ID' },
    routes: { placeholder: 'ROUTE,ROUTE' },
  },
  validate: (flags) => {
    const project = flags.optional('project');
    const routes = flags.optional('routes');
    return {
      ownerId: ownerId(flags),
      scope: oneOf('scope', flags.optional('scope') ?? 'write', TOKEN_SCOPES),
      limits: {
        ...(project !== undefined && { projectId: idFlag('project', project, 'a project', 'prj_0123456789abcdef0123') }),
        ...(routes !== undefined && { routes: routeList(routes) }),
      },
    };
  },
  async run(context, input) {
    await requireOwner(context, input.ownerId);
    const { projectId } = input.limits;
    if (projectId !== undefined && (await context.stores.projects.getProject(projectId))?.ownerId !== input.ownerId)
      throw new CommandError(`Project ${projectId} is not a project of owner ${input.ownerId}`);
    const { token, tokenId } = await newTokenFor(context, input.ownerId, input.scope, input.limits);
    return {
      token,
      tokenId,
      scope: input.scope,
      ...(projectId !== undefined && { project: projectId }),
      ...(input.limits.routes !== undefined && { routes: input.limits.routes }),
    };
  },
};

export const tokenList: Command<{ ownerId: string }, { tokens: TokenSummary[] }> = {
  name: 'token list',
  flags: { owner: { required: true, placeholder: 'ID' } },
  validate: (flags) => ({ ownerId: ownerId(flags) }),
  async run(context, input) {
    await requireOwner(context, input.ownerId);
    return { tokens: await context.stores.tokens.tokensOf(input.ownerId) };
  },
};

/**
 * The token stops at once: its items go from the table (the authorizer finds it no more), and in AWS its API key
 * is deleted and the stage's authorizer cache flushed. An unknown id writes nothing. The gateway's part is recorded
 * when it succeeds, so revoking a token whose key deletion or cache flush failed tries that part again; a token
 * revoked and cleaned up answers "already revoked".
 */
export const tokenRevoke: Command<{ tokenId: string }, { tokenId: string; revoked: true }> = {
  name: 'token revoke',
  flags: { 'token-id': { required: true, placeholder: 'ID' } },
  validate: (flags) => ({ tokenId: tokenId(flags) }),
  async run(context, input) {
    await context.tokenKeys.check();
    const { tokens } = context.stores;
    const token = await tokens.tokenById(input.tokenId);
    if (!token) throw new CommandError(`Token ${input.tokenId} not found: "token list --owner ID" shows an owner's tokens`);
    const alreadyRevoked = `Token ${input.tokenId} is already revoked`;
    if (token.revokedAt !== undefined && token.cleanedUp) throw new CommandError(`${alreadyRevoked} (at ${new Date(token.revokedAt * 1000).toISOString()})`);
    if (token.revokedAt === undefined && !(await revokeToken(tokens, token, context.now()))) throw new CommandError(alreadyRevoked);
    await context.tokenKeys.revoke(input.tokenId);
    await tokens.markRevokeCleanedUp(input.tokenId, context.now());
    return { tokenId: input.tokenId, revoked: true };
  },
};

/**
 * After upgrading (`npm run deploy` runs it): tokens created before token ids and scopes get theirs, so they can be
 * listed and revoked, and write as they always could.
 */
export const tokenMigrate: Command<Record<string, never>, { migrated: number; tokens: MigratedToken[] }> = {
  name: 'token migrate',
  flags: {},
  validate: () => ({}),
  async run(context) {
    const tokens = await context.stores.tokens.migrateLegacyTokens();
    return { migrated: tokens.length, tokens };
  },
};

/** The owner's token entries (created, revoked), newest first. */
export const tokenAudit: Command<{ ownerId: string; limit: number }, { entries: AuditEntry[] }> = {
  name: 'token audit',
  flags: { owner: { required: true, placeholder: 'ID' }, limit: { placeholder: 'N' } },
  validate: (flags) => ({ ownerId: ownerId(flags), limit: auditLimit(flags) }),
  async run(context, input) {
    await requireOwner(context, input.ownerId);
    return { entries: await context.stores.audit.list({ ownerId: input.ownerId }, input.limit) };
  },
};
