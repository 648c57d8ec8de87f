/**
 * API Gateway's throttle as a pure model, to size the usage plan by simulation instead of by argument.
 * API Gateway documents a token bucket: `burstLimit` is the bucket's capacity, `rateLimit` the tokens added per
 * second, each request takes one token and a request that finds less than one is refused with 429. The bucket
 * starts full. A refused request takes no token.
 */
export interface TokenBucket {
  /** Tokens added per second. */
  rateLimit: number;
  /** Capacity: the most requests that can pass at one instant. */
  burstLimit: number;
}

export interface BucketOutcome {
  accepted: number;
  refused: number;
  /** When the first refused request arrived (seconds), if any was refused. */
  firstRefusalAt?: number;
}

/** Run `arrivals` (request times in seconds, in any order) through a bucket that starts full. */
export function simulateTokenBucket(bucket: TokenBucket, arrivals: readonly number[]): BucketOutcome {
  const times = arrivals.toSorted((a, b) => a - b);
  let tokens = bucket.burstLimit;
  let last = times[0] ?? 0;
  const outcome: BucketOutcome = { accepted: 0, refused: 0 };
  for (const time of times) {
    tokens = Math.min(bucket.burstLimit, tokens + (time - last) * bucket.rateLimit);
    last = time;
    if (tokens >= 1) {
      tokens -= 1;
      outcome.accepted += 1;
    } else {
      outcome.refused += 1;
      outcome.firstRefusalAt ??= time;
    }
  }
  return outcome;
}

/**
 * The most requests a client that keeps to `limit` per fixed window can send within any `seconds` of arrival time,
 * when the handler counts each request up to `latencySeconds` after API Gateway received it. Such an interval meets
 * every window whose counting time falls within `seconds + latencySeconds`: at most ⌊(seconds + latency) / window⌋ + 2
 * windows (one partly at each end), each with `limit` requests.
 */
function mostCompliantRequests(limit: { requests: number; windowSeconds: number }, seconds: number, latencySeconds: number): number {
  return (Math.floor((seconds + latencySeconds) / limit.windowSeconds) + 2) * limit.requests;
}

/**
 * Whether a bucket lets through every schedule of a client that keeps to `limit`, whatever the latency up to
 * `latencySeconds` and over intervals up to `horizonSeconds`. A bucket that starts full admits exactly the schedules
 * with at most `burstLimit + rateLimit × t` requests in every interval of length t (the token-bucket arrival curve).
 * The compliant bound only rises where `t + latency` crosses a window boundary and the bucket's side only grows,
 * so those points and t = 0 are the only ones to check.
 */
export function admitsEveryCompliantClient(
  bucket: TokenBucket,
  limit: { requests: number; windowSeconds: number },
  latencySeconds: number,
  horizonSeconds: number,
): boolean {
  const worst = [0];
  for (let t = limit.windowSeconds - latencySeconds; t <= horizonSeconds; t += limit.windowSeconds) if (t > 0) worst.push(t);
  return worst.every((t) => mostCompliantRequests(limit, t, latencySeconds) <= bucket.burstLimit + bucket.rateLimit * t);
}
