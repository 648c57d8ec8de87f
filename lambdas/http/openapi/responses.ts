import { InvalidInput, PlanNotAllowed, ProjectNotFound, RateLimited, Unauthenticated } from '#domain/errors';
import { RATE_LIMIT, RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { ERROR_STATUSES, statusOf } from '#http/error-statuses';
import { GATEWAY_RESPONSES } from '#http/gateway-responses';
import { MAX_BODY_BYTES } from '#http/middlewares';
import { rateLimitHeaders } from '#http/rate-limit-headers';
import { INTERNAL_ERROR, JSON_BODY_REQUIRED, MALFORMED_JSON } from '#http/responses';
import { EXAMPLE } from './examples';
import type { ErrorExample } from './operation-doc';
import { type Examples, type Header, headerRef, JSON_TYPE, type MediaType, type ResponseObject, schemaRef } from './types';

// The answers the document shares between operations: errors with the messages the code actually produces, the
// shared response components, and the headers.

export const errorContent = (examples: Examples): Record<string, MediaType> => ({ [JSON_TYPE]: { schema: schemaRef('ErrorResponse'), examples } });

/** API Gateway's own answers (GATEWAY_RESPONSES) of one status, as examples. */
export function gatewayExamples(status: number): Examples {
  return Object.fromEntries(
    Object.entries(GATEWAY_RESPONSES)
      .filter(([, response]) => response.status === status)
      .map(([type, response]) => [`gateway_${type.toLowerCase()}`, { summary: `From API Gateway (${type})`, value: { error: response.error } }]),
  );
}

const bodySizeMessage = `Request body too large: at most ${MAX_BODY_BYTES / 1024} KB`;

/** Examples named after their summary (`Empty body` → `empty_body`), each showing the message the service sends. */
export const errorExamples = (examples: readonly ErrorExample[]): Examples =>
  Object.fromEntries(
    examples.map(({ summary, error }) => [
      summary
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_|_$/g, ''),
      { summary, value: { error: error.message } },
    ]),
  );

/** The failures every operation can meet, whatever it reads: the project gate and the rate limit. */
export const EVERY_OPERATION_FAILS_WITH: readonly ErrorExample[] = [
  { summary: 'Unknown project, or not yours', error: new ProjectNotFound() },
  { summary: 'Project not on the Business plan', error: new PlanNotAllowed(EXAMPLE.projectId, 'pro') },
  { summary: `Over ${RATE_LIMIT.requests} requests per minute`, error: new RateLimited(42, RATE_LIMIT_MESSAGE) },
];

/** Body failures every operation with a JSON body can meet. */
export const BODY_FAILS_WITH: readonly ErrorExample[] = [
  { summary: 'Malformed JSON', error: new InvalidInput(MALFORMED_JSON) },
  { summary: 'Not sent as JSON', error: new InvalidInput(`${JSON_BODY_REQUIRED}; got Content-Type text/plain`) },
  { summary: `Body over ${MAX_BODY_BYTES / 1024} KB`, error: new InvalidInput(bodySizeMessage) },
];

/** Shared response components: the statuses and descriptions come from the handlers' own table (ERROR_STATUSES). */
export function sharedResponses(): Record<string, ResponseObject> {
  return {
    Unauthorized: {
      description: `${ERROR_STATUSES.Unauthenticated.description} API Gateway answers it before the endpoint runs.`,
      content: errorContent(gatewayExamples(statusOf(new Unauthenticated()))),
    },
    PayloadTooLarge: {
      description: "The request is over API Gateway's own 10 MB payload limit (bodies over the API's 64 KB are a 400).",
      content: errorContent(gatewayExamples(413)),
    },
    TooManyRequests: {
      description: `${ERROR_STATUSES.RateLimited.description} The limit is ${RATE_LIMIT.requests} requests per minute per token.`,
      headers: { 'Retry-After': headerRef('Retry-After'), RateLimit: headerRef('RateLimit'), 'RateLimit-Policy': headerRef('RateLimit-Policy') },
      content: errorContent(errorExamples(EVERY_OPERATION_FAILS_WITH.filter(({ error }) => error instanceof RateLimited))),
    },
    InternalError: {
      description: 'Failure on the service side, or an endpoint that did not answer in time (safe to retry); `request_id` identifies it in the logs.',
      content: errorContent({
        handler: { summary: 'Unexpected failure', value: { error: INTERNAL_ERROR, request_id: 'c7a1f0d2-5b3e-4e8a-9d61-2f4b8c0e7a13' } },
        ...gatewayExamples(500),
      }),
    },
  };
}

/** Shared headers: the rate limit's, and the script fetch's version headers. */
export function sharedHeaders(): Record<string, Header> {
  const allowed = rateLimitHeaders({ remaining: 57, resetSeconds: 42 });
  return {
    RateLimit: {
      description: 'Requests left in the current one-minute window (`r`) and seconds until it resets (`t`).',
      schema: { type: 'string' },
      example: allowed.RateLimit,
    },
    'RateLimit-Policy': {
      description: `The quota: ${RATE_LIMIT.requests} requests (\`q\`) per ${RATE_LIMIT.windowSeconds}-second window (\`w\`), per token.`,
      schema: { type: 'string' },
      example: allowed['RateLimit-Policy'],
    },
    'Retry-After': {
      description: 'Seconds until the next window opens.',
      schema: { type: 'integer', minimum: 1, maximum: RATE_LIMIT.windowSeconds },
      example: 42,
    },
    ETag: {
      description: 'Strong tag of the served body: the same for the same version and watermark. Send it back as `If-None-Match`.',
      schema: { type: 'string' },
      example: '"577d2eff1378cbcc8207097a0e498908"',
    },
    'X-Version-Id': { description: 'The version served: the current version of the project.', schema: { type: 'string' }, example: 'ver_8c1d4e2f6a0b9e3d7f51' },
    'X-Version-Number': { description: "The served version's number.", schema: { type: 'integer', minimum: 1 }, example: 3 },
    'X-Script-SHA256': {
      description:
        'Lowercase hex SHA-256 of the stamped body, on a 304 too: a loader that keeps a copy runs it only while the copy still hashes to this (another script in the executor may have edited it).',
      schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    },
  };
}
