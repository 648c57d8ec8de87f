import type { Logger } from '@aws-lambda-powertools/logger';
import type { MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { DomainError, InvalidInput } from '#domain/errors';
import { errorHeadersOf, statusOf } from './error-statuses';
import { errorResponse, INTERNAL_ERROR, JSON_BODY_REQUIRED, MALFORMED_JSON } from './responses';

/**
 * The HTTP contract every handler keeps, as middy middlewares: headers read in any case, JSON bodies read by the
 * rules of spec §4 and §7, and every failure answered as `{"error": "..."}` with the status of its domain error.
 */

/** Bodies of this API are a few dozen bytes; anything past 64 KB is refused before it is parsed. */
export const MAX_BODY_BYTES = 64 * 1024;

/** A proxy event whose body the middlewares have parsed. */
export type JsonEvent = Omit<APIGatewayProxyEvent, 'body'> & { body: unknown };
/** What a handler's middlewares share during one request: the rate-limit headers to put on any answer. */
export type Internal = { rateHeaders?: Record<string, string> };
export type HttpMiddleware = MiddlewareObj<JsonEvent, APIGatewayProxyResult, Error, Context, Internal>;
/** An API Gateway REST proxy handler, as the handler factories build them. */
export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** The value `schema` makes of `input`, or an InvalidInput naming the first problem. */
export function parse<T>(schema: z.ZodMiniType<T, unknown>, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) throw new InvalidInput(result.error.issues[0]?.message ?? 'Invalid request');
  return result.data;
}

/**
 * Every log line of the invocation carries API Gateway's request id as `requestId`, the field of the same name in
 * the access log, so a line joins its request there; and Lambda's context (`function_request_id`, cold start),
 * which is the `request_id` a 500 reports. Keys of the previous invocation of the container are dropped first.
 */
export function requestIdsInLogs(logger: Logger): HttpMiddleware {
  return {
    before: ({ event, context }) => {
      logger.resetKeys();
      logger.addContext(context);
      logger.appendKeys({ requestId: event.requestContext?.requestId });
    },
  };
}

/** Clients send headers in any case; API Gateway passes them as sent. */
export function lowercaseHeaders(): HttpMiddleware {
  return {
    before: ({ event }) => {
      event.headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    },
  };
}

/** The JSON body rules, in order: size first, then the media type, then parsing (middy's parser guards __proto__). */
export function jsonBody(): HttpMiddleware[] {
  return [bodySizeLimit(), jsonBodyContract(), httpJsonBodyParser({ disableContentTypeCheck: true }) as unknown as HttpMiddleware];
}

function bodySizeLimit(): HttpMiddleware {
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
function jsonBodyContract(): HttpMiddleware {
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

/** The media type a text body is sent as. */
export const TEXT_BODY_TYPE = 'text/plain';

/**
 * A text body (a leaked dump): `text/plain`, UTF-8 (no charset or `utf-8`). A body API Gateway passed base64-encoded
 * is decoded strictly, so bytes that are not UTF-8 are refused; one passed as text reaches the rule as it came (the
 * rule refuses U+FFFD, what such bytes become on the way). Its size is the rule's to judge.
 */
export function textBody(): HttpMiddleware {
  return {
    before: ({ event }) => {
      event.body = readTextBody(event);
      event.isBase64Encoded = false;
    },
  };
}

/** A `text/plain; charset=utf-8` body as a string, or the 400 that says what to send instead (the console's mirror reads it too). */
export function readTextBody(event: { body: unknown; isBase64Encoded?: boolean; headers: Record<string, string | undefined> }): string {
  const [mediaType = '', ...parameters] = (event.headers['content-type'] ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (mediaType !== TEXT_BODY_TYPE || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    throw new InvalidInput(
      `Send the body as Content-Type: text/plain; charset=utf-8; got ${mediaType ? `Content-Type ${mediaType}${charset ? `; charset=${charset}` : ''}` : 'no Content-Type'}`,
    );
  }
  const raw = typeof event.body === 'string' ? event.body : '';
  if (!event.isBase64Encoded) return raw;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(raw, 'base64'));
  } catch {
    throw new InvalidInput('The body is not valid UTF-8: send it as UTF-8 text');
  }
}

/** What middy's JSON body parser throws, said so a person knows what to fix. */
function parserError(message: string): InvalidInput {
  if (message === 'Forbidden key in JSON body') return new InvalidInput('Request body contains a forbidden key (__proto__ or constructor)');
  return new InvalidInput(MALFORMED_JSON);
}

/** A failure of the body middlewares as the caller hears it: middy's own HTTP errors (422 for malformed JSON) are 400s. */
function asDomainFailure(error: unknown): unknown {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return !(error instanceof DomainError) && typeof status === 'number' && status >= 400 && status < 500
    ? parserError((error as { message?: string }).message ?? '')
    : error;
}

export function jsonErrors(logger: Logger): HttpMiddleware {
  return {
    onError: (request) => {
      const error = request.error;
      const rateHeaders = request.internal.rateHeaders ?? {};
      const failure = asDomainFailure(error);
      if (failure instanceof DomainError) {
        request.response = errorResponse(statusOf(failure), failure.message, { ...rateHeaders, ...errorHeadersOf(failure) });
        return;
      }
      // The log line carries both request ids already (requestIdsInLogs).
      logger.error('Unhandled error', { error, path: request.event.path });
      request.response = errorResponse(500, INTERNAL_ERROR, rateHeaders, request.context.awsRequestId ?? request.event.requestContext?.requestId);
    },
  };
}

/**
 * A JSON body read by the rules of jsonBody(), the same middlewares in the same order, for a request that is not a
 * middy one (the console's mirror of the owner routes): the parsed body, or the InvalidInput the API would answer.
 */
export async function readJsonBody(request: { body: string | null; isBase64Encoded: boolean; headers: Record<string, string | undefined> }): Promise<unknown> {
  const event = { ...request, headers: { ...request.headers } };
  try {
    for (const middleware of jsonBody()) await middleware.before?.({ event } as unknown as Parameters<NonNullable<HttpMiddleware['before']>>[0]);
  } catch (error) {
    throw asDomainFailure(error);
  }
  return event.body;
}
