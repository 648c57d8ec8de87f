import { RateLimited } from './errors';

/**
 * Full copies of one version a key may fetch in a container's minute (issue 33): a key that ignores its ETag pulls
 * the whole body at every fetch, and a shared leaked key multiplies that (120 fetches of a 5 MiB script a minute is
 * about 840 GiB a day). A loader keeps what it was served and sends `If-None-Match`: its 304s are not limited here
 * (they stay under the key's 120 checks a minute), nor is the first copy of a version the key has not been served
 * yet (after an upload or a rollback). Counted per container, like the address tally: across containers a key gets
 * at most this many times the containers serving it.
 */
export const FULL_COPIES_PER_KEY_VERSION_PER_MINUTE = 10;

/** How many full copies of each version each key was served in this container's minute, and their ETag. */
export class FullCopyTally {
  private windowStart = Number.NEGATIVE_INFINITY;
  private counts = new Map<string, { copies: number; etag: string }>();

  constructor(
    private readonly limit = FULL_COPIES_PER_KEY_VERSION_PER_MINUTE,
    /** Keys tracked in a minute (about 150 bytes each); past it a key's copies go uncounted, as without the limit. */
    private readonly capacity = 100_000,
  ) {}

  /**
   * Throws RateLimited when this fetch would be another full copy of `versionId` past the limit: the key was served
   * it `limit` times this minute and does not hold that copy (`holds(etag)`: its If-None-Match names the ETag).
   * Called before the fetch counts a use.
   */
  admit(keyId: string, versionId: string, holds: (etag: string) => boolean, windowStart: number, resetSeconds: number): void {
    if (this.allows(keyId, versionId, holds, windowStart)) return;
    throw new RateLimited(
      resetSeconds,
      `Too many full copies of this script for this key: at most ${this.limit} a minute; keep the copy you were sent and send its ETag in If-None-Match`,
    );
  }

  /** Whether admit would let this fetch of `versionId` through. */
  allows(keyId: string, versionId: string, holds: (etag: string) => boolean, windowStart: number): boolean {
    this.roll(windowStart);
    const served = this.counts.get(`${keyId}#${versionId}`);
    return !served || served.copies < this.limit || holds(served.etag);
  }

  /** Counts a full copy (a 200 with the body) of `versionId` served to `keyId`. */
  served(keyId: string, versionId: string, etag: string, windowStart: number): void {
    this.roll(windowStart);
    const key = `${keyId}#${versionId}`;
    const known = this.counts.get(key);
    if (known) known.copies += 1;
    else if (this.counts.size < this.capacity) this.counts.set(key, { copies: 1, etag });
  }

  private roll(windowStart: number): void {
    if (windowStart === this.windowStart) return;
    this.windowStart = windowStart;
    this.counts = new Map();
  }
}
