import { describe, expect, it } from 'vitest';
import { RateLimited } from '#domain/errors';
import { countUnsignedRefusal, pastUnsignedLimit, RefusalTally, UNSIGNED_REFUSALS } from '#domain/unsigned-refusals';
import { MemoryStores } from '#test-support/memory-stores';

/**
 * How one container counts an address's refusals on the public routes no one signs (lambdas/domain/unsigned-refusals.ts):
 * in memory first, in the shared window past `sharedAfter`, and from memory alone once the address had its 429.
 */

const MINUTE = 1_800_000_000 - (1_800_000_000 % 60);

/** The shared window, with its writes counted. */
function sharedWindow() {
  const store = new MemoryStores();
  let writes = 0;
  return {
    countRequest: (bucket: string, window: { start: number; seconds: number }, limit: number) => {
      writes += 1;
      return store.countRequest(bucket, window, limit);
    },
    writes: () => writes,
  };
}

async function refusals(deps: Parameters<typeof countUnsignedRefusal>[0], address: string, times: number, now = MINUTE + 1): Promise<number> {
  for (let refused = 1; refused <= times; refused += 1) {
    try {
      await countUnsignedRefusal(deps, address, now);
    } catch (error) {
      expect(error).toBeInstanceOf(RateLimited);
      return refused;
    }
  }
  return 0;
}

describe('an address refused on the public routes no one signs', () => {
  it('writes the shared window only past sharedAfter refusals in the container', async () => {
    const rateLimits = sharedWindow();
    const deps = { rateLimits, refusals: new RefusalTally() };
    expect(await refusals(deps, '203.0.113.1', UNSIGNED_REFUSALS.sharedAfter)).toBe(0);
    expect(rateLimits.writes()).toBe(0);
    expect(await refusals(deps, '203.0.113.1', 5)).toBe(0);
    expect(rateLimits.writes()).toBe(5);
  });

  it('gets its 429 at the refusal past perAddressPerMinute, then every refusal of the minute with no request', async () => {
    const rateLimits = sharedWindow();
    const deps = { rateLimits, refusals: new RefusalTally() };
    expect(await refusals(deps, '203.0.113.2', UNSIGNED_REFUSALS.perAddressPerMinute + 1)).toBe(UNSIGNED_REFUSALS.perAddressPerMinute + 1);
    expect(pastUnsignedLimit(deps, '203.0.113.2', MINUTE + 59)).toBe(true);
    const writes = rateLimits.writes();
    expect(await refusals(deps, '203.0.113.2', 1, MINUTE + 30)).toBe(1);
    expect(rateLimits.writes()).toBe(writes);
    expect(pastUnsignedLimit(deps, '203.0.113.2', MINUTE + 60)).toBe(false);
    expect(await refusals(deps, '203.0.113.2', 1, MINUTE + 60)).toBe(0);
  });

  it('counts an IPv6 client as its /64', async () => {
    const deps = { rateLimits: sharedWindow(), refusals: new RefusalTally() };
    for (let host = 0; host < UNSIGNED_REFUSALS.perAddressPerMinute; host += 1)
      await countUnsignedRefusal(deps, `2001:db8:1:2::${host.toString(16)}`, MINUTE + 1);
    await expect(countUnsignedRefusal(deps, '2001:db8:1:2:ffff::1', MINUTE + 1)).rejects.toThrow(RateLimited);
    await expect(countUnsignedRefusal(deps, '2001:db8:1:3::1', MINUTE + 1)).resolves.toBeUndefined();
  });

  it('counts an address the full tally cannot hold in the shared window from its first refusal', async () => {
    const rateLimits = sharedWindow();
    const deps = { rateLimits, refusals: new RefusalTally(1) };
    await countUnsignedRefusal(deps, '203.0.113.3', MINUTE + 1);
    expect(rateLimits.writes()).toBe(0);
    expect(await refusals(deps, '203.0.113.4', UNSIGNED_REFUSALS.perAddressPerMinute + 1)).toBe(UNSIGNED_REFUSALS.perAddressPerMinute + 1);
    expect(rateLimits.writes()).toBe(UNSIGNED_REFUSALS.perAddressPerMinute + 1);
  });
});
