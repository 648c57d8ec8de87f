import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { type ApiActor, AUDIT_UNSETTLED, type ManyWritesAuditTrail } from '#domain/audit';
import { InvalidInput, ProjectNotFound, RateLimited, Unauthenticated } from '#domain/errors';
import type { Caller, Project } from '#domain/model';
import type { AuditLog, BlacklistStore, KeySecret, KeyStore, ProjectStore, RateLimitStore } from '#domain/ports';
import { openProject } from '#domain/project-api';
import { consumeRateLimit, RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import type { KeyIssuing } from '#domain/selling-keys';
import { callerOfToken, limitsFromContext, requireRoute, requireScope, type ScopeNeed, scopeOf, type TokenScope } from '#domain/tokens';
import { PATH_ID_PATTERN } from '#schemas/formats';
import {
  type HttpMiddleware,
  type Internal,
  type JsonEvent,
  jsonBody,
  jsonErrors,
  lowercaseHeaders,
  type ProxyHandler,
  parse,
  requestIdsInLogs,
  textBody,
} from './middlewares';
import { rateLimitHeaders } from './rate-limit-headers';
import { jsonResponse } from './responses';

/**
 * What every API endpoint is built from: the stores it reads and writes, the audit log, the secret order keys
 * derive from (read only by an issue call with an order id), the clock and the logger.
 */
export interface ApiDeps {
  stores: { projects: ProjectStore; rateLimits: RateLimitStore; audit: AuditLog; keys: KeyStore; blacklist: BlacklistStore };
  keySecret: KeySecret;
  now: () => number;
  logger: Logger;
}

/** What a route's `run` gets, named once for every route: the request made into values, and what to act with. */
interface RouteContext<Query, Body> {
  project: Project;
  query: Query;
  body: Body;
  now: number;
  /** The caller's token scope, for answers a read token sees less of. */
  scope: TokenScope;
  /** The `{key_id}` of the routes that name one key in their path; empty for the others. */
  keyId: string;
  /** The `{entry_id}` of the routes that name one blacklist entry; empty for the others. */
  entryId: string;
  /** Where a change's audit entries go and whom they name; an entry a change could not settle is logged. */
  trail: ManyWritesAuditTrail;
  /** The project store, the key store with the secret order keys derive from, and the buyer blacklist. */
  stores: { projects: ProjectStore; keys: KeyIssuing; blacklist: BlacklistStore };
  timeLeftMs: () => number;
}

export interface Endpoint<Query, Body, Result> {
  /** The token scope the route needs (its route's, see #api/routes). */
  scope: ScopeNeed;
  query: z.ZodMiniType<Query, unknown>;
  /** Present for endpoints that take a JSON body. */
  body?: z.ZodMiniType<Body, unknown>;
  /** Present for endpoints whose body is UTF-8 text (`text/plain`), read by textBody(): a string schema. */
  textBody?: z.ZodMiniType<Body, unknown>;
  /** A method, so that an endpoint of any query and body types is also an Endpoint<unknown, unknown, unknown>. */
  run(context: RouteContext<Query, Body>): Promise<Result>;
}

export type ApiHandler = ProxyHandler;

/** One request of an endpoint, whichever door it came through: who asks, from where, and what it sent. */
export interface EndpointRequest {
  caller: Caller;
  source: NonNullable<ApiActor['source']>;
  requestId: string;
  /** The `{id}` of the path, as sent. */
  projectId: string;
  keyId: string;
  entryId: string;
  /** Query parameters, each once. */
  query: Record<string, string>;
  /** The JSON body as parsed (undefined for an endpoint without one). */
  body: unknown;
  timeLeftMs: () => number;
}

/**
 * The caller may call the endpoint: its token's scope and named routes (a read token learns it may not write before
 * its body is read). The project limit is openProject's, in runEndpoint.
 */
export function requireAccess(caller: Caller, need: ScopeNeed): void {
  requireScope(caller.scope, need);
  requireRoute(caller.routes, need);
}

/**
 * An endpoint's work once the door let the request in (requireAccess): body and query validation → project access
 * (the token's project limit included) → the endpoint's rule. Both doors run it: the REST adapter below, and the
 * console's mirror of the owner routes with its session's caller.
 */
export async function runEndpoint<Query, Body, Result>(endpoint: Endpoint<Query, Body, Result>, deps: ApiDeps, request: EndpointRequest): Promise<Result> {
  const { stores } = deps;
  const query = parse(endpoint.query, request.query);
  const bodySchema = endpoint.body ?? endpoint.textBody;
  const body = bodySchema ? parse(bodySchema, request.body) : (undefined as Body);
  const project = await openProject(stores.projects, request.caller, projectIdOf(request.projectId));
  const actor: ApiActor = { tokenId: request.caller.tokenId, requestId: request.requestId, source: request.source };
  const trail: ManyWritesAuditTrail = {
    log: stores.audit,
    actor,
    unsettled: (entry, outcome, error) => deps.logger.error(AUDIT_UNSETTLED, { entryId: entry.entryId, projectId: entry.projectId, outcome, error }),
  };
  return endpoint.run({
    project,
    query,
    body,
    now: deps.now(),
    scope: request.caller.scope,
    keyId: request.keyId,
    entryId: request.entryId,
    trail,
    stores: { projects: stores.projects, keys: { store: stores.keys, secret: deps.keySecret }, blacklist: stores.blacklist },
    timeLeftMs: request.timeLeftMs,
  });
}

/**
 * One API endpoint as a REST proxy Lambda handler (the owner API's door: audited `source: "api"`, each request
 * counted against the token's 100 a minute): HTTP in, JSON out. Every request goes the same straight line:
 * caller (from the authorizer, derived once) → rate limit → token scope and routes → body and query validation →
 * project access → the endpoint's rule. Every failure leaves as `{"error": "..."}` with its status; nothing
 * unexpected leaks past a 500.
 */
export function createApiHandler<Query, Body, Result>(endpoint: Endpoint<Query, Body, Result>, deps: ApiDeps): ApiHandler {
  const chain = middy<JsonEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(requestIdsInLogs(deps.logger))
    .use(jsonErrors(deps.logger))
    .use(lowercaseHeaders());
  chain.use(rateLimit(deps));
  chain.use(tokenAccess(endpoint.scope));
  if (endpoint.body) chain.use(jsonBody());
  if (endpoint.textBody) chain.use(textBody());
  const handler = chain.handler(async (event, context) => {
    const result = await runEndpoint(endpoint, deps, {
      caller: callerOf(event),
      source: 'api',
      requestId: event.requestContext.requestId,
      projectId: event.pathParameters?.id ?? '',
      keyId: event.pathParameters?.key_id ?? '',
      entryId: event.pathParameters?.entry_id ?? '',
      query: singleValuedQuery(event),
      body: event.body,
      timeLeftMs: () => context.getRemainingTimeInMillis(),
    });
    return jsonResponse(200, result);
  });
  return handler;
}

const callers = new WeakMap<object, Caller>();

/**
 * The caller the authorizer established, derived once per request (the rate limit, the scope check and the
 * endpoint ask for it); without one the request never passed API Gateway's auth. An answer cached from before
 * scopes existed carries no scope, like the tokens of then: write.
 */
function callerOf(event: Pick<APIGatewayProxyEvent, 'requestContext'>): Caller {
  const known = callers.get(event);
  if (known) return known;
  const authorizer = event.requestContext.authorizer;
  const ownerId = authorizer?.ownerId;
  const tokenHash = authorizer?.tokenHash;
  if (typeof ownerId !== 'string' || typeof tokenHash !== 'string') throw new Unauthenticated();
  const caller = callerOfToken(ownerId, tokenHash, scopeOf(authorizer?.scope), limitsFromContext(authorizer));
  callers.set(event, caller);
  return caller;
}

function projectIdOf(id: string): string {
  // An id that this service could never have made names no project: answer as for any unknown project.
  if (!PATH_ID_PATTERN.test(id)) throw new ProjectNotFound();
  return id;
}

/** Query parameters as single strings; a repeated parameter is ambiguous and refused. */
function singleValuedQuery(event: Pick<APIGatewayProxyEvent, 'queryStringParameters' | 'multiValueQueryStringParameters'>): Record<string, string> {
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (values && values.length > 1) throw new InvalidInput(`Query parameter "${name}" was given ${values.length} times; give it once`);
  }
  return Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).map(([name, value]) => [name, value ?? '']));
}

/** Before the body is read: a read token learns it may not write, whatever it sent. */
function tokenAccess(need: ScopeNeed): HttpMiddleware {
  return { before: ({ event }) => requireAccess(callerOf(event), need) };
}

/** The exact per-token 100/min rule; every authenticated request counts, whatever its outcome. */
function rateLimit({ stores, now }: ApiDeps): HttpMiddleware {
  return {
    before: async (request) => {
      const decision = await consumeRateLimit(stores.rateLimits, callerOf(request.event).tokenHash, now());
      request.internal.rateHeaders = rateLimitHeaders(decision);
      if (!decision.allowed) throw new RateLimited(decision.resetSeconds, RATE_LIMIT_MESSAGE);
    },
    after: (request) => {
      if (request.response) request.response.headers = { ...request.response.headers, ...request.internal.rateHeaders };
    },
  };
}
