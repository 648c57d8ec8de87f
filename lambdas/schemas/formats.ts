/**
 * The formats requests and records are checked against. Schemas import nothing else of the service's, so every
 * other part (domain rules, handlers, stores) can take its types from them without a cycle.
 */

/** Spec §4.3, §8. A key's watermark: exactly 16 lowercase hex characters, shown after `WM_` in a leaked dump. */
export const WATERMARK_PATTERN = /^[0-9a-f]{16}$/;

/**
 * Why `value` is not a watermark, phrased so the caller knows what to fix; undefined when it is one.
 * The common slips (the `WM_` prefix copied from the dump, uppercase hex) get their own advice.
 */
export function watermarkProblem(value: string): string | undefined {
  if (WATERMARK_PATTERN.test(value)) return undefined;
  const withoutPrefix = value.replace(/^WM_/i, '');
  if (withoutPrefix !== value && WATERMARK_PATTERN.test(withoutPrefix.toLowerCase())) {
    return `watermark must be the 16 hex characters after the WM_ prefix: drop the prefix and send "${withoutPrefix.toLowerCase()}"`;
  }
  if (/^[0-9a-fA-F]{16}$/.test(value)) {
    return `watermark must be lowercase hex: send "${value.toLowerCase()}"`;
  }
  return `watermark must be exactly 16 lowercase hex characters (0-9, a-f); got ${value.length} character${value.length === 1 ? '' : 's'}${/[^0-9a-fA-F]/.test(value) ? ' including characters that are not hex' : ''}`;
}

/** Path ids that cannot name anything this service made are answered 404 before any table read. */
export const PATH_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Characters no name a client sends may hold, because they change how the text around them is shown: C0 and C1
 * controls (line breaks included), Unicode line and paragraph separators, and the bidirectional marks,
 * embeddings, overrides and isolates (U+202E makes `exe.txt` show as `txt.exe`).
 */
export const UNSAFE_TEXT_CHARACTERS = /[\p{Cc}\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
/** The bidirectional marks, embeddings, overrides and isolates alone: refused even in text that may hold line breaks. */
export const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
export const UNSAFE_TEXT_CHARACTERS_GLOBAL = new RegExp(UNSAFE_TEXT_CHARACTERS.source, 'gu');

/**
 * Why free text (a version's notes, a project's name) cannot be stored, in words after the field's name; undefined
 * when it can. Tabs and line breaks pass; other controls and bidirectional overrides would change how it shows.
 */
export function printableTextProblem(text: string, maxLength: number): string | undefined {
  if (text.length > maxLength) return `must be at most ${maxLength} characters; got ${text.length}`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) return 'must not contain control characters';
  if (BIDI_CONTROLS.test(text)) return 'must not contain bidirectional-override characters';
  return undefined;
}
