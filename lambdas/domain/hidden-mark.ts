import { createHmac } from 'node:crypto';
import { LuauLexError, lexLuau, TOKEN, type TokenKind } from './luau-lexer';

/**
 * The hidden mark (DESIGN.md, "Leak tracing that survives obfuscation: the hidden mark"): the key's watermark,
 * written in the whitespace between Luau tokens, where a leaker who deletes the `--WM_` line does not look.
 *
 * - **Places.** A place is a gap between two tokens on one line, holding only spaces and tabs, where no space is
 *   needed (`a=b` and `a = b` lex the same; `local x` needs its space, `- -` and `1 ..` must keep theirs). A place
 *   carries one bit: one space (1) or none (0). Collapsing space runs, trimming line ends and changing line endings
 *   keep that bit; tokens, string contents and line breaks are never touched.
 * - **Self-synchronising.** Which bit a place carries, and a mask flipping it, come from a hash of the sixteen
 *   tokens around it, so any piece of a dump is read without knowing where it was cut.
 * - **The word.** 104 bits: the 64 of the watermark and 40 check bits, an HMAC of the watermark keyed by the version
 *   id. A reading names a watermark only when, for a version of the project, the check holds, every bit has at least
 *   MIN_VOTES places and AGREEMENT_NEEDED of the places agree with the word: random text never passes that, and a
 *   watermark of another project's script fails the check.
 * - **Spread.** Every place is used up to PLACES_USED; a longer script uses one place in 2^rate, picked by the hash,
 *   and the reader tries each rate. A reading is decoded over windows of places at every scale, so a dump of two
 *   copies yields each copy's watermark and any contiguous half holds a window of a sixth of the places.
 */

const WATERMARK_BITS = 64;
const CHECK_BITS = 40;
const WORD_BITS = WATERMARK_BITS + CHECK_BITS;
/** Places a version uses at most: enough for any half of the script to name its key, few enough to stamp fast. */
export const PLACES_USED = 16_384;
/** A script with more places uses those picked at one rate of 2^-rate (rate ≤ MAX_RATE, past any 5 MiB script). */
const MAX_RATE = 12;
/** Places a window needs per bit on average to be read at all. */
const MIN_VOTES = 2;
/**
 * Bits a window may leave without a majority (no place there, or a tie): each is tried both ways against the check,
 * which costs 2^MAX_ERASURES tries of a 40-bit check, still far past any chance of a random word passing.
 */
const MAX_ERASURES = 4;
/** The share of a window's places that must agree with the word it reads. */
export const AGREEMENT_NEEDED = 0.9;
/** The smallest window read: eight places a bit on average. */
const BASE_WINDOW = WORD_BITS * 8;
/** The reader's tries of another lexing start in a long line (restarts): past its first few quotes of each kind. */
const RESTARTS_PER_QUOTE = 3;
/** A line this long may be a whole obfuscated script; a cut inside one of its strings is worth reading again. */
const LONG_LINE = 4096;

const SEED = 0x5d1a7c3b;
const PLACEHOLDER = 'WM_XXXXXXXXXXXXXXXX';

/** What an upload reports: the places the mark can use, and whether they are too few to carry it reliably. */
export interface HiddenMarkSummary {
  positions: number;
  weak: boolean;
}

/**
 * A version's script prepared for stamping, once per version: its UTF-8 bytes without the gaps of the places it uses
 * and without its placeholders, and where those were, so a fetch copies the bytes around one space (or none) or one
 * visible mark each into the body. Bytes rather than strings: the body's SHA-256 is taken of them without encoding
 * the text again, which keeps stamping both marks as cheap as stamping the visible ones (docs/performance.md).
 */
export interface StampPlan {
  base: Uint8Array;
  /** Where cut i is in `base`; the cut's bytes are gone, the slot says what goes there. */
  cuts: Int32Array;
  /** At each cut: -1 a placeholder, otherwise the bit index (low 7 bits) and the mask (bit 7). */
  slots: Int16Array;
  /** Whether the script has a placeholder (otherwise the visible mark is a `--WM_` line in front). */
  hasPlaceholder: boolean;
  summary: HiddenMarkSummary;
}

/** FNV-1a of a token's text, the 16 characters after each `WM_` left out, so a stamped visible mark reads as its placeholder. */
function tokenHash(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    h = Math.imul(h ^ c, 0x01000193);
    if (c === 0x5f && i >= start + 2 && text.charCodeAt(i - 1) === 0x4d && text.charCodeAt(i - 2) === 0x57) i += 16;
  }
  return h >>> 0;
}

const fmix = (value: number): number => {
  let h = value;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
};

const SAFE_SYMBOLS = new Set([0x28, 0x29, 0x7b, 0x7d, 0x5d, 0x2c, 0x3b]); // ( ) { } ] , ;
const isWordKind = (kind: TokenKind) => kind === TOKEN.NAME || kind === TOKEN.NUMBER;

/** Whether the gap between tokens A and B may hold no space or one, the tokens lexing the same either way. */
function optionalGap(text: string, ka: TokenKind, sa: number, ea: number, kb: TokenKind, sb: number, eb: number): boolean {
  if (ka === TOKEN.ERROR || kb === TOKEN.ERROR || ka === TOKEN.INTERP || kb === TOKEN.INTERP) return false;
  if (isWordKind(ka) && isWordKind(kb)) return false;
  const aLast = text.charCodeAt(ea - 1);
  const bFirst = text.charCodeAt(sb);
  // A number swallows a following `.`, and an exponent a sign: `1 ..x`, `1e -x` keep their space.
  if (ka === TOKEN.NUMBER && kb === TOKEN.SYMBOL) return bFirst !== 0x2e && bFirst !== 0x2b && bFirst !== 0x2d;
  // `[` then `[` or `=` could open a long bracket.
  if (ka === TOKEN.SYMBOL && ea - sa === 1 && aLast === 0x5b) return bFirst !== 0x5b && bFirst !== 0x3d;
  // `.` then a digit is a number.
  if (ka === TOKEN.SYMBOL && kb === TOKEN.NUMBER) return aLast !== 0x2e;
  if (ka === TOKEN.SYMBOL && kb === TOKEN.SYMBOL) {
    return (ea - sa === 1 && SAFE_SYMBOLS.has(aLast)) || (eb - sb === 1 && (SAFE_SYMBOLS.has(bFirst) || bFirst === 0x5b));
  }
  return true;
}

const onlySpacesAndTabs = (text: string, start: number, end: number): boolean => {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09) return false;
  }
  return true;
};

/** Called for each place: its gap [start, end) and the two hashes of its context. */
type PlaceSink = (gapStart: number, gapEnd: number, h1: number, h2: number) => void;

/**
 * Tokens hashed into a place's context: the eight before the gap and the eight after. Obfuscated code repeats short
 * runs of tokens (`;A=(A+`) thousands of times; sixteen tokens almost always include a constant that tells them apart,
 * and the attacks the mark survives change no token.
 */
const CONTEXT_AFTER = 8;
const CONTEXT_TOKENS = 16;

/** Finds the places of `text`: between tokens k and k+1, with the CONTEXT_TOKENS tokens around them. */
function scanPlaces(text: string, sink: PlaceSink, options: { lenient: boolean; from?: number }): void {
  const RING = 32;
  const MASK = RING - 1;
  const kinds = new Uint8Array(RING);
  const starts = new Int32Array(RING);
  const ends = new Int32Array(RING);
  const hashes = new Uint32Array(RING);
  // The context's hash rolls: Σ hash(token) × P^(age), the oldest token's term taken out as the newest comes in.
  let rolling = 0;
  let count = 0;
  lexLuau(
    text,
    (kind, start, end) => {
      const j = count & MASK;
      const hash = tokenHash(text, start, end);
      const leaving = count >= CONTEXT_TOKENS ? (hashes[(count - CONTEXT_TOKENS) & MASK] as number) : 0;
      rolling = (Math.imul(rolling, ROLL) + hash - Math.imul(leaving, ROLL_OUT)) | 0;
      kinds[j] = kind;
      starts[j] = start;
      ends[j] = end;
      hashes[j] = hash;
      count++;
      if (count < CONTEXT_TOKENS) return;
      // The place between tokens k and k+1, k = newest - CONTEXT_AFTER, now has its whole context.
      const k = (count - CONTEXT_AFTER - 1) & MASK;
      const k1 = (count - CONTEXT_AFTER) & MASK;
      const ea = ends[k] as number;
      const sb = starts[k1] as number;
      if (!onlySpacesAndTabs(text, ea, sb)) return;
      if (!optionalGap(text, kinds[k] as TokenKind, starts[k] as number, ea, kinds[k1] as TokenKind, sb, ends[k1] as number)) return;
      const h1 = fmix((rolling ^ SEED) >>> 0);
      sink(ea, sb, h1, fmix(h1 ^ 0x27d4eb2f));
    },
    options,
  );
}

/** The rolling hash's multiplier, and its CONTEXT_TOKENS-th power (mod 2^32) that takes the oldest token out. */
const ROLL = 0x01000193;
const ROLL_OUT = (() => {
  let power = 1;
  for (let i = 0; i < CONTEXT_TOKENS; i++) power = Math.imul(power, ROLL);
  return power;
})();

const bitIndexOf = (h1: number) => h1 % WORD_BITS;
const maskOf = (h2: number) => h2 >>> 31;
const selectedAt = (h2: number, rate: number) => (h2 & ((1 << rate) - 1)) === 0;

/** The 104-bit word a key's copy of a version carries: the watermark's 64 bits, then 40 check bits. */
function markWord(versionId: string, watermark: string): Uint8Array {
  const word = new Uint8Array(WORD_BITS);
  const check = createHmac('sha256', versionId).update(`hidden-mark:${watermark}`).digest();
  for (let i = 0; i < WATERMARK_BITS; i++) word[i] = (Number.parseInt(watermark[i >> 2] ?? '0', 16) >> (3 - (i & 3))) & 1;
  for (let i = 0; i < CHECK_BITS; i++) word[WATERMARK_BITS + i] = ((check[i >> 3] ?? 0) >> (7 - (i & 7))) & 1;
  return word;
}

/**
 * Prepares a version's script for stamping: lexes it (strictly), picks its places and cuts it. A script that does
 * not lex gets a plan with no places: it is served with the visible marks only.
 */
export function planStamp(script: string): StampPlan {
  const gaps: number[] = [];
  let positions = 0;
  try {
    scanPlaces(
      script,
      (start, end, h1, h2) => {
        positions++;
        gaps.push(start, end, h1, h2);
      },
      { lenient: false },
    );
  } catch (error) {
    if (!(error instanceof LuauLexError)) throw error;
    gaps.length = 0;
    positions = 0;
  }
  // The lowest rate whose picked places are at most PLACES_USED (counted: repeated contexts are picked together).
  let rate = 0;
  for (; rate < MAX_RATE; rate++) {
    const select = (1 << rate) - 1;
    let picked = 0;
    for (let i = 3; i < gaps.length; i += 4) if (((gaps[i] as number) & select) === 0) picked++;
    if (picked <= PLACES_USED) break;
  }
  const cuts: Array<[number, number, number]> = [];
  const used: number[] = [];
  const usedAt: number[] = [];
  for (let i = 0; i < gaps.length; i += 4) {
    const h2 = gaps[i + 3] ?? 0;
    if (!selectedAt(h2, rate)) continue;
    const bit = bitIndexOf(gaps[i + 2] ?? 0);
    cuts.push([gaps[i] ?? 0, gaps[i + 1] ?? 0, bit | (maskOf(h2) << 7)]);
    used.push(bit);
    usedAt.push(gaps[i] ?? 0);
  }
  let hasPlaceholder = false;
  for (let at = script.indexOf(PLACEHOLDER); at >= 0; at = script.indexOf(PLACEHOLDER, at + PLACEHOLDER.length)) {
    hasPlaceholder = true;
    cuts.push([at, at + PLACEHOLDER.length, -1]);
  }
  // Gaps hold only whitespace and placeholders sit inside tokens or comments: the cuts never overlap.
  cuts.sort((a, b) => a[0] - b[0]);
  const encoder = new TextEncoder();
  const kept: Uint8Array[] = [];
  const at = new Int32Array(cuts.length);
  const slots = new Int16Array(cuts.length);
  let from = 0;
  let length = 0;
  cuts.forEach(([start, end, slot], i) => {
    const piece = encoder.encode(script.slice(from, start));
    kept.push(piece);
    length += piece.length;
    at[i] = length;
    slots[i] = slot;
    from = end;
  });
  kept.push(encoder.encode(script.slice(from)));
  const base = Buffer.concat(kept);
  return { base, cuts: at, slots, hasPlaceholder, summary: { positions, weak: isWeak(used, usedAt, script.length) } };
}

/**
 * Weak: some contiguous half of the script might not name its key. A half holding m used places holds a window
 * the reader decodes of more than m/3 of them (windows double in size and overlap by half), so the mark is strong
 * when, with m the fewest places any half of the script holds, every run of m/3 consecutive places leaves at most
 * MAX_ERASURES bits without a place and has MIN_VOTES places a bit on average.
 */
function isWeak(bits: readonly number[], offsets: readonly number[], length: number): boolean {
  const half = Math.floor(length / 2);
  let fewest = offsets.filter((offset) => offset < half).length;
  let last = 0;
  for (let first = 0; first < offsets.length; first++) {
    // Places inside the half starting at the first's offset; halves starting between places hold no fewer.
    while (last < offsets.length && (offsets[last] as number) < (offsets[first] as number) + half) last++;
    if ((offsets[first] as number) + half <= length) fewest = Math.min(fewest, last - first);
  }
  const window = Math.floor(fewest / 3);
  if (window < WORD_BITS * MIN_VOTES) return true;
  const counts = new Int32Array(WORD_BITS);
  let empty = WORD_BITS;
  for (let i = 0; i < bits.length; i++) {
    const bit = bits[i] as number;
    if (counts[bit] === 0) empty--;
    counts[bit] = (counts[bit] as number) + 1;
    if (i >= window) {
      const leaving = bits[i - window] as number;
      counts[leaving] = (counts[leaving] as number) - 1;
      if (counts[leaving] === 0) empty++;
    }
    if (i >= window - 1 && empty > MAX_ERASURES) return true;
  }
  return false;
}

/**
 * The script as one key receives it, as UTF-8 bytes: the visible marks of "Script delivery" (every placeholder
 * becomes `WM_<watermark>`, or a `--WM_<watermark>` line in front) and the hidden mark in its places.
 */
export function stampBytes(plan: StampPlan, versionId: string, watermark: string): Buffer {
  const word = markWord(versionId, watermark);
  const visible = Buffer.from(`WM_${watermark}`);
  const prefix = plan.hasPlaceholder ? Buffer.alloc(0) : Buffer.from(`--WM_${watermark}\n`);
  const { base, cuts, slots } = plan;
  const out = Buffer.allocUnsafe(prefix.length + base.length + slots.length * visible.length);
  let at = prefix.copy(out, 0);
  let from = 0;
  for (let i = 0; i < slots.length; i++) {
    const cut = cuts[i] as number;
    out.set(base.subarray(from, cut), at);
    at += cut - from;
    from = cut;
    const slot = slots[i] as number;
    if (slot < 0) at += visible.copy(out, at);
    else if (((word[slot & 0x7f] as number) ^ (slot >> 7)) === 1) out[at++] = 0x20;
  }
  out.set(base.subarray(from), at);
  at += base.length - from;
  return out.subarray(0, at);
}

/** The stamped script as text (stampBytes). */
export const stampWithPlan = (plan: StampPlan, versionId: string, watermark: string): string => stampBytes(plan, versionId, watermark).toString('utf8');

/** A watermark read from the hidden mark of a dump. */
export interface HiddenReading {
  watermark: string;
  versionId: string;
  /** The share of the best window's places that agree with the word read. */
  agreement: number;
}

/**
 * The words of a window's tallies, when it can be read: at most MAX_ERASURES bits without a majority (no place, or a
 * tie), each filled both ways (the check then decides), and AGREEMENT_NEEDED of its places agreeing with the word.
 */
function readTally(ones: Int32Array, totals: Int32Array): { words: string[]; agreement: number } | undefined {
  let agree = 0;
  let all = 0;
  let word = '';
  const unknown: number[] = [];
  for (let bit = 0; bit < WORD_BITS; bit++) {
    const total = totals[bit] as number;
    const one = ones[bit] as number;
    agree += one * 2 > total ? one : total - one;
    all += total;
    if (total === 0 || one * 2 === total) {
      if (unknown.length === MAX_ERASURES) return undefined;
      unknown.push(bit);
      word += '?';
    } else word += one * 2 > total ? '1' : '0';
  }
  if (all < WORD_BITS * MIN_VOTES || agree / all < AGREEMENT_NEEDED) return undefined;
  const words: string[] = [];
  for (let fill = 0; fill < 1 << unknown.length; fill++) {
    let filled = word;
    unknown.forEach((bit, i) => {
      filled = filled.slice(0, bit) + ((fill >> i) & 1) + filled.slice(bit + 1);
    });
    words.push(filled);
  }
  return { words, agreement: agree / all };
}

/**
 * Every window's word that reads, as word → best agreement. Windows double in size from BASE_WINDOW and overlap by
 * half: a window is two neighbouring blocks of half its size, and a level's blocks are the pairs of the level below,
 * so each level costs its blocks' tallies, not its readings.
 */
function readWords(codes: Uint8Array, length: number, into: Map<string, number>): void {
  if (length < WORD_BITS * MIN_VOTES) return;
  const blockSize = BASE_WINDOW / 2;
  let blocks = Math.ceil(length / blockSize);
  let ones = new Int32Array(blocks * WORD_BITS);
  let totals = new Int32Array(blocks * WORD_BITS);
  for (let i = 0; i < length; i++) {
    const code = codes[i] as number;
    const at = Math.floor(i / blockSize) * WORD_BITS + (code & 0x7f);
    totals[at] = (totals[at] as number) + 1;
    ones[at] = (ones[at] as number) + (code >> 7);
  }
  const note = (read: { words: string[]; agreement: number } | undefined) => {
    for (const word of read?.words ?? []) if ((read?.agreement ?? 0) > (into.get(word) ?? 0)) into.set(word, read?.agreement ?? 0);
  };
  const pairOnes = new Int32Array(WORD_BITS);
  const pairTotals = new Int32Array(WORD_BITS);
  for (;;) {
    if (blocks === 1) {
      note(readTally(ones.subarray(0, WORD_BITS), totals.subarray(0, WORD_BITS)));
      return;
    }
    for (let b = 0; b + 1 < blocks; b++) {
      for (let bit = 0; bit < WORD_BITS; bit++) {
        pairOnes[bit] = (ones[b * WORD_BITS + bit] as number) + (ones[(b + 1) * WORD_BITS + bit] as number);
        pairTotals[bit] = (totals[b * WORD_BITS + bit] as number) + (totals[(b + 1) * WORD_BITS + bit] as number);
      }
      note(readTally(pairOnes, pairTotals));
    }
    const next = Math.ceil(blocks / 2);
    const nextOnes = new Int32Array(next * WORD_BITS);
    const nextTotals = new Int32Array(next * WORD_BITS);
    for (let b = 0; b < blocks; b++) {
      const to = (b >> 1) * WORD_BITS;
      for (let bit = 0; bit < WORD_BITS; bit++) {
        nextOnes[to + bit] = (nextOnes[to + bit] as number) + (ones[b * WORD_BITS + bit] as number);
        nextTotals[to + bit] = (nextTotals[to + bit] as number) + (totals[b * WORD_BITS + bit] as number);
      }
    }
    blocks = next;
    ones = nextOnes;
    totals = nextTotals;
  }
}

/** Words read from one lexing of `text`, at every rate: per place, its context hash and the bit it holds. */
function wordsOf(text: string): Map<string, number> {
  let h2s = new Uint32Array(1024);
  let codes = new Uint8Array(1024);
  let n = 0;
  scanPlaces(
    text,
    (start, end, h1, h2) => {
      if (n === codes.length) {
        const grownCodes = new Uint8Array(n * 2);
        grownCodes.set(codes);
        codes = grownCodes;
        const grownH2s = new Uint32Array(n * 2);
        grownH2s.set(h2s);
        h2s = grownH2s;
      }
      h2s[n] = h2;
      codes[n] = bitIndexOf(h1) | (((end > start ? 1 : 0) ^ maskOf(h2)) << 7);
      n++;
    },
    { lenient: true },
  );
  const words = new Map<string, number>();
  const picked = new Uint8Array(n);
  for (let rate = 0; rate <= MAX_RATE; rate++) {
    const select = (1 << rate) - 1;
    let length = 0;
    for (let i = 0; i < n; i++) if (((h2s[i] as number) & select) === 0) picked[length++] = codes[i] as number;
    if (length < WORD_BITS * MIN_VOTES) break;
    readWords(picked, length, words);
  }
  return words;
}

/**
 * Where to lex again: a cut inside a quoted string turns the rest of its line inside out (strings read as code, code
 * as strings) until the line ends, which on an obfuscated one-line script is the whole script. Each line of at least
 * LONG_LINE characters is read again from past each of its first quotes of each kind, to its end.
 */
function restarts(dump: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (let lineStart = 0; lineStart < dump.length; ) {
    const newline = dump.indexOf('\n', lineStart);
    const lineEnd = newline < 0 ? dump.length : newline;
    if (lineEnd - lineStart >= LONG_LINE) {
      const starts = new Set<number>();
      for (const quote of ['"', "'", '`']) {
        let at = lineStart - 1;
        for (let i = 0; i < RESTARTS_PER_QUOTE; i++) {
          at = dump.indexOf(quote, at + 1);
          if (at < 0 || at >= lineEnd) break;
          starts.add(at + 1);
        }
      }
      for (const from of [...starts].sort((a, b) => a - b)) ranges.push([from, lineEnd]);
    }
    lineStart = lineEnd + 1;
  }
  return ranges;
}

/**
 * The watermarks a dump's hidden mark names, for the project's versions: a word is reported only when its check
 * holds for one of them. Read from the start first; only when that names nothing, long lines again from past their
 * first quotes (restarts), one after another until one names something.
 */
export function readHiddenMarks(dump: string, versionIds: readonly string[]): HiddenReading[] {
  const found = new Map<string, HiddenReading>();
  const expected = new Map<string, Uint8Array>();
  const checkWords = (words: Map<string, number>) => {
    for (const [word, agreement] of words) {
      const watermark = wordWatermark(word);
      for (const versionId of versionIds) {
        const key = `${versionId}\n${watermark}`;
        const wordOf = expected.get(key) ?? markWord(versionId, watermark);
        expected.set(key, wordOf);
        if (!wordOf.every((bit, i) => (bit === 1) === (word[i] === '1'))) continue;
        const known = found.get(watermark);
        if (!known || known.agreement < agreement) found.set(watermark, { watermark, versionId, agreement });
      }
    }
  };
  checkWords(wordsOf(dump));
  if (found.size > 0) return [...found.values()];
  let lineDone = -1;
  for (const [from, to] of restarts(dump)) {
    if (to === lineDone) continue;
    const before = found.size;
    checkWords(wordsOf(dump.slice(from, to)));
    if (found.size > before) lineDone = to;
  }
  return [...found.values()];
}

/** The watermark (16 lowercase hex) in a word's first 64 bits. */
function wordWatermark(word: string): string {
  let hex = '';
  for (let i = 0; i < WATERMARK_BITS; i += 4) hex += Number.parseInt(word.slice(i, i + 4), 2).toString(16);
  return hex;
}
