import type { LoaderCheckRequest } from '#schemas/loader';
import type { Refusal } from './refusal';

/** The request fields a refusal's telemetry is made of (key-check.ts's CheckReport). */
type Report = Pick<LoaderCheckRequest, 'project_id' | 'executor' | 'fingerprint' | 'script_hash' | 'version_id'>;

/**
 * What one container remembers of keys it keeps refusing (issue 33): a revoked key that leaked is run by everyone who
 * has it, and each of its checks cost a failed conditional write, a queue message and ingest work. Past
 * `floor` refusals of one key in a container's minute, the check answers the remembered code with no write, and the
 * refusals are reported together: one validation record standing for `reportEvery` of them (its `count`), and what
 * is left when the minute ends with the first check of the next. Plain state, no I/O; one per container, injected.
 *
 * Only revoked keys are remembered: a revoke is never lifted, so the answer from memory is the table's. Every other
 * refusal (banned, expired, HWID locked, over limit) can be lifted at any moment and is judged by the table.
 */
export const REFUSAL_MEMORY = {
  /** Refusals of one key in a container's minute that are each written and reported, as every check is. */
  floor: 60,
  /** Refusals answered from memory that one reported record stands for. */
  reportEvery: 60,
  /** Keys tracked in a minute (about 200 bytes each): a flood of more is judged by the table, as without memory. */
  capacity: 50_000,
} as const;

/** The refusals a record must report: `count` checks answered `refusal`, the last of them as `report`. */
export interface HeldRefusals {
  keyId: string;
  refusal: Refusal;
  count: number;
  report: Report;
}

interface Entry {
  refusal: Refusal;
  refusals: number;
  unreported: number;
  report: Report;
}

export class RefusalMemory {
  private windowStart = Number.NEGATIVE_INFINITY;
  private entries = new Map<string, Entry>();
  private left: HeldRefusals[] = [];

  constructor(private readonly limits: { floor: number; reportEvery: number; capacity: number } = REFUSAL_MEMORY) {}

  /**
   * The check of `keyId` answered from memory: its code and, every `reportEvery` checks, the refusals to report now;
   * undefined when the table must judge it.
   */
  held(keyId: string, windowStart: number): { refusal: Refusal; toReport?: HeldRefusals } | undefined {
    this.roll(windowStart);
    const entry = this.entries.get(keyId);
    if (!entry || entry.refusals < this.limits.floor) return undefined;
    entry.refusals += 1;
    entry.unreported += 1;
    if (entry.unreported < this.limits.reportEvery) return { refusal: entry.refusal };
    const toReport = { keyId, refusal: entry.refusal, count: entry.unreported, report: entry.report };
    entry.unreported = 0;
    return { refusal: entry.refusal, toReport };
  }

  /** Counts a refusal the table decided (written and reported as usual). KEY_INVALID is the address's to count. */
  refused(keyId: string, refusal: Refusal, windowStart: number, report: Report): void {
    // Only a revoke is for good: a ban, an expiry, a cap or a machine lock can be lifted (unban, extend, edit, reset)
    // and the next check must see it at once. KEY_INVALID is the address's to count.
    if (refusal.code !== 'KEY_REVOKED') return;
    this.roll(windowStart);
    const known = this.entries.get(keyId);
    if (known) {
      // The latest verdict stands: a key revoked since its last refusal is remembered as revoked.
      Object.assign(known, { refusal, report, refusals: known.refusals + 1 });
      return;
    }
    if (this.entries.size < this.limits.capacity) this.entries.set(keyId, { refusal, refusals: 1, unreported: 0, report });
  }

  /** Refusals answered from memory in a minute that has ended and not reported yet; taking them empties the list. */
  takeLeftOver(): HeldRefusals[] {
    return this.left.splice(0);
  }

  private roll(windowStart: number): void {
    if (windowStart === this.windowStart) return;
    for (const [keyId, entry] of this.entries) {
      if (entry.unreported > 0) this.left.push({ keyId, refusal: entry.refusal, count: entry.unreported, report: entry.report });
    }
    this.windowStart = windowStart;
    this.entries = new Map();
  }
}
