import { RATE_LIMIT, type RateDecision } from '#domain/rate-limit';

/**
 * IETF draft-ietf-httpapi-ratelimit-headers (structured-field form): the policy and what is left of it, on every
 * answer, so a client can pace itself before it meets a 429 (whose `Retry-After` comes with the RateLimited error).
 */
export function rateLimitHeaders(decision: Pick<RateDecision, 'remaining' | 'resetSeconds'>): Record<string, string> {
  return {
    'RateLimit-Policy': `"per-token";q=${RATE_LIMIT.requests};w=${RATE_LIMIT.windowSeconds}`,
    RateLimit: `"per-token";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
