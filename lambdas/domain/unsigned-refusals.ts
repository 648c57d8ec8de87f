import { clientAddressBucket } from './address-tally';
import { RateLimited } from './errors';
import type { RateLimitStore } from './ports';
import { RATE_LIMIT, rateWindowAt } from './rate-limit';

/**
 * Public routes no one signs (DESIGN.md, "Limits that protect every tenant"): a hosted stub of a project that does
 * not exist and a Discord interaction whose signature fails are refusals anyone can ask for. From one client
 * address (an IPv4 address or an IPv6 /64), at most `perAddressPerMinute` of them a minute get their own answer
 * (404, 401); past that each one is a 429 with `Retry-After` until the minute ends. A request that passes (a known
 * project's stub, a correctly signed interaction) is never counted, so never limited.
 *
 * Counted as the loader counts addresses: each container counts in memory, and writes the address's shared window
 * only for its refusals past `sharedAfter` in the minute, so a mistyped URL or Discord's check of a new endpoint
 * (one wrong signature) costs no write. Across N warm containers an address gets at most
 * `perAddressPerMinute + N × sharedAfter` refusals a minute before its 429s.
 */
export const UNSIGNED_REFUSALS = { perAddressPerMinute: 120, sharedAfter: 20 } as const;

/** The 429's `error`; its `Retry-After` says when the minute ends. */
export const UNSIGNED_REFUSALS_MESSAGE = `Too many refused requests from this address: at most ${UNSIGNED_REFUSALS.perAddressPerMinute} a minute`;

/**
 * Addresses one container tracks in a minute (about 100 bytes each). A minute with more distinct addresses tracks no
 * new one and counts those in the shared window alone.
 */
const REFUSAL_TALLY_CAPACITY = 100_000;

/** One container's refusals per address in the current minute, and the addresses known to be past the limit. */
export class RefusalTally {
  private windowStart = Number.NEGATIVE_INFINITY;
  private readonly counts = new Map<string, number>();
  private readonly limited = new Set<string>();

  constructor(private readonly capacity: number = REFUSAL_TALLY_CAPACITY) {}

  /** Counts one refusal of `address`; its count in this minute after it, or undefined when the tally is full. */
  count(address: string, windowStart: number): number | undefined {
    this.open(windowStart);
    const known = this.counts.get(address);
    if (known === undefined && this.counts.size >= this.capacity) return undefined;
    const count = (known ?? 0) + 1;
    this.counts.set(address, count);
    return count;
  }

  /** Whether `address` was refused a 429 in this minute: its next refusal needs no request to be one too. */
  isLimited(address: string, windowStart: number): boolean {
    this.open(windowStart);
    return this.limited.has(address);
  }

  markLimited(address: string, windowStart: number): void {
    this.open(windowStart);
    this.limited.add(address);
  }

  private open(windowStart: number): void {
    // A new minute starts every address from zero.
    if (windowStart !== this.windowStart) {
      this.windowStart = windowStart;
      this.counts.clear();
      this.limited.clear();
    }
  }
}

export interface UnsignedRefusalDeps {
  rateLimits: Pick<RateLimitStore, 'countRequest'>;
  /** One per container. */
  refusals: RefusalTally;
}

/**
 * Whether the client at `sourceIp` has had its 429 this minute: a route may then answer a refusal it can tell from
 * memory without any request (the Discord endpoint does, docs/discord.md).
 */
export function pastUnsignedLimit(deps: Pick<UnsignedRefusalDeps, 'refusals'>, sourceIp: string, now: number): boolean {
  return deps.refusals.isLimited(clientAddressBucket(sourceIp), rateWindowAt(now).start);
}

/**
 * Counts one refusal of the client at `sourceIp`. Throws RateLimited (a 429 with `Retry-After`, the rest of the
 * minute) past the limit; returns otherwise, and the route answers its own refusal.
 */
export async function countUnsignedRefusal(deps: UnsignedRefusalDeps, sourceIp: string, now: number): Promise<void> {
  const window = rateWindowAt(now);
  const address = clientAddressBucket(sourceIp);
  const limited = () => {
    deps.refusals.markLimited(address, window.start);
    return new RateLimited(window.resetSeconds, UNSIGNED_REFUSALS_MESSAGE);
  };
  if (deps.refusals.isLimited(address, window.start)) throw limited();
  const local = deps.refusals.count(address, window.start);
  if (local !== undefined && local > UNSIGNED_REFUSALS.perAddressPerMinute) throw limited();
  if (local !== undefined && local <= UNSIGNED_REFUSALS.sharedAfter) return;
  const shared = await deps.rateLimits.countRequest(
    `unsigned-address#${address}`,
    { start: window.start, seconds: RATE_LIMIT.windowSeconds },
    UNSIGNED_REFUSALS.perAddressPerMinute,
  );
  if (shared === undefined) throw limited();
}
