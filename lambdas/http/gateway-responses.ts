import { RATE_LIMIT, RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { rateLimitHeaders } from './rate-limit-headers';
import { JSON_BODY_REQUIRED } from './responses';

/**
 * The responses API Gateway makes itself, rewritten to the API's `{"error": "..."}` shape. The CDK stack
 * installs these as gateway responses; the local server answers with the same status and body.
 * Keys are API Gateway's ResponseType names.
 */
export const GATEWAY_RESPONSES = {
  UNAUTHORIZED: { status: 401, error: 'Missing or invalid API token: send Authorization: Bearer <API_TOKEN>' },
  ACCESS_DENIED: { status: 403, error: 'Access denied' },
  INVALID_API_KEY: { status: 403, error: 'API token is not enabled on the usage plan; create tokens with the dashboard' },
  MISSING_AUTHENTICATION_TOKEN: { status: 404, error: 'Not found: no such route; see the endpoint list in the README' },
  THROTTLED: { status: 429, error: RATE_LIMIT_MESSAGE },
  QUOTA_EXCEEDED: { status: 429, error: RATE_LIMIT_MESSAGE },
  BAD_REQUEST_BODY: { status: 400, error: 'Malformed request body' },
  BAD_REQUEST_PARAMETERS: { status: 400, error: 'Malformed request parameters' },
  /** API Gateway's own payload limit (10 MB); the only 413 the API answers. */
  REQUEST_TOO_LARGE: { status: 413, error: 'Request body too large' },
  /** Only with request validation, which this API leaves to the handlers; kept 400 like every other body error (spec §7). */
  UNSUPPORTED_MEDIA_TYPE: { status: 400, error: JSON_BODY_REQUIRED },
  AUTHORIZER_FAILURE: { status: 500, error: 'Internal error' },
  AUTHORIZER_CONFIGURATION_ERROR: { status: 500, error: 'Internal error' },
  /** API Gateway's own 502 and 504, answered 500 because the spec's error table (§7) has no other 5xx. */
  INTEGRATION_FAILURE: { status: 500, error: 'Internal error' },
  INTEGRATION_TIMEOUT: { status: 500, error: 'The request timed out; it is safe to retry' },
  DEFAULT_4XX: { status: undefined, error: 'Bad request' },
  DEFAULT_5XX: { status: undefined, error: 'Internal error' },
} as const satisfies Record<string, { status: number | undefined; error: string }>;

export type GatewayResponseType = keyof typeof GATEWAY_RESPONSES;

/**
 * The headers a handler's 429 carries besides the security headers (`Retry-After`, `RateLimit`, `RateLimit-Policy`),
 * on API Gateway's own 429s too (usage plan, stage or method throttling). API Gateway cannot compute them, so they
 * are static and say the worst case: nothing left, and a whole window to wait, after which the fixed window has
 * turned and the usage plan's bucket has refilled far more than one request.
 */
const RETRY_LATER_HEADERS: Readonly<Record<string, string>> = {
  'Retry-After': String(RATE_LIMIT.windowSeconds),
  ...rateLimitHeaders({ remaining: 0, resetSeconds: RATE_LIMIT.windowSeconds }),
};

/** Headers of a gateway response beyond the security headers every response carries. */
export const GATEWAY_RESPONSE_HEADERS: Partial<Record<GatewayResponseType, Readonly<Record<string, string>>>> = {
  THROTTLED: RETRY_LATER_HEADERS,
  QUOTA_EXCEEDED: RETRY_LATER_HEADERS,
};
