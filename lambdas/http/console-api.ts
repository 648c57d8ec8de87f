import type { APIGatewayProxyEventV2, APIGatewayProxyResult, Context } from 'aws-lambda';
import { postEmbeds } from '#adapters/discord-client';
import { keySecretSealer } from '#adapters/secret-sealer';
import type { Stores } from '#adapters/stores';
import type { TokenRecord, TokenSummary } from '#adapters/token-store';
import { AUDIT_ACTIONS, type AuditEntry, type AuditSubject, apiEntry } from '#domain/audit';
import {
  CONSOLE_RATE_LIMIT,
  CONSOLE_RATE_LIMIT_MESSAGE,
  type ConsoleSession,
  newSessionSecret,
  SESSION_MAX_SECONDS,
  sessionCookie,
  sessionHashOf,
  sessionIsLive,
  sessionNeedsTouch,
  sessionRateBucket,
  sessionSecretOf,
} from '#domain/console-session';
import { linkDiscord, unlinkDiscord } from '#domain/discord/link';
import { DomainError, InvalidInput, KeyNotFound, ProjectNotFound, RateLimited, Unauthenticated } from '#domain/errors';
import { newId } from '#domain/ids';
import {
  classifySearch,
  type KeyStatusFilter,
  keyStatus,
  MAX_LISTING_READ,
  MAX_SEARCH_CANDIDATES,
  mostSelectiveWord,
  noteMatches,
  SEARCH_PAGE,
  statusMatches,
} from '#domain/key-search';
import type { Caller, KeyDetail, Project } from '#domain/model';
import type {
  ConsoleReads,
  DiscordLink,
  DiscordLinkStore,
  PendingUpload,
  ScriptStore,
  SessionStore,
  TokenWrites,
  UploadStaging,
  UploadStore,
} from '#domain/ports';
import { openProject, revokeBulkAudited } from '#domain/project-api';
import { consumeRateLimit } from '#domain/rate-limit';
import { publishScript, scriptFileProblem, sha256Hex, type VersionWriter } from '#domain/scripts';
import { addShop, receiverUrlOf } from '#domain/shops/connections';
import { type IsBuyerBlacklisted, NO_BLACKLIST, type ReceiptLogEntry, replayReceipt, type ShopStore } from '#domain/shops/receive';
import { hashToken, issueToken, newApiToken, requireScope, revokeToken, type ScopeNeed, type TokenScope, tokenIdOf } from '#domain/tokens';
import { WatermarkScanner } from '#domain/watermark-scan';
import { executeWebhookUrl, parseDiscordWebhookUrl, redactWebhookUrl, webhookUrlProblem } from '#domain/webhooks/discord-webhook-url';
import { testEmbedMessage } from '#domain/webhooks/embeds';
import {
  AddWebhookBody,
  AuditQuery,
  CreateTokenBody,
  DiscordLinkBody,
  EditWebhookBody,
  LeakFindBody,
  LeakRevokeBody,
  RevokeSelectedBody,
  SearchQuery,
  ShopAddBody,
  SignInBody,
  UploadBody,
} from '#schemas/console';
import { PATH_ID_PATTERN } from '#schemas/formats';
import type { EventName } from '#schemas/resources';
import { type ApiDeps, CONSOLE } from './api-handler';
import { errorHeadersOf, statusOf } from './error-statuses';
import { proxyEventOfHttpApi } from './http-api';
import { parse } from './middlewares';
import { interactionsUrlOf } from './public-routes';
import { SECURITY_HEADERS } from './responses';
import { createRouteHandlers, ROUTES } from './routes';

/**
 * The publisher console's API (DESIGN.md "Publisher console"; reference in docs/console.md): everything under
 * `/console/api/`, one Lambda behind the console's origin (payload format 2.0, as a function URL sends it), and the
 * same handler on the local stack. A request goes: Origin check on changes → session (cookie, live, its token not
 * revoked) → the session's rate limit → the route: an owner API route served by its own endpoint (session instead
 * of Bearer token, audit `source: "console"`), or one of the console's routes below, built on the same domain rules.
 */

export const CONSOLE_API_PREFIX = '/console/api';

/** On every console answer: no inline script, no framing, HTTPS remembered, nothing cached or sniffed. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

/** The token store's calls the console makes besides the authorizer's lookup (lambdas/adapters/token-store.ts). */
interface ConsoleTokens {
  findToken(tokenHash: string): Promise<{ ownerId: string; tokenId: string; scope: TokenScope } | undefined>;
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
}

/** The console's stores on the one table (the AWS entry, the local stack and the tests build them alike). */
export const consoleStoresOf = (stores: Stores): ConsoleDeps['stores'] => ({
  ...stores,
  sessions: stores.console,
  uploads: stores.console,
  reads: stores.console,
  webhooks: stores.dashboard,
  versions: stores.dashboard,
  auditEntries: stores.audit,
});

export type ConsoleHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResult & { cookies?: string[] }>;

type Answer = { status: number; body?: unknown; headers?: Record<string, string>; raw?: string; cookies?: string[] };

interface Request {
  event: APIGatewayProxyEventV2;
  context: Context;
  method: string;
  path: string;
  params: Record<string, string>;
  now: number;
}

interface SessionRequest extends Request {
  session: ConsoleSession;
  sessionHash: string;
  caller: Caller;
}

interface ConsoleRoute {
  method: string;
  path: string;
  /** What the route does with the data: `write` routes refuse a read session, naming the scope. */
  need?: ScopeNeed;
  run(request: SessionRequest, deps: ConsoleDeps): Promise<Answer>;
}

const write = (doing: string): ScopeNeed => ({ scope: 'write', doing });

const json = (body: unknown, status = 200): Answer => ({ status, body });

/** The console handler: every failure is `{"error"}` with its status; nothing unexpected leaks past a 500. */
export function createConsoleHandler(deps: ConsoleDeps): ConsoleHandler {
  const ownerHandlers = createRouteHandlers(deps, CONSOLE);
  const mirrored = ROUTES.map((route) => ({ route, ...pattern(route.path) }));
  const own = CONSOLE_ROUTES.map((route) => ({ route, ...pattern(route.path) }));

  return async (event, context) => {
    const method = event.requestContext.http.method.toUpperCase();
    const path = event.rawPath.startsWith(CONSOLE_API_PREFIX) ? event.rawPath.slice(CONSOLE_API_PREFIX.length) : event.rawPath;
    const request: Request = { event, context, method, path, params: {}, now: deps.now() };
    try {
      const answer = await route(request);
      return toResult(answer);
    } catch (error) {
      if (error instanceof DomainError) return toResult({ status: statusOf(error), body: { error: error.message }, headers: errorHeadersOf(error) });
      deps.logger.error('Unhandled console error', { error, path: event.rawPath });
      return toResult({ status: 500, body: { error: 'Internal error', request_id: event.requestContext.requestId } });
    }
  };

  async function route(request: Request): Promise<Answer> {
    const { event, method, path } = request;
    if (method !== 'GET' && method !== 'HEAD') checkOrigin(event, deps);
    if (path === '/session') return sessionRoute(request, deps);

    const signedIn = await requireSession(request, deps);
    const decision = await consumeRateLimit(deps.stores.rateLimits, sessionRateBucket(signedIn.sessionHash), request.now, CONSOLE_RATE_LIMIT);
    if (!decision.allowed) throw new RateLimited(decision.resetSeconds, CONSOLE_RATE_LIMIT_MESSAGE);

    for (const { route, regex, names } of own) {
      const match = route.method === method && regex.exec(path);
      if (!match) continue;
      const params = paramsOf(names, match);
      if (route.need) requireScope(signedIn.session.scope, route.need);
      return route.run({ ...signedIn, params }, deps);
    }
    for (const { route, regex, names } of mirrored) {
      const match = route.method === method && regex.exec(path);
      if (!match) continue;
      const restEvent = proxyEventOfHttpApi(event);
      const result = await ownerHandlers[route.entry](
        {
          ...restEvent,
          resource: route.path,
          path,
          pathParameters: paramsOf(names, match),
          requestContext: {
            ...restEvent.requestContext,
            resourcePath: route.path,
            authorizer: { ownerId: signedIn.caller.ownerId, tokenHash: signedIn.caller.tokenHash, scope: signedIn.caller.scope },
          },
        },
        request.context,
      );
      return { status: result.statusCode, raw: result.body, headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)])) };
    }
    return json({ error: `No console route ${method} ${CONSOLE_API_PREFIX}${path}` }, 404);
  }
}

function toResult(answer: Answer): APIGatewayProxyResult & { cookies?: string[] } {
  const body = answer.raw ?? (answer.body === undefined ? '' : JSON.stringify(answer.body));
  return {
    statusCode: answer.status,
    headers: { ...SECURITY_HEADERS, ...(answer.headers ?? {}), ...CONSOLE_SECURITY_HEADERS },
    body,
    ...(answer.cookies ? { cookies: answer.cookies } : {}),
  };
}

function pattern(path: string): { regex: RegExp; names: string[] } {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
  return { regex: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '([^/]+)')}$`), names };
}

function paramsOf(names: readonly string[], match: RegExpExecArray): Record<string, string> {
  return Object.fromEntries(names.map((name, i) => [name, safeDecode(match[i + 1] ?? '')]));
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

/** The console's origin for this request: the configured one, else `http(s)://<Host>` as the request reached us. */
function consoleOriginOf(event: APIGatewayProxyEventV2, configured: string | undefined): string {
  if (configured) return configured;
  const host = event.headers['x-forwarded-host'] ?? event.headers.host ?? '';
  const proto =
    event.headers['x-forwarded-proto'] ?? (host.startsWith('127.0.0.1') || host.startsWith('localhost') || host.startsWith('[::1]') ? 'http' : 'https');
  return `${proto}://${host}`;
}

/** CSRF: a change is accepted only from a page of the console's own origin (SameSite=Strict is the second lock). */
function checkOrigin(event: APIGatewayProxyEventV2, deps: ConsoleDeps): void {
  const origin = event.headers.origin;
  if (!origin || origin !== consoleOriginOf(event, deps.consoleOrigin)) throw new OriginRefused();
}

/** Answered as a missing scope is (403): the caller may not make this change from where it asks. */
class OriginRefused extends DomainError {
  override readonly name = 'ScopeMissing';
  constructor() {
    super('Changes are accepted only from the console itself: the request must carry an Origin header equal to the console origin');
  }
}

const bodyOf = (event: APIGatewayProxyEventV2): unknown => {
  const text = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '';
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidInput('Request body is not valid JSON: send a JSON object with Content-Type: application/json');
  }
};

const queryOf = (event: APIGatewayProxyEventV2): Record<string, string> =>
  Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).map(([k, v]) => [k, v ?? '']));

const secureCookie = (event: APIGatewayProxyEventV2, deps: ConsoleDeps) => consoleOriginOf(event, deps.consoleOrigin).startsWith('https://');

// ---- session ----

async function sessionRoute(request: Request, deps: ConsoleDeps): Promise<Answer> {
  const { event, method, now } = request;
  if (method === 'POST') {
    const { token } = parse(SignInBody, bodyOf(event));
    const tokenHash = hashToken(token);
    const grant = await deps.stores.tokens.findToken(tokenHash);
    if (!grant) throw new Unauthenticated();
    const secret = newSessionSecret();
    const session: ConsoleSession = { ownerId: grant.ownerId, tokenHash, tokenId: grant.tokenId, scope: grant.scope, createdAt: now, lastUsedAt: now };
    await deps.stores.sessions.create(sessionHashOf(secret), session);
    return {
      status: 200,
      body: { owner_id: grant.ownerId, scope: grant.scope },
      cookies: [sessionCookie(secret, { secure: secureCookie(event, deps), maxAgeSeconds: SESSION_MAX_SECONDS })],
    };
  }
  if (method === 'GET' || method === 'HEAD') {
    const { session } = await requireSession(request, deps);
    return json({ owner_id: session.ownerId, scope: session.scope });
  }
  if (method === 'DELETE') {
    const secret = sessionSecretOf(event.cookies ?? []);
    if (secret) await deps.stores.sessions.delete(sessionHashOf(secret));
    return { status: 204, cookies: [sessionCookie('', { secure: secureCookie(event, deps), maxAgeSeconds: 0 })] };
  }
  return json({ error: `No console route ${method} ${CONSOLE_API_PREFIX}/session` }, 404);
}

/** The live session the cookie names, its token still working; anything else is a 401 (and a dead session is deleted). */
async function requireSession(request: Request, deps: ConsoleDeps): Promise<SessionRequest> {
  const secret = sessionSecretOf(request.event.cookies ?? []);
  if (!secret) throw new SignedOut();
  const sessionHash = sessionHashOf(secret);
  const session = await deps.stores.sessions.get(sessionHash);
  if (!session) throw new SignedOut();
  const grant = sessionIsLive(session, request.now) ? await deps.stores.tokens.findToken(session.tokenHash) : undefined;
  if (!grant) {
    await deps.stores.sessions.delete(sessionHash);
    throw new SignedOut();
  }
  if (sessionNeedsTouch(session, request.now)) await deps.stores.sessions.touch(sessionHash, session, request.now);
  const caller: Caller = { ownerId: session.ownerId, tokenHash: session.tokenHash, tokenId: session.tokenId, scope: session.scope };
  return { ...request, session, sessionHash, caller };
}

class SignedOut extends Unauthenticated {
  override readonly message = 'Not signed in to the console, or the session ended: sign in with an API token';
}

// ---- the console's own routes ----

const actorOf = (request: SessionRequest) => ({
  tokenId: request.session.tokenId,
  requestId: request.event.requestContext.requestId,
  source: 'console' as const,
});

const projectOf = (request: SessionRequest, deps: ConsoleDeps): Promise<Project> => {
  const id = request.params.id ?? '';
  return openProject(deps.stores.projects, request.caller, PATH_ID_PATTERN.test(id) ? id : '');
};

const CONSOLE_ROUTES: readonly ConsoleRoute[] = [
  {
    method: 'GET',
    path: '/projects',
    run: async (request, deps) => ({
      status: 200,
      body: { projects: (await deps.stores.reads.projectsOf(request.session.ownerId)).map(({ id, name, plan }) => ({ id, name, plan })) },
    }),
  },
  {
    method: 'GET',
    path: '/projects/{id}/loader',
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const stubUrl = `${deps.loaderBaseUrl}/v1/loader/stub/${project.id}`;
      return json({ stub_url: stubUrl, line: `script_key = "KEY"\nloadstring(game:HttpGet("${stubUrl}"))()` });
    },
  },
  // The project's Discord application (DESIGN.md, "Buyers help themselves in Discord"), as `discord link` and
  // `discord unlink` set it: the interactions URL to paste into Discord's developer portal, the key and the cooldown.
  {
    method: 'GET',
    path: '/projects/{id}/discord',
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      return json(discordLinkAnswer(await deps.stores.discord.discordLink(project.id), deps.loaderBaseUrl, project.id));
    },
  },
  {
    method: 'PUT',
    path: '/projects/{id}/discord',
    need: write('linking Discord'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const body = parse(DiscordLinkBody, bodyOf(request.event));
      const linkRequest = {
        publicKey: body.public_key,
        ...(body.application_id === undefined ? {} : { applicationId: body.application_id }),
        ...(body.reset_cooldown === undefined ? {} : { resetCooldown: body.reset_cooldown }),
      };
      const link = await linkDiscord(deps.stores.discord, project.id, linkRequest, request.now);
      if (!link) throw new ProjectNotFound();
      // The entry the dashboard's `discord link` writes (dashboard/audited.ts), with the console as its source.
      await audit(
        deps,
        request,
        project,
        AUDIT_ACTIONS.linkDiscord,
        { public_key: link.publicKey, application_id: link.applicationId },
        { reset_cooldown: link.resetCooldown },
      );
      return json(discordLinkAnswer(link, deps.loaderBaseUrl, project.id));
    },
  },
  {
    method: 'DELETE',
    path: '/projects/{id}/discord',
    need: write('unlinking Discord'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      if (!(await unlinkDiscord(deps.stores.discord, project.id))) throw new ProjectNotFound();
      await audit(deps, request, project, AUDIT_ACTIONS.unlinkDiscord, {}, { unlinked: true });
      return { status: 204 };
    },
  },
  // Shops (DESIGN.md, "Shops deliver keys by themselves"), as `shop add|list|remove` set them, with the delivery log.
  {
    method: 'GET',
    path: '/projects/{id}/shops',
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const [connections, receipts] = await Promise.all([deps.stores.shops.connections(project.id), deps.stores.shops.receipts(project.id, SHOP_LOG_PAGE)]);
      return json({
        connections: connections.map((view) => ({
          connection_id: view.connectionId,
          provider: view.provider,
          products: view.products,
          created_at: view.createdAt,
          receiver_url: receiverUrlOf(deps.loaderBaseUrl, view.connectionId),
        })),
        receipts: receipts.map(receiptAnswer),
      });
    },
  },
  {
    method: 'POST',
    path: '/projects/{id}/shops',
    need: write('connecting a shop'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const body = parse(ShopAddBody, bodyOf(request.event));
      const view = await addShop(deps.stores.shops, keySecretSealer(deps.keySecret), { projectId: project.id, ...body }, request.now);
      if (!view) throw new ProjectNotFound();
      await audit(
        deps,
        request,
        project,
        AUDIT_ACTIONS.shopAdd,
        { provider: view.provider, products: Object.keys(view.products).join(',') },
        { connection_id: view.connectionId },
      );
      return json({ connection_id: view.connectionId, receiver_url: receiverUrlOf(deps.loaderBaseUrl, view.connectionId) });
    },
  },
  {
    method: 'DELETE',
    path: '/projects/{id}/shops/{connection_id}',
    need: write('removing a shop'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const connectionId = request.params.connection_id ?? '';
      if (!(await deps.stores.shops.removeConnection(project.id, connectionId))) throw new InvalidInput(`No shop connection ${connectionId} in this project`);
      await audit(deps, request, project, AUDIT_ACTIONS.shopRemove, { connection_id: connectionId }, { removed: true });
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    path: '/projects/{id}/shops/receipts/{receipt_id}/replay',
    need: write('replaying a shop order'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const shopDeps = {
        ...deps.stores,
        keySecret: deps.keySecret,
        sealer: keySecretSealer(deps.keySecret),
        isBuyerBlacklisted: deps.isBuyerBlacklisted ?? NO_BLACKLIST,
      };
      return json(
        await replayReceipt(shopDeps, project.id, request.params.receipt_id ?? '', { now: request.now, requestId: request.event.requestContext.requestId }),
      );
    },
  },
  { method: 'GET', path: '/projects/{id}/keys/search', run: searchKeys },
  {
    method: 'POST',
    path: '/projects/{id}/keys/revoke-selected',
    need: write('revoking keys'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const { key_ids: keyIds } = parse(RevokeSelectedBody, bodyOf(request.event));
      let revoked = 0;
      // One key's revoke and its audit entry in one transaction each, as the API's revoke; a few at a time.
      for (let start = 0; start < keyIds.length; start += 10) {
        const outcomes = await Promise.all(
          keyIds.slice(start, start + 10).map((keyId) => {
            const entry = apiEntry(
              { actor: actorOf(request) },
              { projectId: project.id, at: request.now, action: AUDIT_ACTIONS.revokeKey, target: { key_id: keyId }, outcome: { revoked_count: 1 } },
            );
            return deps.stores.projects.revokeKey(project.id, keyId, request.now, entry);
          }),
        );
        revoked += outcomes.filter((outcome) => outcome === 'revoked').length;
      }
      return json({ revoked_count: revoked });
    },
  },
  { method: 'GET', path: '/projects/{id}/keys/export.csv', run: exportCsv },
  {
    method: 'POST',
    path: '/projects/{id}/versions/uploads',
    need: write('uploading a version'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const body = parse(UploadBody, bodyOf(request.event));
      const upload: PendingUpload = {
        uploadId: newId('ver').replace(/^ver_/, 'upl_'),
        projectId: project.id,
        sizeBytes: body.size_bytes,
        sha256: body.sha256,
        notes: body.notes,
        createdAt: request.now,
      };
      await deps.stores.uploads.save(upload);
      const { url, headers } = await deps.staging.presign(upload);
      return json({ upload_id: upload.uploadId, url, headers });
    },
  },
  { method: 'POST', path: '/projects/{id}/versions/uploads/{upload_id}/commit', need: write('uploading a version'), run: commitUpload },
  {
    method: 'GET',
    path: '/projects/{id}/webhooks',
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const webhooks = await deps.stores.projects.listWebhooks(project.id);
      return json({
        webhooks: webhooks.map((webhook) => ({
          id: webhook.id,
          url_hint: redactWebhookUrl(webhook.url),
          events: parseEvents(webhook.events),
          enabled: webhook.enabled === 1,
        })),
      });
    },
  },
  {
    method: 'POST',
    path: '/projects/{id}/webhooks',
    need: write('adding a webhook'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const body = parse(AddWebhookBody, bodyOf(request.event));
      const problem = webhookUrlProblem(body.url);
      if (problem) throw new InvalidInput(`url ${problem}`);
      const events = [...new Set(body.events)];
      const id = await deps.stores.webhooks.addWebhook({ projectId: project.id, url: body.url, events, enabled: body.enabled, now: request.now });
      await audit(deps, request, project, AUDIT_ACTIONS.addWebhook, { events: events.join(','), enabled: body.enabled }, { webhook_id: id });
      return json({ id, url_hint: redactWebhookUrl(body.url), events, enabled: body.enabled });
    },
  },
  {
    method: 'PATCH',
    path: '/projects/{id}/webhooks/{webhook_id}',
    need: write('editing a webhook'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const body = parse(EditWebhookBody, bodyOf(request.event));
      const webhookId = request.params.webhook_id ?? '';
      const change = { ...(body.events ? { events: [...new Set(body.events)] } : {}), ...(body.enabled === undefined ? {} : { enabled: body.enabled }) };
      if (!(await deps.stores.webhooks.updateWebhook(project.id, webhookId, change, request.now))) throw new WebhookNotFound(webhookId);
      await audit(
        deps,
        request,
        project,
        AUDIT_ACTIONS.editWebhook,
        { webhook_id: webhookId },
        {
          ...(change.events ? { events: change.events.join(',') } : {}),
          ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
        },
      );
      const webhook = (await deps.stores.projects.listWebhooks(project.id)).find((candidate) => candidate.id === webhookId);
      if (!webhook) throw new WebhookNotFound(webhookId);
      return json({ id: webhook.id, url_hint: redactWebhookUrl(webhook.url), events: parseEvents(webhook.events), enabled: webhook.enabled === 1 });
    },
  },
  {
    method: 'DELETE',
    path: '/projects/{id}/webhooks/{webhook_id}',
    need: write('deleting a webhook'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const webhookId = request.params.webhook_id ?? '';
      if (!(await deps.stores.webhooks.deleteWebhook(project.id, webhookId))) throw new WebhookNotFound(webhookId);
      await audit(deps, request, project, AUDIT_ACTIONS.deleteWebhook, { webhook_id: webhookId }, {});
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    path: '/projects/{id}/webhooks/{webhook_id}/test',
    need: write('sending a test notification'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const webhookId = request.params.webhook_id ?? '';
      const webhook = (await deps.stores.projects.listWebhooks(project.id)).find((candidate) => candidate.id === webhookId);
      const target = webhook && parseDiscordWebhookUrl(webhook.url);
      if (!target) throw new WebhookNotFound(webhookId);
      const outcome = await postEmbeds(executeWebhookUrl(deps.discordApiBase, target), testEmbedMessage(project.name, project.id, request.now));
      await audit(deps, request, project, AUDIT_ACTIONS.testWebhook, { webhook_id: webhookId }, { outcome: outcome.kind });
      if (outcome.kind !== 'delivered') throw new InvalidInput(`Discord did not take the test (${describePost(outcome)}): check the webhook URL in Discord`);
      return json({ ok: true });
    },
  },
  {
    method: 'POST',
    path: '/projects/{id}/leak/find',
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const { text } = parse(LeakFindBody, bodyOf(request.event));
      const scanner = new WatermarkScanner();
      scanner.push(new TextEncoder().encode(text));
      const watermarks = [...scanner.finish().watermarks.keys()].slice(0, 100);
      const counted = await Promise.all(
        watermarks.map(async (watermark) => {
          let active = 0;
          for await (const page of deps.stores.projects.activeKeyIdsWithWatermark(project.id, watermark)) active += page.length;
          return { watermark, active_keys: active };
        }),
      );
      return json({ watermarks: counted });
    },
  },
  {
    method: 'POST',
    path: '/projects/{id}/leak/revoke',
    need: write('revoking keys by watermark'),
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const { watermarks } = parse(LeakRevokeBody, bodyOf(request.event));
      const results = [];
      for (const watermark of new Set(watermarks)) {
        const trail = {
          log: deps.stores.audit,
          actor: actorOf(request),
          unsettled: (entry: AuditEntry, outcome: unknown, error: unknown) =>
            deps.logger.error('Console bulk revoke audit unsettled', { entry, outcome, error }),
        };
        const result = await revokeBulkAudited(deps.stores.projects, project, watermark, request.now, () => request.context.getRemainingTimeInMillis(), trail);
        results.push({ watermark, revoked_count: result.revoked_count, complete: result.complete });
      }
      return json({ results });
    },
  },
  {
    method: 'GET',
    path: '/projects/{id}/audit',
    run: async (request, deps) => {
      const project = await projectOf(request, deps);
      const { limit } = parse(AuditQuery, queryOf(request.event));
      if (limit < 1 || limit > 1000) throw new InvalidInput('limit must be a whole number from 1 to 1000');
      return json({ entries: await deps.stores.auditEntries.list({ projectId: project.id }, limit) });
    },
  },
  {
    method: 'GET',
    path: '/tokens',
    run: async (request, deps) => ({
      status: 200,
      body: {
        tokens: (await deps.stores.tokens.tokensOf(request.session.ownerId)).map((token) => ({
          token_id: token.tokenId,
          scope: token.scope,
          created_at: token.createdAt,
        })),
      },
    }),
  },
  {
    method: 'POST',
    path: '/tokens',
    need: write('creating a token'),
    run: async (request, deps) => {
      const { scope } = parse(CreateTokenBody, bodyOf(request.event));
      const token = newApiToken();
      const tokenHash = hashToken(token);
      const tokenId = tokenIdOf(tokenHash);
      // At the gateway first, so a failure there leaves the table untouched (as the dashboard's `token create`).
      await deps.tokenKeys.register({ tokenHash, tokenId });
      await issueToken(deps.stores.tokens, { ownerId: request.session.ownerId, tokenHash, now: request.now, scope, by: actorOf(request) });
      return json({ token, token_id: tokenId, scope });
    },
  },
  {
    method: 'DELETE',
    path: '/tokens/{token_id}',
    need: write('revoking a token'),
    run: async (request, deps) => {
      const tokenId = request.params.token_id ?? '';
      const token = await deps.stores.tokens.tokenById(tokenId);
      if (!token || token.ownerId !== request.session.ownerId || token.revokedAt !== undefined) throw new TokenNotFound(tokenId);
      if (!(await revokeToken(deps.stores.tokens, token, request.now, actorOf(request)))) throw new TokenNotFound(tokenId);
      await deps.tokenKeys.revoke(tokenId);
      await deps.stores.tokens.markRevokeCleanedUp(tokenId, request.now);
      return { status: 204 };
    },
  },
];

/** Answered 404 like an unknown key: a webhook of another project, or none. */
class WebhookNotFound extends KeyNotFound {
  override readonly message: string;
  constructor(webhookId: string) {
    super(webhookId);
    this.message = `Webhook ${webhookId} not found in this project`;
  }
}

class TokenNotFound extends KeyNotFound {
  override readonly message: string;
  constructor(tokenId: string) {
    super(tokenId);
    this.message = `Token ${tokenId} not found among your working tokens`;
  }
}

function describePost(outcome: { kind: string; status?: number; reason?: string }): string {
  return outcome.status !== undefined ? `HTTP ${outcome.status}` : (outcome.reason ?? outcome.kind);
}

function parseEvents(events: string): string[] {
  try {
    const parsed: unknown = JSON.parse(events);
    return Array.isArray(parsed) ? parsed.filter((name): name is string => typeof name === 'string') : [];
  } catch {
    return [];
  }
}

/** Receipts the Shops page lists: the newest of the 90-day delivery log. */
const SHOP_LOG_PAGE = 100;

/** A delivery log line as the console shows it: never the stored receipt itself (it holds no email, but needs none). */
const receiptAnswer = (entry: ReceiptLogEntry) => ({
  receipt_id: entry.receiptId,
  at: entry.at,
  connection_id: entry.connectionId,
  provider: entry.provider,
  event_id: entry.eventId,
  order_id: entry.orderId,
  result: entry.result,
  detail: entry.detail,
  key_ids: entry.keyIds,
  replayable: entry.receipt !== undefined,
});

/** A project's Discord link as the console shows it; every field null while the project has none. */
function discordLinkAnswer(link: DiscordLink | undefined, loaderBaseUrl: string, projectId: string) {
  return {
    public_key: link?.publicKey ?? null,
    application_id: link?.applicationId ?? null,
    reset_cooldown: link?.resetCooldown ?? null,
    interactions_url: link ? interactionsUrlOf(loaderBaseUrl, projectId) : null,
  };
}

async function audit(
  deps: ConsoleDeps,
  request: SessionRequest,
  project: Project,
  action: AuditEntry['action'],
  target: AuditEntry['target'],
  outcome: AuditEntry['outcome'],
): Promise<void> {
  await deps.stores.audit.record(apiEntry({ actor: actorOf(request) }, { projectId: project.id, at: request.now, action, target, outcome }));
}

// ---- search, listing, export ----

type SearchedKey = KeyDetail & { status: ReturnType<typeof keyStatus> };

async function searchKeys(request: SessionRequest, deps: ConsoleDeps): Promise<Answer> {
  const project = await projectOf(request, deps);
  const query = parse(SearchQuery, queryOf(request.event));
  const status = query.status as KeyStatusFilter;
  const search = classifySearch(query.q ?? '');
  const withStatus = (key: KeyDetail): SearchedKey => ({ ...key, status: keyStatus(key, request.now) });
  if (!search) return json(await listing(deps, project, query.offset, status, withStatus));

  let ids: string[];
  if (search.kind === 'key_id') ids = [search.keyId];
  else if (search.kind === 'watermark') ids = await deps.stores.reads.keyIdsWithWatermark(project.id, search.watermark, MAX_SEARCH_CANDIDATES);
  else if (search.kind === 'discord_id') ids = (await deps.stores.keys.keyIdsByDiscordId(project.id, search.discordId)).slice(0, MAX_SEARCH_CANDIDATES);
  else ids = await deps.stores.reads.keyIdsWithNoteWord(project.id, mostSelectiveWord(search.words), MAX_SEARCH_CANDIDATES);

  const found = (await deps.stores.keys.keyDetails(project.id, ids))
    .map(withStatus)
    .filter((key) => statusMatches(status, key.status) && (search.kind !== 'note' || noteMatches(key.note, search.words)));
  const page = found.slice(query.offset, query.offset + SEARCH_PAGE);
  const hasMore = query.offset + SEARCH_PAGE < found.length;
  return json({ keys: page, offset: query.offset, next_offset: query.offset + page.length, limit: SEARCH_PAGE, has_more: hasMore });
}

/**
 * The project's keys in issue order from position `offset`: 100 a page, or with a status filter the next 100 that
 * match among at most MAX_LISTING_READ keys read; `next_offset` is where the next page starts reading.
 */
async function listing(deps: ConsoleDeps, project: Project, offset: number, status: KeyStatusFilter, withStatus: (key: KeyDetail) => SearchedKey) {
  const keys: SearchedKey[] = [];
  let position = offset;
  let read = 0;
  while (keys.length < SEARCH_PAGE && read < MAX_LISTING_READ) {
    const entries = await deps.stores.reads.keyIdsAfter(project.id, position, SEARCH_PAGE);
    if (entries.length === 0) break;
    const details = await deps.stores.keys.keyDetails(
      project.id,
      entries.map((entry) => entry.keyId),
    );
    const seqOf = new Map(entries.map((entry) => [entry.keyId, entry.seq]));
    read += entries.length;
    for (const key of details) {
      const seq = seqOf.get(key.id) ?? position;
      if (keys.length === SEARCH_PAGE) break;
      position = seq;
      const shown = withStatus(key);
      if (statusMatches(status, shown.status)) keys.push(shown);
    }
    if (entries.length < SEARCH_PAGE) {
      position = Math.max(position, entries.at(-1)?.seq ?? position);
      break;
    }
  }
  return { keys, offset, next_offset: position, limit: SEARCH_PAGE, has_more: position < project.keyCount };
}

const CSV_COLUMNS = [
  'id',
  'watermark',
  'status',
  'tier',
  'issued_at',
  'expires_at',
  'max_uses',
  'current_uses',
  'max_machines',
  'machines',
  'note',
  'discord_id',
];

/** A CSV field: quoted when it must be, and never read as a formula by a spreadsheet (a note is the buyer's text). */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Every key's metadata, in issue order (never a raw value: the table has none). */
async function exportCsv(request: SessionRequest, deps: ConsoleDeps): Promise<Answer> {
  const project = await projectOf(request, deps);
  const lines = [CSV_COLUMNS.join(',')];
  for (let position = 0; ; ) {
    const entries = await deps.stores.reads.keyIdsAfter(project.id, position, 100);
    if (entries.length === 0) break;
    const details = await deps.stores.keys.keyDetails(
      project.id,
      entries.map((entry) => entry.keyId),
    );
    for (const key of details) {
      const row = [
        key.id,
        key.watermark,
        keyStatus(key, request.now),
        key.tier,
        key.issued_at,
        key.expires_at,
        key.max_uses,
        key.current_uses,
        key.max_fingerprints,
        key.fingerprints.length,
        key.note,
        key.discord_id,
      ];
      lines.push(row.map(csvField).join(','));
    }
    position = entries.at(-1)?.seq ?? position;
    if (entries.length < 100) break;
  }
  return {
    status: 200,
    raw: `${lines.join('\r\n')}\r\n`,
    headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="keys-${project.id}.csv"` },
  };
}

// ---- upload commit ----

/**
 * The staged bytes become a version under the same rules as `versions upload` (#domain/scripts): exactly the size
 * and SHA-256 announced, 1 byte to 5 MiB of UTF-8. A bad file is a 400 naming why, and nothing stays: the staged
 * object and the pending upload are deleted either way.
 */
async function commitUpload(request: SessionRequest, deps: ConsoleDeps): Promise<Answer> {
  const project = await projectOf(request, deps);
  const uploadId = request.params.upload_id ?? '';
  const upload = await deps.stores.uploads.find(project.id, uploadId);
  if (!upload) throw new InvalidInput(`Upload ${uploadId} not found in this project (it expires an hour after it starts): upload the file again`);
  try {
    const bytes = await deps.staging.read(upload);
    if (!bytes) throw new InvalidInput('No file arrived for this upload: PUT the file to the upload URL first');
    if (bytes.length !== upload.sizeBytes) throw new InvalidInput(`The file is ${bytes.length} bytes, not the ${upload.sizeBytes} announced`);
    const problem = scriptFileProblem(bytes);
    if (problem) throw new InvalidInput(`The script ${problem}`);
    if (sha256Hex(bytes) !== upload.sha256) throw new InvalidInput('The file does not match the SHA-256 announced: it changed or was cut in transit');
    const version = await publishScript(
      { scripts: deps.scripts, versions: deps.stores.versions },
      { id: newId('ver'), projectId: project.id, bytes, notes: upload.notes, now: request.now },
    );
    await audit(deps, request, project, AUDIT_ACTIONS.uploadVersion, {}, { version_id: version.id, version_number: version.version_number });
    return json(version);
  } finally {
    await deps.staging.discard(upload);
    await deps.stores.uploads.remove(project.id, uploadId);
  }
}
