import { isIPv6 } from 'node:net';

/**
 * What one container has seen of each client address in the current minute, in memory: the loader check limits an
 * address here before any DynamoDB request, and writes the address's shared window only once the address is busy
 * (docs/loader.md, "Limits per address"). Plain state, no I/O; one instance per container, injected.
 */

/** One address's checks in this container this minute, and how many of them were well-formed keys that do not exist. */
export interface AddressCount {
  checks: number;
  invalidKeys: number;
}

/**
 * Addresses one container tracks in a minute: about 100 bytes each, so at most ~10 MB. A minute with more distinct
 * addresses (a /64 flood rotates through prefixes) tracks no new one and sends them to the shared window instead.
 */
const ADDRESS_TALLY_CAPACITY = 100_000;

export class AddressTally {
  private windowStart = Number.NEGATIVE_INFINITY;
  private readonly counts = new Map<string, AddressCount>();

  constructor(private readonly capacity: number = ADDRESS_TALLY_CAPACITY) {}

  /**
   * Counts one check from `address` in the minute opened at `windowStart` and returns the address's counts after
   * it, or undefined when the tally is full and the address is not in it (the caller counts it in the shared window).
   */
  countCheck(address: string, windowStart: number): Readonly<AddressCount> | undefined {
    const count = this.entry(address, windowStart);
    if (!count) return undefined;
    count.checks += 1;
    return { ...count };
  }

  /** Counts a check of `address` whose well-formed key turned out not to exist (it cost a DynamoDB write). */
  countInvalidKey(address: string, windowStart: number): void {
    const count = this.entry(address, windowStart);
    if (count) count.invalidKeys += 1;
  }

  /** Addresses tracked in the current minute. */
  get size(): number {
    return this.counts.size;
  }

  private entry(address: string, windowStart: number): AddressCount | undefined {
    // A new minute starts every address from zero: the counts of the last one are worth nothing.
    if (windowStart !== this.windowStart) {
      this.windowStart = windowStart;
      this.counts.clear();
    }
    const known = this.counts.get(address);
    if (known) return known;
    if (this.counts.size >= this.capacity) return undefined;
    const fresh = { checks: 0, invalidKeys: 0 };
    this.counts.set(address, fresh);
    return fresh;
  }
}

/** An IPv6 client is its /64: one subscriber holds a whole /64 and could otherwise rotate through it. */
export function clientAddressBucket(sourceIp: string): string {
  if (!isIPv6(sourceIp)) return sourceIp;
  const mappedIPv4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(sourceIp)?.[1];
  if (mappedIPv4) return mappedIPv4;
  // A dotted IPv4 tail stands for two groups.
  const groupsOf = (part: string) => (part ? part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])) : []);
  const [head = '', tail] = sourceIp.toLowerCase().split('::');
  const groups =
    tail === undefined ? groupsOf(head) : [...groupsOf(head), ...Array<string>(8 - groupsOf(head).length - groupsOf(tail).length).fill('0'), ...groupsOf(tail)];
  return `${groups
    .slice(0, 4)
    .map((group) => group.padStart(4, '0'))
    .join(':')}::/64`;
}
