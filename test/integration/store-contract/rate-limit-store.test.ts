import { expect, it } from 'vitest';
import { FIXED_NOW } from '#test-support/fixtures';
import { forEachImplementation, type StoreWorld } from './subjects';

/** RateLimitStore (lambdas/domain/ports.ts): MemoryStores and DynamoRateLimitStore, one contract. */

const WINDOW = { start: FIXED_NOW - (FIXED_NOW % 60), seconds: 60 };
const newBucket = () => `contract-${Math.random().toString(16).slice(2)}`;

forEachImplementation('stores', (world: () => StoreWorld) => {
  it('counts requests in a window up to the limit, then refuses without counting', async () => {
    const bucket = newBucket();
    const counts: (number | undefined)[] = [];
    for (let i = 0; i < 4; i++) counts.push(await world().rateLimits.countRequest(bucket, WINDOW, 3));
    expect(counts).toEqual([1, 2, 3, undefined]);
    expect(await world().rateLimits.countRequest(bucket, WINDOW, 4)).toBe(4);
  });

  it('counts each window and each bucket apart', async () => {
    const bucket = newBucket();
    await world().rateLimits.countRequest(bucket, WINDOW, 1);
    expect(await world().rateLimits.countRequest(bucket, { ...WINDOW, start: WINDOW.start + 60 }, 1)).toBe(1);
    expect(await world().rateLimits.countRequest(newBucket(), WINDOW, 1)).toBe(1);
  });

  it('tells whether a window holds its limit without counting', async () => {
    const bucket = newBucket();
    expect(await world().rateLimits.isFull(bucket, WINDOW, 2)).toBe(false);
    await world().rateLimits.countRequest(bucket, WINDOW, 2);
    expect(await world().rateLimits.isFull(bucket, WINDOW, 2)).toBe(false);
    await world().rateLimits.countRequest(bucket, WINDOW, 2);
    expect(await world().rateLimits.isFull(bucket, WINDOW, 2)).toBe(true);
    expect(await world().rateLimits.countRequest(bucket, WINDOW, 3)).toBe(3);
    expect(await world().rateLimits.isFull(bucket, { ...WINDOW, start: WINDOW.start + 60 }, 2)).toBe(false);
  });

  it("counts a window's first request even at a limit of 0", async () => {
    const bucket = newBucket();
    expect(await world().rateLimits.countRequest(bucket, WINDOW, 0)).toBe(1);
    expect(await world().rateLimits.countRequest(bucket, WINDOW, 0)).toBeUndefined();
  });
});
