import type { Logger } from '@aws-lambda-powertools/logger';
import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { DomainError, InvalidInput, ProjectNotFound, RateLimited, Unauthenticated } from '#domain/errors';
import type { Caller, Project } from '#domain/model';
import type { ProjectStore, RateLimitStore } from '#domain/ports';
import { openProject } from '#domain/project-api';
import { consumeRateLimit } from '#domain/rate-limit';
import { PATH_ID_PATTERN } from '#schemas/formats';
import { errorHeadersOf, statusOf } from './error-statuses';
import { rateLimitHeaders } from './rate-limit-headers';
import { errorResponse, INTERNAL_ERROR, JSON_BODY_REQUIRED, jsonResponse } from './responses';

/** Bodies of this API are a few dozen bytes; anything past 64 KB is refused before it is parsed. */
export const MAX_BODY_BYTES = 64 * 1024;

/** What every API endpoint is built from: the stores it reads and writes, the clock and the logger. */
export interface ApiDeps {
  stores: { projects: ProjectStore; rateLimits: RateLimitStore };
  now: () => number;
  logger: Logger;
}

export interface Endpoint<Query, Body, Result> {
  query: z.ZodMiniType<Query, unknown>;
  /** Present for endpoints that take a JSON body. */
  body?: z.ZodMiniType<Body, unknown>;
  // A method, so that an endpoint of any query and body types is also an Endpoint<unknown, unknown, unknown>.
  run(input: { project: Project; query: Query; body: Body; now: number }, projects: ProjectStore): Promise<Result>;
}

/** An endpoint with its types inferred from its schemas (`defineEndpoint({ query, body, run })`). */
export const defineEndpoint = <Query, Body, Result>(endpoint: Endpoint<Query, Body, Result>) => endpoint;

type Event = Omit<APIGatewayProxyEvent, 'body'> & { body: unknown };
/** An API Gateway REST proxy handler, as createApiHandler builds it. */
export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type Internal = { rateHeaders: Record<string, string> };
type ApiMiddleware = MiddlewareObj<Event, APIGatewayProxyResult, Error, Context, Internal>;

/**
 * One API endpoint as a Lambda handler: HTTP in, JSON out. Every request goes the same straight line:
 * caller (from the authorizer) → rate limit → body and query validation → project access → the endpoint's rule.
 * Every failure leaves as `{"error": "..."}` with its status; nothing unexpected leaks past a 500.
 */
export function createApiHandler<Query, Body, Result>(endpoint: Endpoint<Query, Body, Result>, deps: ApiDeps): ApiHandler {
  const { stores, now } = deps;
  const chain = middy<Event, APIGatewayProxyResult, Error, Context, Internal>()
    .use(jsonErrors(deps.logger))
    .use(lowercaseHeaders())
    .use(rateLimit(deps));
  // Our own content-type rule runs first (see jsonBodyContract); middy's parser then only parses, guarding __proto__.
  if (endpoint.body) chain.use(bodySizeLimit()).use(jsonBodyContract()).use(httpJsonBodyParser({ disableContentTypeCheck: true }) as unknown as ApiMiddleware);
  const handler = chain.handler(async (event) => {
    const query = parse(endpoint.query, singleValuedQuery(event));
    const body = endpoint.body ? parse(endpoint.body, event.body) : (undefined as Body);
    const project = await openProject(stores.projects, callerOf(event), projectIdOf(event));
    const result = await endpoint.run({ project, query, body, now: now() }, stores.projects);
    return jsonResponse(200, result);
  });
  return handler;
}

function parse<T>(schema: z.ZodMiniType<T, unknown>, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) throw new InvalidInput(result.error.issues[0]?.message ?? 'Invalid request');
  return result.data;
}

/** The caller the authorizer established; without one the request never passed API Gateway's auth. */
export function callerOf(event: Pick<APIGatewayProxyEvent, 'requestContext'>): Caller {
  const authorizer = event.requestContext.authorizer;
  const ownerId = authorizer?.ownerId;
  const tokenHash = authorizer?.tokenHash;
  if (typeof ownerId !== 'string' || typeof tokenHash !== 'string') throw new Unauthenticated();
  return { ownerId, tokenHash };
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

/** Clients send headers in any case; API Gateway passes them as sent. */
function lowercaseHeaders(): ApiMiddleware {
  return {
    before: ({ event }) => {
      event.headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    },
  };
}

/** The exact per-token 100/min rule; every authenticated request counts, whatever its outcome. */
function rateLimit({ stores, now }: ApiDeps): ApiMiddleware {
  return {
    before: async (request) => {
      const decision = await consumeRateLimit(stores.rateLimits, callerOf(request.event).tokenHash, now());
      request.internal.rateHeaders = rateLimitHeaders(decision);
      if (!decision.allowed) throw new RateLimited(decision.resetSeconds);
    },
    after: (request) => {
      if (request.response) request.response.headers = { ...request.response.headers, ...request.internal.rateHeaders };
    },
  };
}

function bodySizeLimit(): ApiMiddleware {
  return {
    before: ({ event }) => {
      const body = typeof event.body === 'string' ? event.body : '';
      const bytes = event.isBase64Encoded ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body);
      if (bytes > MAX_BODY_BYTES) throw new InvalidInput(`Request body too large: at most ${MAX_BODY_BYTES / 1024} KB`);
    },
  };
}

/** `application/json` and `application/<anything>+json`, with or without parameters such as `charset`. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
/**
 * Media types under which a body is read as JSON only when it is a JSON object: no type at all, and curl's default
 * for `-d`. A form body (`key_id=key_1`) never starts with `{`, so such a body cannot be misread either way.
 */
const LENIENT_MEDIA_TYPES = new Set(['', 'application/x-www-form-urlencoded']);

/**
 * The body rules of spec §4 and §7: an empty body is the empty object (so `key_id` is reported missing, as for
 * `{}`); a JSON media type is parsed as JSON; anything that cannot be read as a JSON object is a 400 that says
 * what to send. The spec's table has no 415, so there is none.
 */
function jsonBodyContract(): ApiMiddleware {
  return {
    before: ({ event }) => {
      const raw = typeof event.body === 'string' ? event.body : '';
      const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      const mediaType = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (text.trim() === '') {
        event.body = '{}';
      } else if (!JSON_MEDIA_TYPE.test(mediaType) && !(LENIENT_MEDIA_TYPES.has(mediaType) && text.trimStart().startsWith('{'))) {
        throw new InvalidInput(`${JSON_BODY_REQUIRED}; got ${mediaType ? `Content-Type ${mediaType}` : 'no Content-Type'}`);
      } else {
        event.body = text;
      }
      event.isBase64Encoded = false;
    },
  };
}

/** What middy's JSON body parser throws, said so a person knows what to fix. */
function parserError(message: string): InvalidInput {
  if (message === 'Forbidden key in JSON body') return new InvalidInput('Request body contains a forbidden key (__proto__ or constructor)');
  return new InvalidInput('Malformed JSON in request body');
}

function jsonErrors(logger: Logger): ApiMiddleware {
  return {
    onError: (request) => {
      const error = request.error;
      const rateHeaders = request.internal.rateHeaders ?? {};
      // middy's JSON body parser throws HTTP errors of its own (422 for malformed JSON): the spec says 400.
      const status = (error as { statusCode?: unknown } | null)?.statusCode;
      const failure = !(error instanceof DomainError) && typeof status === 'number' && status >= 400 && status < 500 ? parserError(error?.message ?? '') : error;
      if (failure instanceof DomainError) {
        request.response = errorResponse(statusOf(failure), failure.message, { ...rateHeaders, ...errorHeadersOf(failure) });
        return;
      }
      const requestId = request.context.awsRequestId ?? request.event.requestContext?.requestId;
      logger.error('Unhandled error', { error, requestId, path: request.event.path });
      request.response = errorResponse(500, INTERNAL_ERROR, rateHeaders, requestId);
    },
  };
}
