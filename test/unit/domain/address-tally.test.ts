import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AddressTally } from '#domain/address-tally';

const MINUTE = 1_700_000_040;

describe('AddressTally: one container counts addresses per minute in memory', () => {
  it('counts each address apart and returns its count after each check', () => {
    const tally = new AddressTally();
    expect(tally.countCheck('203.0.113.7', MINUTE)).toEqual({ checks: 1, invalidKeys: 0 });
    expect(tally.countCheck('203.0.113.7', MINUTE)).toEqual({ checks: 2, invalidKeys: 0 });
    expect(tally.countCheck('203.0.113.8', MINUTE)).toEqual({ checks: 1, invalidKeys: 0 });
    tally.countInvalidKey('203.0.113.7', MINUTE);
    expect(tally.countCheck('203.0.113.7', MINUTE)).toEqual({ checks: 3, invalidKeys: 1 });
  });

  it('starts every address from zero in a new minute and forgets the addresses of the last one', () => {
    const tally = new AddressTally();
    for (let i = 0; i < 5; i++) tally.countCheck(`198.51.100.${i}`, MINUTE);
    expect(tally.countCheck('198.51.100.0', MINUTE + 60)).toEqual({ checks: 1, invalidKeys: 0 });
    expect(tally.size).toBe(1);
  });

  it('tracks no new address once full, and keeps counting the ones it holds', () => {
    const tally = new AddressTally(2);
    tally.countCheck('a', MINUTE);
    tally.countCheck('b', MINUTE);
    expect(tally.countCheck('c', MINUTE)).toBeUndefined();
    expect(tally.countCheck('a', MINUTE)).toEqual({ checks: 2, invalidKeys: 0 });
    expect(tally.size).toBe(2);
  });

  it('counts exactly the checks of each address in the current minute, for any sequence of checks (200 cases)', () => {
    const check = fc.record({ address: fc.constantFrom('a', 'b', 'c', 'd'), minute: fc.integer({ min: 0, max: 2 }) });
    fc.assert(
      fc.property(fc.array(check, { maxLength: 60 }), (checks) => {
        const tally = new AddressTally(3);
        const seen = new Map<string, number>();
        let minute = -1;
        for (const { address, minute: at } of checks) {
          if (at !== minute) {
            minute = at;
            seen.clear();
          }
          const count = tally.countCheck(address, MINUTE + 60 * at);
          if (!seen.has(address) && seen.size >= 3) {
            expect(count).toBeUndefined();
            continue;
          }
          seen.set(address, (seen.get(address) ?? 0) + 1);
          expect(count?.checks).toBe(seen.get(address));
        }
        expect(tally.size).toBe(seen.size);
      }),
      { numRuns: 200 },
    );
  });
});
