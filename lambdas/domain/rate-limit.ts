import type { RateLimitStore } from './ports';

/** Spec §8: 100 requests per minute, counted per API token in fixed one-minute windows. */
export const RATE_LIMIT = { requests: 100, windowSeconds: 60 } as const;

export const RATE_LIMIT_MESSAGE = `Rate limit exceeded: ${RATE_LIMIT.requests} requests per minute`;

export interface RateWindow {
  /** Epoch second the window opened at; windows are aligned to the minute. */
  start: number;
  /** Seconds until the next window opens (1..60), for `Retry-After` and `RateLimit`. */
  resetSeconds: number;
}

export function rateWindowAt(nowSeconds: number): RateWindow {
  const start = nowSeconds - (nowSeconds % RATE_LIMIT.windowSeconds);
  return { start, resetSeconds: start + RATE_LIMIT.windowSeconds - nowSeconds };
}

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  resetSeconds: number;
}

/** Count a request against the caller's current window (spec §8); the console's sessions pass their own limit. */
export async function consumeRateLimit(
  store: RateLimitStore,
  bucket: string,
  nowSeconds: number,
  limit: { requests: number; windowSeconds: 60 } = RATE_LIMIT,
): Promise<RateDecision> {
  const window = rateWindowAt(nowSeconds);
  const count = await store.countRequest(bucket, { start: window.start, seconds: limit.windowSeconds }, limit.requests);
  if (count === undefined) return { allowed: false, remaining: 0, resetSeconds: window.resetSeconds };
  return { allowed: true, remaining: limit.requests - count, resetSeconds: window.resetSeconds };
}
