import type { APIGatewayProxyEventV2, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Stores } from '#adapters/stores';
import { type ApiActor, AUDIT_UNSETTLED } from '#domain/audit';
import {
  CONSOLE_RATE_LIMIT,
  CONSOLE_RATE_LIMIT_MESSAGE,
  type ConsoleSession,
  newSessionSecret,
  SESSION_MAX_SECONDS,
  SIGN_IN_FAILURE_LIMIT,
  sessionCookie,
  sessionHashOf,
  sessionIsLive,
  sessionNeedsTouch,
  sessionRateBucket,
  sessionSecretOf,
  signInBucket,
  signInRefusal,
} from '#domain/console-session';
import { DomainError, InvalidInput, RateLimited, Unauthenticated } from '#domain/errors';
import type { Caller } from '#domain/model';
import { openProject } from '#domain/project-api';
import { consumeRateLimit, rateWindowAt } from '#domain/rate-limit';
import { closeSession, openSession } from '#domain/session-lifecycle';
import { hashToken, requireScope, type TokenLimits } from '#domain/tokens';
import { SignInBody } from '#schemas/console';
import { PATH_ID_PATTERN } from '#schemas/formats';
import { type Endpoint, type EndpointRequest, requireAccess, runEndpoint } from './api-handler';
import type { Answer, ConsoleContext, ConsoleDeps, ConsoleRoute } from './console-route';
import { CONSOLE_ROUTES } from './console-routes';
import { errorHeadersOf, statusOf } from './error-statuses';
import { clientAddressOf } from './http-api';
import { parse, readJsonBody, readTextBody } from './middlewares';
import { pathMatcher } from './path-template';
import { SECURITY_HEADERS } from './responses';
import { ROUTES } from './routes';

export type { ConsoleDeps } from './console-route';

/**
 * The publisher console's API (DESIGN.md "Publisher console"; reference in docs/console.md): everything under
 * `/console/api/`, one Lambda behind the console's origin (payload format 2.0, as a function URL sends it), and the
 * same handler on the local stack. A request goes: Origin check on changes → session (cookie, live, its token not
 * revoked; the caller it makes, once) → the session's rate limit → the route, one of two kinds:
 * - a console route (console-routes.ts): the session's scope and route limits → its project opened (the
 *   token's project limit included) → its body and query → its `run`;
 * - an owner API route under `/v1/…`: its endpoint run with the session's caller (runEndpoint, as the REST API runs
 *   it after the authorizer), audited `source: "console"`.
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

interface Request {
  event: APIGatewayProxyEventV2;
  context: Context;
  method: string;
  path: string;
  now: number;
}

/** A signed-in request: its session and the caller the session's token makes, derived once. */
interface SessionRequest extends Request {
  session: ConsoleSession;
  sessionHash: string;
  caller: Caller;
}

const json = (body: unknown, status = 200): Answer => ({ status, body });

const matchConsoleRoute = pathMatcher(CONSOLE_ROUTES);
const matchOwnerRoute = pathMatcher(ROUTES);

/** The console handler: every failure is `{"error"}` with its status; nothing unexpected leaks past a 500. */
export function createConsoleHandler(deps: ConsoleDeps): ConsoleHandler {
  return async (event, context) => {
    const method = event.requestContext.http.method.toUpperCase();
    const path = event.rawPath.startsWith(CONSOLE_API_PREFIX) ? event.rawPath.slice(CONSOLE_API_PREFIX.length) : event.rawPath;
    const request: Request = { event, context, method, path, now: deps.now() };
    try {
      return toResult(await route(request, deps));
    } catch (error) {
      if (error instanceof DomainError) return toResult({ status: statusOf(error), body: { error: error.message }, headers: errorHeadersOf(error) });
      deps.logger.error('Unhandled console error', { error, path: event.rawPath });
      return toResult({ status: 500, body: { error: 'Internal error', request_id: event.requestContext.requestId } });
    }
  };
}

async function route(request: Request, deps: ConsoleDeps): Promise<Answer> {
  const { event, method, path } = request;
  if (method !== 'GET' && method !== 'HEAD') checkOrigin(event, deps);
  if (path === '/session') return sessionRoute(request, deps);

  const signedIn = await requireSession(request, deps);
  const decision = await consumeRateLimit(deps.stores.rateLimits, sessionRateBucket(signedIn.sessionHash), request.now, CONSOLE_RATE_LIMIT);
  if (!decision.allowed) throw new RateLimited(decision.resetSeconds, CONSOLE_RATE_LIMIT_MESSAGE);

  const own = matchConsoleRoute(method, path);
  if (own) return runConsoleRoute(own.route, own.params, signedIn, deps);
  const owner = matchOwnerRoute(method, path);
  if (owner) return runOwnerRoute(owner.route, owner.params, signedIn, deps);
  return json({ error: `No console route ${method} ${CONSOLE_API_PREFIX}${path}` }, 404);
}

/** A console route: the session's scope and route limits, then its project (and project limit), body and query. */
async function runConsoleRoute(route: ConsoleRoute, params: Record<string, string>, request: SessionRequest, deps: ConsoleDeps): Promise<Answer> {
  const { caller } = request;
  requireScope(caller.scope, route.need);
  if (!route.everySession) requireConsoleRoute(caller.routes, route);
  const id = params.id;
  const project = id === undefined ? undefined : await openProject(deps.stores.projects, caller, PATH_ID_PATTERN.test(id) ? id : '');
  const body = route.body ? parse(route.body, bodyOf(request.event)) : undefined;
  const query = route.query ? parse(route.query, queryOf(request.event)) : undefined;
  const trail = trailOf(request, deps);
  const context: ConsoleContext<string, unknown, unknown> = {
    project,
    body,
    query,
    params,
    now: request.now,
    trail,
    stores: deps.stores,
    deps,
    caller,
    session: request.session,
    event: request.event,
    timeLeftMs: () => request.context.getRemainingTimeInMillis(),
  };
  return route.run(context);
}

/**
 * An owner API route for the console: the endpoint the REST API runs, given the session's caller directly (no
 * authorizer), after the same access check and body rules, in the same order.
 */
async function runOwnerRoute(
  endpoint: Endpoint<unknown, unknown, unknown>,
  params: Record<string, string>,
  request: SessionRequest,
  deps: ConsoleDeps,
): Promise<Answer> {
  const { event } = request;
  requireAccess(request.caller, endpoint.scope);
  const raw = { body: event.body ?? null, isBase64Encoded: event.isBase64Encoded, headers: event.headers };
  const body = endpoint.body ? await readJsonBody(raw) : endpoint.textBody ? readTextBody(raw) : undefined;
  const endpointRequest: EndpointRequest = {
    caller: request.caller,
    source: 'console',
    requestId: event.requestContext.requestId,
    projectId: params.id ?? '',
    keyId: params.key_id ?? '',
    entryId: params.entry_id ?? '',
    query: queryOf(event),
    body,
    timeLeftMs: () => request.context.getRemainingTimeInMillis(),
  };
  return json(await runEndpoint(endpoint, deps, endpointRequest));
}

/** Audit entries of a console request: the session's token, the request's id, `source: "console"`. */
function trailOf(request: SessionRequest, deps: ConsoleDeps) {
  return {
    log: deps.stores.audit,
    actor: actorOf(request.session, request.event),
    unsettled: (entry: { entryId: string; projectId?: string }, outcome: unknown, error: unknown) =>
      deps.logger.error(AUDIT_UNSETTLED, { entryId: entry.entryId, projectId: entry.projectId, outcome, error }),
  };
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

/**
 * A session of a token limited to named routes calls the console's routes that do what those routes do, and no
 * other: the 403 names the route it would need, or says that none of the owner routes opens this one.
 */
function requireConsoleRoute(routes: readonly string[] | undefined, route: ConsoleRoute): void {
  const { need } = route;
  if (routes === undefined || (need.route !== undefined && routes.includes(need.route))) return;
  throw new ConsoleRouteNotAllowed(
    need.route === undefined
      ? `This token may call only ${routes.join(', ')}; ${need.doing} (${route.method} ${CONSOLE_API_PREFIX}${route.path}) is open only to a token created without --routes`
      : `This token may call only ${routes.join(', ')}; ${need.doing} needs the ${need.route} route. Sign in with a token created without --routes, or with ${need.route}.`,
  );
}

class ConsoleRouteNotAllowed extends DomainError {
  override readonly name = 'RouteNotAllowed';
}

/** Answered as a missing scope is (403): the caller may not make this change from where it asks. */
class OriginRefused extends DomainError {
  override readonly name = 'ScopeMissing';
  constructor() {
    super('Changes are accepted only from the console itself: the request must carry an Origin header equal to the console origin');
  }
}

/** A console route's JSON body, leniently: no body is `{}`, and the media type is not asked. */
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
    // Past the failed sign-ins an address may make in a minute, every sign-in from it waits for the next minute.
    const window = { ...rateWindowAt(now), seconds: SIGN_IN_FAILURE_LIMIT.windowSeconds };
    const failures = signInBucket(clientAddressOf(event, deps.originSecrets));
    if (await deps.stores.rateLimits.isFull(failures, window, SIGN_IN_FAILURE_LIMIT.requests))
      throw new RateLimited(window.resetSeconds, signInRefusal(window.resetSeconds));
    const { token } = parse(SignInBody, bodyOf(event));
    const tokenHash = hashToken(token);
    const grant = await deps.stores.tokens.findToken(tokenHash);
    if (!grant) {
      await deps.stores.rateLimits.countRequest(failures, window, SIGN_IN_FAILURE_LIMIT.requests);
      throw new Unauthenticated();
    }
    const secret = newSessionSecret();
    // The session keeps the token's limits: it reaches no further than the token would at the API.
    const session: ConsoleSession = {
      ownerId: grant.ownerId,
      tokenHash,
      tokenId: grant.tokenId,
      scope: grant.scope,
      ...limitsOf(grant),
      createdAt: now,
      lastUsedAt: now,
    };
    await openSession(deps.stores, sessionHashOf(secret), session, actorOf(session, event));
    return {
      status: 200,
      body: sessionAnswer(session),
      cookies: [sessionCookie(secret, { secure: secureCookie(event, deps), maxAgeSeconds: SESSION_MAX_SECONDS })],
    };
  }
  if (method === 'GET' || method === 'HEAD') {
    const { session } = await requireSession(request, deps);
    return json(sessionAnswer(session));
  }
  if (method === 'DELETE') {
    const secret = sessionSecretOf(event.cookies ?? []);
    const sessionHash = secret && sessionHashOf(secret);
    const session = sessionHash ? await deps.stores.sessions.get(sessionHash) : undefined;
    if (sessionHash && session) await closeSession(deps.stores, sessionHash, session, actorOf(session, event), 'sign-out', now);
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
    await deps.stores.sessions.delete(sessionHash, session);
    throw new SignedOut();
  }
  if (sessionNeedsTouch(session, request.now)) await deps.stores.sessions.touch(sessionHash, session, request.now);
  const caller: Caller = { ownerId: session.ownerId, tokenHash: session.tokenHash, tokenId: session.tokenId, scope: session.scope, ...limitsOf(session) };
  return { ...request, session, sessionHash, caller };
}

/** Who a session's own entries name: its token, the request, the console. */
const actorOf = (session: Pick<ConsoleSession, 'tokenId'>, event: APIGatewayProxyEventV2): ApiActor => ({
  tokenId: session.tokenId,
  requestId: event.requestContext.requestId,
  source: 'console',
});

/** A token's or session's limits alone, absent ones absent. */
const limitsOf = ({ projectId, routes }: TokenLimits): TokenLimits => ({
  ...(projectId !== undefined && { projectId }),
  ...(routes !== undefined && { routes }),
});

/** What a session is: whose, its scope, and its token's limits when it has any (absent for an unlimited token). */
const sessionAnswer = (session: ConsoleSession) => ({
  owner_id: session.ownerId,
  scope: session.scope,
  ...(session.projectId !== undefined && { project_id: session.projectId }),
  ...(session.routes !== undefined && { routes: session.routes }),
});

class SignedOut extends Unauthenticated {
  override readonly message = 'Not signed in to the console, or the session ended: sign in with an API token';
}
