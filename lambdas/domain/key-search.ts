import { WATERMARK_PATTERN } from '#schemas/formats';
import { DISCORD_USER_ID } from '#schemas/requests';
import type { KeyDetail } from './model';
import { emailSha256 } from './shops/receipts';

/**
 * The console's key search (DESIGN.md "Publisher console", Keys): one text box that finds a key by its id, its
 * watermark, its buyer's Discord id or words of its note, each answered from an index or a maintained item, never a
 * scan of the project. What the text is decides where it is looked up.
 */

/** A key id as issuance derives it (#domain/key-values keyIdOf). */
const KEY_ID = /^key_[0-9a-f]{20}$/;

/** Text that reads as one email address. */
const EMAIL_ADDRESS = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{1,63}$/;

/** Results a page shows, and the most candidates one search reads (a note word shared by more is too vague). */
export const SEARCH_PAGE = 100;
export const MAX_SEARCH_CANDIDATES = 1000;
/** Keys a listing with a status filter reads for one page at most, so a page never reads the whole project. */
export const MAX_LISTING_READ = 1000;

/**
 * Keys per page of the CSV export: one request reads at most this many (50 reads of 100), well inside the
 * console function's timeout and Lambda's 6 MB answer; the page says where the next one starts and the browser
 * joins the pages into one file. Read whole, 50,000 keys and more failed after paying for every read.
 */
export const EXPORT_PAGE_KEYS = 5000;

/** Words of a note kept as search items: enough for any real note, and a key's write cost stays bounded. */
export const MAX_NOTE_WORDS = 16;
/** A word is cut here: a prefix search of a longer word still finds it. */
export const MAX_WORD_LENGTH = 32;

export type SearchQuery =
  | { kind: 'key_id'; keyId: string }
  | { kind: 'watermark'; watermark: string }
  | { kind: 'discord_id'; discordId: string }
  | { kind: 'note'; words: string[] };

/** What a search text names; undefined for text with no word in it (the listing then). */
export function classifySearch(text: string): SearchQuery | undefined {
  const q = text.trim();
  if (KEY_ID.test(q)) return { kind: 'key_id', keyId: q };
  if (WATERMARK_PATTERN.test(q)) return { kind: 'watermark', watermark: q };
  if (DISCORD_USER_ID.test(q)) return { kind: 'discord_id', discordId: q };
  // A buyer's email: a shop order's keys carry only its SHA-256 in their note (#domain/shops/receive), so that is
  // the word looked up (cut as noteWords cuts it).
  if (EMAIL_ADDRESS.test(q)) return { kind: 'note', words: [emailSha256(q).slice(0, MAX_WORD_LENGTH)] };
  const words = noteWords(q);
  return words.length > 0 ? { kind: 'note', words } : undefined;
}

/**
 * The words a note is found by: lowercase runs of letters and digits (any script), distinct, in order, each cut to
 * MAX_WORD_LENGTH, at most MAX_NOTE_WORDS. The same function cuts the search text, so both sides agree.
 */
export function noteWords(note: string): string[] {
  const words = note.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.map((word) => word.slice(0, MAX_WORD_LENGTH)))].slice(0, MAX_NOTE_WORDS);
}

/** Every searched word is the start of some word of the note (case-insensitive). */
export function noteMatches(note: string | null, searched: readonly string[]): boolean {
  const words = noteWords(note ?? '');
  return searched.every((prefix) => words.some((word) => word.startsWith(prefix)));
}

/** The word whose prefix query reads fewest candidates: the longest is the most selective. */
export const mostSelectiveWord = (words: readonly string[]): string => words.reduce((best, word) => (word.length > best.length ? word : best), words[0] ?? '');

const KEY_STATUSES = ['all', 'active', 'revoked', 'expired'] as const;
export type KeyStatusFilter = (typeof KEY_STATUSES)[number];
export type KeyStatus = Exclude<KeyStatusFilter, 'all'>;

/** A key's status as the console shows it: revoked first, then expired by the clock, else active. */
export function keyStatus(key: Pick<KeyDetail, 'revoked' | 'expires_at'>, now: number): KeyStatus {
  if (key.revoked === 1) return 'revoked';
  return key.expires_at <= now ? 'expired' : 'active';
}

export const statusMatches = (filter: KeyStatusFilter, status: KeyStatus): boolean => filter === 'all' || filter === status;
