import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { consumeRateLimit, RATE_LIMIT, RATE_LIMIT_MESSAGE, rateWindowAt } from '#domain/rate-limit';
import { MemoryStores } from '#test-support/memory-stores';

describe('rate limit windows (spec §8: 100 requests per minute)', () => {
  it('is 100 requests in 60-second windows, and its refusal message says so', () => {
    expect(RATE_LIMIT).toEqual({ requests: 100, windowSeconds: 60 });
    expect(RATE_LIMIT_MESSAGE).toBe('Rate limit exceeded: 100 requests per minute');
  });

  it('aligns windows to the minute', () => {
    expect(rateWindowAt(1_700_000_040)).toEqual({ start: 1_700_000_040, resetSeconds: 60 });
    expect(rateWindowAt(1_700_000_041)).toEqual({ start: 1_700_000_040, resetSeconds: 59 });
    expect(rateWindowAt(1_700_000_099)).toEqual({ start: 1_700_000_040, resetSeconds: 1 });
    expect(rateWindowAt(1_700_000_100)).toEqual({ start: 1_700_000_100, resetSeconds: 60 });
  });

  it('always opens the window at a whole minute at or before now, and resets within 1..60 seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000 }), (now) => {
        const { start, resetSeconds } = rateWindowAt(now);
        expect(start % 60).toBe(0);
        expect(start).toBeLessThanOrEqual(now);
        expect(now - start).toBeLessThan(60);
        expect(resetSeconds).toBeGreaterThanOrEqual(1);
        expect(resetSeconds).toBeLessThanOrEqual(60);
        expect(start + 60 - resetSeconds).toBe(now);
      }),
    );
  });
});

describe('consumeRateLimit', () => {
  const now = 1_700_000_085; // 45 s into the minute that opened at 1_700_000_040

  it('allows 100 requests in a window and refuses the 101st, with the time to the next window', async () => {
    const store = new MemoryStores();
    const decisions = [];
    for (let i = 0; i < 101; i++) decisions.push(await consumeRateLimit(store, 'hash-a', now));
    expect(decisions.slice(0, 100).every((decision) => decision.allowed)).toBe(true);
    expect(decisions[0]).toEqual({ allowed: true, remaining: 99, resetSeconds: 15 });
    expect(decisions[99]).toEqual({ allowed: true, remaining: 0, resetSeconds: 15 });
    expect(decisions[100]).toEqual({ allowed: false, remaining: 0, resetSeconds: 15 });
  });

  it('counts each token on its own', async () => {
    const store = new MemoryStores();
    for (let i = 0; i < 100; i++) await consumeRateLimit(store, 'hash-a', now);
    expect((await consumeRateLimit(store, 'hash-a', now)).allowed).toBe(false);
    expect(await consumeRateLimit(store, 'hash-b', now)).toEqual({ allowed: true, remaining: 99, resetSeconds: 15 });
  });

  it('starts afresh when the next minute opens', async () => {
    const store = new MemoryStores();
    for (let i = 0; i < 100; i++) await consumeRateLimit(store, 'hash-a', now);
    expect((await consumeRateLimit(store, 'hash-a', now + 14)).allowed).toBe(false);
    expect(await consumeRateLimit(store, 'hash-a', now + 15)).toEqual({ allowed: true, remaining: 99, resetSeconds: 60 });
  });

  it('counts in the one-minute window aligned to the minute', async () => {
    const store = new MemoryStores();
    await consumeRateLimit(store, 'hash-a', now);
    const windowStart = now - (now % 60);
    expect(store.rateWindows()).toEqual([{ bucket: 'hash-a', start: windowStart, seconds: 60, requests: 1 }]);
  });
});
