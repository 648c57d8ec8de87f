import { WATERMARK_PATTERN } from '#schemas/formats';

/**
 * Finds `WM_<watermark>` markers in a leaked script dump, a chunk at a time: the scanner keeps only the
 * marker it is in the middle of, so a dump of any size is read in constant memory and a marker split across
 * two chunks is still found whole.
 *
 * A candidate is every `WM_` followed by the longest run of ASCII letters and digits. It is a watermark when
 * that run is exactly 16 lowercase hex characters; anything else (uppercase, too short, too long, not hex) is
 * reported as malformed and never turned into a watermark by guessing.
 */

export interface MalformedMarker {
  /** As found, `WM_` included; cut to the first MAX_REPORTED_CHARS characters of a long run. */
  marker: string;
  occurrences: number;
  problem: string;
}

export interface MarkerScan {
  bytes: number;
  /** Watermark (without `WM_`) → how many times it occurs, in order of first occurrence. */
  watermarks: Map<string, number>;
  malformed: MalformedMarker[];
  /** Distinct malformed markers past MAX_DISTINCT_MALFORMED, counted but not listed. */
  malformedNotListed: number;
}

const W = 0x57;
const M = 0x4d;
const UNDERSCORE = 0x5f;
const WATERMARK_LENGTH = 16;
/** Enough of a malformed marker to recognise it; a megabyte-long run is not worth keeping. */
export const MAX_REPORTED_CHARS = 40;
/** A dump full of distinct junk markers must not grow the report without bound. */
export const MAX_DISTINCT_MALFORMED = 1000;

const isHexLetterOrDigit = (byte: number) => (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
const isAlphanumeric = (byte: number) => (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);

export class WatermarkScanner {
  private bytes = 0;
  /** How much of `WM_` the last bytes matched (0-2) while not inside a candidate. */
  private prefixMatched = 0;
  private inCandidate = false;
  /** The candidate's first MAX_REPORTED_CHARS characters, and its full length. */
  private candidate: number[] = [];
  private candidateLength = 0;
  /** Whether the whole candidate, not only its kept start, is hex (either case). */
  private candidateAllHex = true;
  /** The candidate's last two bytes: a run ending in `WM` followed by `_` starts a new candidate. */
  private lastTwo = 0;
  private readonly watermarks = new Map<string, number>();
  private readonly malformed = new Map<string, MalformedMarker>();
  private malformedNotListed = 0;

  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] ?? 0;
      if (this.inCandidate) {
        if (isAlphanumeric(byte)) {
          if (this.candidateLength < MAX_REPORTED_CHARS) this.candidate.push(byte);
          this.candidateLength++;
          if (!isHexLetterOrDigit(byte)) this.candidateAllHex = false;
          this.lastTwo = ((this.lastTwo << 8) | byte) & 0xffff;
          continue;
        }
        const endsWithPrefix = this.lastTwo === ((W << 8) | M);
        this.endCandidate();
        if (byte === UNDERSCORE && endsWithPrefix) this.startCandidate();
        continue;
      }
      if (byte === W) this.prefixMatched = 1;
      else if (this.prefixMatched === 1 && byte === M) this.prefixMatched = 2;
      else if (this.prefixMatched === 2 && byte === UNDERSCORE) this.startCandidate();
      else this.prefixMatched = 0;
    }
  }

  /** The result; a candidate still open at the end of the dump ends there. */
  finish(): MarkerScan {
    if (this.inCandidate) this.endCandidate();
    return {
      bytes: this.bytes,
      watermarks: new Map(this.watermarks),
      malformed: [...this.malformed.values()],
      malformedNotListed: this.malformedNotListed,
    };
  }

  private startCandidate(): void {
    this.inCandidate = true;
    this.prefixMatched = 0;
    this.candidate = [];
    this.candidateLength = 0;
    this.candidateAllHex = true;
    this.lastTwo = 0;
  }

  private endCandidate(): void {
    this.inCandidate = false;
    this.prefixMatched = 0;
    const text = String.fromCharCode(...this.candidate);
    if (this.candidateLength === WATERMARK_LENGTH && WATERMARK_PATTERN.test(text)) {
      this.watermarks.set(text, (this.watermarks.get(text) ?? 0) + 1);
      return;
    }
    const marker = `WM_${text}${this.candidateLength > MAX_REPORTED_CHARS ? '…' : ''}`;
    const known = this.malformed.get(marker);
    if (known) known.occurrences++;
    else if (this.malformed.size < MAX_DISTINCT_MALFORMED)
      this.malformed.set(marker, { marker, occurrences: 1, problem: markerProblem(this.candidateLength, this.candidateAllHex) });
    else this.malformedNotListed++;
  }
}

/** What keeps a candidate from being a watermark, stated without suggesting a correction. */
export function markerProblem(length: number, allHex: boolean): string {
  if (length === 0) return 'nothing after WM_';
  if (!allHex) return `${length} character${length === 1 ? '' : 's'}, not all hex`;
  if (length !== WATERMARK_LENGTH) return `${length} hex character${length === 1 ? '' : 's'}, a watermark has ${WATERMARK_LENGTH}`;
  return 'uppercase hex; a watermark is lowercase';
}
