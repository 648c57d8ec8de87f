import { RATE_LIMIT } from '#domain/rate-limit';
import type { TokenBucket } from './token-bucket';

/**
 * Every throttle of the deployed API in one place, each with why it is the size it is (README, "Operating at scale").
 */

/**
 * The usage plan's per-token bucket: API Gateway's coarse guard in front of the exact 100/min window the handlers
 * keep in DynamoDB. It must never refuse a client that keeps to the spec's limit (test/stack/usage-plan-sizing.test.ts
 * simulates the worst schedules):
 * - burst 300: the most a compliant client can send in one instant is two full windows back to back (100 at
 *   12:00:59, 100 at 12:01:00); the third window's 100 absorbs the time between API Gateway receiving a request and
 *   the handler counting it, for any such delay under a minute;
 * - rate 2/s: a minute refills 120, more than the 100 a window allows, so a client at the limit for hours never
 *   drains the bucket.
 * A flood from one token gets at most 300 requests plus 2 a second past it.
 */
export const USAGE_PLAN_THROTTLE = {
  burstLimit: 3 * RATE_LIMIT.requests,
  rateLimit: Math.ceil(RATE_LIMIT.requests / RATE_LIMIT.windowSeconds),
} as const satisfies TokenBucket;

/**
 * The loader check's throttle in API Gateway, across all its clients (the handler limits each key and address):
 * room for a script checked 1,000 times a second, and a ceiling a flood of checks cannot raise.
 */
export const LOADER_METHOD_THROTTLE = { rateLimit: 1_000, burstLimit: 2_000 } as const satisfies TokenBucket;

/** Instances the loader check may run at most, and keeps for itself (see the README on reserved concurrency). */
export const LOADER_RESERVED_CONCURRENCY = 100;
