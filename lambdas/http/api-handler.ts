import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { ApiActor } from '#domain/audit';
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

export interface Endpoint<Query, Body, Result> {
  /** The token scope the route needs (its route's, see #api/routes). */
  scope: ScopeNeed;
  query: z.ZodMiniType<Query, unknown>;
  /** Present for endpoints that take a JSON body. */
  body?: z.ZodMiniType<Body, unknown>;
  /**
   * A method, so that an endpoint of any query and body types is also an Endpoint<unknown, unknown, unknown>.
   * `actor` and `audit` are for the endpoints that change something: their audit entries name the actor. `scope` is
   * the caller's token's, for answers a read token sees less of; `logger` is the function's. `keyId` is the
   * `{key_id}` of the routes that name one key in their path, `entryId` the `{entry_id}` of a blacklist entry's.
   */
  run(
    input: {
      project: Project;
      query: Query;
      body: Body;
      now: number;
      timeLeftMs: () => number;
      actor: ApiActor;
      scope: TokenScope;
      logger: Logger;
      keyId: string;
      entryId: string;
    },
    projects: ProjectStore,
    audit: AuditLog,
    keys: KeyIssuing,
    blacklist: BlacklistStore,
  ): Promise<Result>;
}

export type ApiHandler = ProxyHandler;

/**
 * How a front door serves the endpoints. The owner API (the default) counts each request against the token's
 * 100 a minute and audits `source: "api"`; the console serves the same endpoints behind its session, which has its
 * own limit (counted once per request before the endpoint, lambdas/http/console-api.ts) and audits `"console"`.
 */
export interface FrontDoor {
  source: NonNullable<ApiActor['source']>;
  tokenRateLimit: boolean;
}

export const OWNER_API: FrontDoor = { source: 'api', tokenRateLimit: true };
export const CONSOLE: FrontDoor = { source: 'console', tokenRateLimit: false };

/**
 * One API endpoint as a Lambda handler: HTTP in, JSON out. Every request goes the same straight line:
 * caller (from the authorizer) → rate limit → token scope → body and query validation → project access → the
 * endpoint's rule.
 * Every failure leaves as `{"error": "..."}` with its status; nothing unexpected leaks past a 500.
 */
export function createApiHandler<Query, Body, Result>(endpoint: Endpoint<Query, Body, Result>, deps: ApiDeps, door: FrontDoor = OWNER_API): ApiHandler {
  const { stores, now } = deps;
  const chain = middy<JsonEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(requestIdsInLogs(deps.logger))
    .use(jsonErrors(deps.logger))
    .use(lowercaseHeaders());
  if (door.tokenRateLimit) chain.use(rateLimit(deps));
  chain.use(tokenScope(endpoint.scope));
  if (endpoint.body) chain.use(jsonBody());
  const handler = chain.handler(async (event, context) => {
    const query = parse(endpoint.query, singleValuedQuery(event));
    const body = endpoint.body ? parse(endpoint.body, event.body) : (undefined as Body);
    const caller = callerOf(event);
    const projectId = projectIdOf(event);
    // A token limited to one project finds no other: the same 404 as a project of another owner.
    if (caller.projectId !== undefined && caller.projectId !== projectId) throw new ProjectNotFound();
    const project = await openProject(stores.projects, caller, projectId);
    const actor: ApiActor = { tokenId: caller.tokenId, requestId: event.requestContext.requestId, source: door.source };
    const keyId = event.pathParameters?.key_id ?? '';
    const entryId = event.pathParameters?.entry_id ?? '';
    const result = await endpoint.run(
      {
        project,
        query,
        body,
        now: now(),
        timeLeftMs: () => context.getRemainingTimeInMillis(),
        actor,
        scope: caller.scope,
        logger: deps.logger,
        keyId,
        entryId,
      },
      stores.projects,
      stores.audit,
      { store: stores.keys, secret: deps.keySecret },
      stores.blacklist,
    );
    return jsonResponse(200, result);
  });
  return handler;
}

/**
 * The caller the authorizer established; without one the request never passed API Gateway's auth. An answer
 * cached from before scopes existed carries no scope, like the tokens of then: write.
 */
function callerOf(event: Pick<APIGatewayProxyEvent, 'requestContext'>): Caller {
  const authorizer = event.requestContext.authorizer;
  const ownerId = authorizer?.ownerId;
  const tokenHash = authorizer?.tokenHash;
  if (typeof ownerId !== 'string' || typeof tokenHash !== 'string') throw new Unauthenticated();
  return callerOfToken(ownerId, tokenHash, scopeOf(authorizer?.scope), limitsFromContext(authorizer));
}

function projectIdOf(event: Pick<APIGatewayProxyEvent, 'pathParameters'>): string {
  const id = event.pathParameters?.id;
  // An id that this service could never have made names no project: answer as for any unknown project.
  if (!id || !PATH_ID_PATTERN.test(id)) throw new ProjectNotFound();
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
function tokenScope(need: ScopeNeed): HttpMiddleware {
  return {
    before: ({ event }) => {
      const caller = callerOf(event);
      requireScope(caller.scope, need);
      requireRoute(caller.routes, need);
    },
  };
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
