import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RATE_LIMIT } from '#domain/rate-limit';
import { USAGE_PLAN_THROTTLE } from '#lib/capacity';
import { admitsEveryCompliantClient, simulateTokenBucket, type TokenBucket } from '#lib/token-bucket';

/**
 * The usage plan's token bucket against the spec's limit (§8: 100 requests per token per fixed minute, which the
 * handlers count exactly). A client that keeps to it must never be refused by API Gateway; a flood must be.
 */

const { requests: LIMIT, windowSeconds: WINDOW } = RATE_LIMIT;
const DAY_WINDOWS = (24 * 3600) / WINDOW;
/** The last instant of a window, to the millisecond. */
const END = WINDOW - 0.001;
/**
 * The longest a request can take from API Gateway to the handler's count: the authorizer's 10 s timeout and
 * API Gateway's 29 s integration timeout. The handler counts by its own clock, so a request counted at the start of
 * a window may have reached API Gateway this much earlier, inside the window before.
 */
const WORST_LATENCY = 10 + 29;

/** A request as the handler counts it (`countedAt`, which decides its window) and how long it took to get there. */
interface Request {
  countedAt: number;
  latency: number;
}

const burst = (countedAt: number, latency = 0, count: number = LIMIT): Request[] => Array.from({ length: count }, () => ({ countedAt, latency }));
const arrivals = (requests: readonly Request[]) => requests.map((request) => request.countedAt - request.latency);

/** Guards the schedules themselves: every fixed window holds at most the limit, as the handler counts. */
function expectCompliant(requests: readonly Request[]) {
  const perWindow = new Map<number, number>();
  for (const { countedAt } of requests) perWindow.set(Math.floor(countedAt / WINDOW), (perWindow.get(Math.floor(countedAt / WINDOW)) ?? 0) + 1);
  expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(LIMIT);
}

function refusals(bucket: TokenBucket, requests: readonly Request[]) {
  expectCompliant(requests);
  return simulateTokenBucket(bucket, arrivals(requests)).refused;
}

/** `perWindow(k)` for each of `windows` consecutive windows. */
const windows = (count: number, perWindow: (k: number) => Request[]) => Array.from({ length: count }, (_, k) => perWindow(k)).flat();

describe('the usage plan never refuses a client within 100 requests per fixed minute', () => {
  it("passes the spec's own edge case: 100 at 12:00:59 then 100 at 12:01:00, which the previous plan (burst 100 at 2/s) refused 98 of", () => {
    const schedule = [...burst(59), ...burst(60)];
    expect(refusals(USAGE_PLAN_THROTTLE, schedule)).toBe(0);
    expect(refusals({ burstLimit: 100, rateLimit: 2 }, schedule)).toBe(98);
  });

  it('passes full windows back to back at every other boundary, for a day (the last instant of one window, the first of the next)', () => {
    const schedule = windows(DAY_WINDOWS, (k) => burst(k * WINDOW + (k % 2 === 0 ? END : 0)));
    expect(schedule).toHaveLength(DAY_WINDOWS * LIMIT);
    expect(refusals(USAGE_PLAN_THROTTLE, schedule)).toBe(0);
  });

  it('passes every window full at its first instant, and every window full at its last, for a day', () => {
    expect(
      refusals(
        USAGE_PLAN_THROTTLE,
        windows(DAY_WINDOWS, (k) => burst(k * WINDOW)),
      ),
    ).toBe(0);
    expect(
      refusals(
        USAGE_PLAN_THROTTLE,
        windows(DAY_WINDOWS, (k) => burst(k * WINDOW + END)),
      ),
    ).toBe(0);
  });

  it(`passes three full windows reaching API Gateway within ${WINDOW - WORST_LATENCY} s, when the third took ${WORST_LATENCY} s to be counted, for a day`, () => {
    // Window 3n full at its last instant and 3n+1 at its first, on time; 3n+2 at its first instant, having reached API Gateway as early as can be.
    const schedule = windows(DAY_WINDOWS, (k) => [burst(k * WINDOW + END), burst(k * WINDOW), burst(k * WINDOW, WORST_LATENCY)][k % 3] ?? []);
    const first = arrivals(schedule.slice(0, 3 * LIMIT));
    expect(Math.max(...first) - Math.min(...first)).toBeCloseTo(WINDOW - WORST_LATENCY, 2);
    expect(refusals(USAGE_PLAN_THROTTLE, schedule)).toBe(0);
  });

  it('passes random compliant schedules: any split of each window into bursts, anywhere in it, with any latency up to the worst', () => {
    const part = fc.record({
      count: fc.integer({ min: 0, max: LIMIT / 2 }),
      at: fc.double({ min: 0, max: END, noNaN: true }),
      latency: fc.double({ min: 0, max: WORST_LATENCY, noNaN: true }),
    });
    const schedule = fc
      .array(fc.tuple(part, part), { minLength: 1, maxLength: 30 })
      .map((perWindow) => perWindow.flatMap((parts, k) => parts.flatMap(({ count, at, latency }) => burst(k * WINDOW + at, latency, count))));
    fc.assert(
      fc.property(schedule, (requests) => refusals(USAGE_PLAN_THROTTLE, requests) === 0),
      { numRuns: 300 },
    );
  });

  it('admits, by the token-bucket arrival curve, every compliant schedule over a week for any latency under a minute', () => {
    for (const latency of [0, 1, 10, WORST_LATENCY, 59, 59.999]) {
      expect(admitsEveryCompliantClient(USAGE_PLAN_THROTTLE, RATE_LIMIT, latency, 7 * 24 * 3600), `latency ${latency} s`).toBe(true);
    }
    expect(admitsEveryCompliantClient({ burstLimit: 100, rateLimit: 2 }, RATE_LIMIT, 0, 3600)).toBe(false);
  });
});

describe('the usage plan still refuses floods', () => {
  const FLOOD_SECONDS = 600;

  it('lets through at most its burst plus its rate of a token sending 10 times the limit for 10 minutes', () => {
    const perSecond = (10 * LIMIT) / WINDOW;
    const flood = Array.from({ length: perSecond * FLOOD_SECONDS }, (_, i) => i / perSecond);
    const { accepted, refused } = simulateTokenBucket(USAGE_PLAN_THROTTLE, flood);
    expect(accepted).toBeLessThanOrEqual(USAGE_PLAN_THROTTLE.burstLimit + USAGE_PLAN_THROTTLE.rateLimit * FLOOD_SECONDS);
    expect(refused).toBeGreaterThanOrEqual(flood.length * 0.85);
  });

  it('lets exactly its burst through of 10,000 requests sent at once', () => {
    expect(
      simulateTokenBucket(
        USAGE_PLAN_THROTTLE,
        Array.from({ length: 10_000 }, () => 0),
      ),
    ).toEqual({
      accepted: USAGE_PLAN_THROTTLE.burstLimit,
      refused: 10_000 - USAGE_PLAN_THROTTLE.burstLimit,
      firstRefusalAt: 0,
    });
  });
});
