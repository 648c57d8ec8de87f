import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { TokenRecord, TokenSummary } from '#adapters/token-store';
import { type AuditEntry, type AuditSubject, apiEntry, type ManyWritesAuditTrail } from '#domain/audit';
import type { ConsoleSession } from '#domain/console-session';
import type { Caller, Project } from '#domain/model';
import type { ConsoleReads, DiscordLinkStore, ScriptStore, SessionStore, TokenWrites, UploadStaging, UploadStore } from '#domain/ports';
import type { VersionWriter } from '#domain/scripts';
import type { IsBuyerBlacklisted, ShopStore } from '#domain/shops/receive';
import type { ScopeNeed, TokenGrant } from '#domain/tokens';
import type { OriginSecrets } from '#http/origin-verify';
import type { EventName } from '#schemas/resources';
import type { ApiDeps } from './api-handler';
import type { Route } from './routes';

/**
 * One console route (`/console/api/…` beside the owner routes' mirror), defined as an owner route is: its method
 * and path, what it needs of the session, its body and query schemas, and a `run` that gets one named context. The
 * console's router (console-api.ts) matches it, checks the session's scope and limits, parses the body and query
 * and opens the project once, in that order, for every route.
 */

/** The token store's calls the console makes besides the authorizer's lookup (lambdas/adapters/token-store.ts). */
interface ConsoleTokens {
  findToken(tokenHash: string): Promise<TokenGrant | undefined>;
  tokensOf(ownerId: string): Promise<TokenSummary[]>;
  tokenById(tokenId: string): Promise<TokenRecord | undefined>;
  saveToken: TokenWrites['saveToken'];
  revokeToken: TokenWrites['revokeToken'];
  markRevokeCleanedUp(tokenId: string, now: number): Promise<void>;
}

/** A token at the gateway (API key on the usage plan, authorizer cache): dashboard/context.ts TokenKeys. */
interface ConsoleTokenKeys {
  register(token: { tokenHash: string; tokenId: string }): Promise<void>;
  revoke(tokenId: string): Promise<void>;
}

export interface ConsoleDeps extends ApiDeps {
  stores: ApiDeps['stores'] & {
    tokens: ConsoleTokens;
    sessions: SessionStore;
    uploads: UploadStore;
    reads: ConsoleReads;
    webhooks: {
      addWebhook(input: { projectId: string; url: string; events: EventName[]; enabled: boolean; now: number }): Promise<string>;
      updateWebhook(projectId: string, webhookId: string, change: { events?: EventName[]; enabled?: boolean }, now: number): Promise<boolean>;
      deleteWebhook(projectId: string, webhookId: string): Promise<boolean>;
    };
    versions: VersionWriter;
    /** The project's Discord application link (lambdas/adapters/discord-store.ts). */
    discord: DiscordLinkStore;
    /** The project's shop connections and delivery log (lambdas/adapters/shop-store.ts). */
    shops: ShopStore;
    auditEntries: { list(subject: AuditSubject, limit: number): Promise<AuditEntry[]> };
  };
  scripts: ScriptStore;
  staging: UploadStaging;
  tokenKeys: ConsoleTokenKeys;
  /** Where webhook posts go (Discord's API, or the local stand-in). */
  discordApiBase: string;
  /** The loader routes' base URL, for the hosted stub's address (and the shops' receiver URL, on the same front door). */
  loaderBaseUrl: string;
  /** The buyer blacklist's check, for a replayed shop order; none unless given. */
  isBuyerBlacklisted?: IsBuyerBlacklisted;
  /**
   * The console's own origin, which every change's `Origin` must equal: a configured one (AWS), else the
   * request's host (the local server, which answers loopback hosts only).
   */
  consoleOrigin?: string;
  /**
   * The front door's origin secret: with it, the viewer's address CloudFront forwards is believed (clientAddressOf),
   * else the connection's own address counts (CloudFront's, behind it).
   */
  originSecrets?: OriginSecrets | undefined;
}

/** A console answer: JSON (`body`), or `raw` text with its headers (a download), and the cookies to set. */
export type Answer = { status: number; body?: unknown; headers?: Record<string, string>; raw?: string; cookies?: string[] };

export const json = (body: unknown, status = 200): Answer => ({ status, body });
export const NO_CONTENT: Answer = { status: 204 };

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type ProjectPath = `/projects/{id}${string}`;

/** What a route's `run` gets: the request made into values once, and what to act with. */
export interface ConsoleContext<Path extends string, Query, Body> {
  /** The project of `{id}`, opened with the session's caller (its owner, plan and project limit): routes of a project only. */
  project: string extends Path ? Project | undefined : Path extends ProjectPath ? Project : undefined;
  body: Body;
  query: Query;
  /** The path's other parameters (`webhook_id`, `upload_id`, `token_id`), decoded. */
  params: Record<string, string>;
  now: number;
  /** Audit entries name the session's token, `source: "console"`; an entry a change could not settle is logged. */
  trail: ManyWritesAuditTrail;
  stores: ConsoleDeps['stores'];
  deps: ConsoleDeps;
  /** The session's token as a caller: owner, scope and limits. */
  caller: Caller;
  session: ConsoleSession;
  event: APIGatewayProxyEventV2;
  timeLeftMs: () => number;
}

export interface ConsoleRouteDefinition<Path extends string, Query, Body> {
  method: HttpMethod;
  path: Path;
  /**
   * What the route does with the data: `write` routes refuse a read session, naming the scope. `route` is the owner
   * route it does the console's form of (searching keys is `list-keys`): a session whose token names that route may
   * call it. A route without one refuses every session limited to named routes, unless `everySession`.
   */
  need: ScopeNeed;
  /** Open to every session: the route keeps the session's limits itself (its project list, tokens within its reach). */
  everySession?: true;
  query?: z.ZodMiniType<Query, unknown>;
  body?: z.ZodMiniType<Body, unknown>;
  run(context: ConsoleContext<Path, Query, Body>): Promise<Answer>;
}

/** A console route as the router holds it, whatever its types. */
export type ConsoleRoute = ConsoleRouteDefinition<string, unknown, unknown>;

/** One console route, its types inferred from its path and schemas. */
export const defineConsoleRoute = <Path extends string, Query = undefined, Body = undefined>(
  definition: ConsoleRouteDefinition<Path, Query, Body>,
): ConsoleRoute => definition as unknown as ConsoleRoute;

type OwnerEntry = Route['entry'];
export const read = (doing: string, route?: OwnerEntry): ScopeNeed => ({ scope: 'read', doing, ...(route && { route }) });
export const write = (doing: string, route?: OwnerEntry): ScopeNeed => ({ scope: 'write', doing, ...(route && { route }) });

/** A change to the project entered in its audit trail, named as the console session's. */
export async function recordChange(
  context: Pick<ConsoleContext<ProjectPath, unknown, unknown>, 'trail' | 'project' | 'now'>,
  action: AuditEntry['action'],
  target: AuditEntry['target'],
  outcome: AuditEntry['outcome'],
): Promise<void> {
  await context.trail.log.record(apiEntry(context.trail, { projectId: context.project.id, at: context.now, action, target, outcome }));
}
