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
/**
 * Characters an executor name may not hold, beyond UNSAFE_TEXT_CHARACTERS: every format character (`\p{Cf}`:
 * zero-width spaces and joiners, soft hyphens, tags) and the Hangul fillers, which render as nothing. With them
 * `Synapse\u200BX` reads as `Synapse X` in an embed yet counts as a new executor.
 */
export const INVISIBLE_NAME_CHARACTERS = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/u;

/** The message every executor field gives for a name holding UNSAFE_TEXT_CHARACTERS or INVISIBLE_NAME_CHARACTERS. */
export const EXECUTOR_CHARACTERS_MESSAGE = 'executor must not contain control, invisible or bidirectional-override characters';

/** The bidirectional marks, embeddings, overrides and isolates alone: refused even in text that may hold line breaks. */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
export const UNSAFE_TEXT_CHARACTERS_GLOBAL = new RegExp(UNSAFE_TEXT_CHARACTERS.source, 'gu');

/**
 * The one rule for free text a client sends (a key's note, a version's notes, a ban's reason, a project's name): no
 * C0 or C1 control but tab and line feed, and no bidirectional control. An ESC reaches the owner's terminal through
 * `sdapi keys show` (`\u001b]52;c;…` writes the clipboard); a bidi override reorders the embed it is shown in.
 */
const FREE_TEXT_FORBIDDEN = new RegExp(`(?![\\t\\n])\\p{Cc}|${BIDI_CONTROLS.source}`, 'u');

/** What is wrong with the characters of `text` (FREE_TEXT_FORBIDDEN), in words after the field's name; undefined when nothing. */
function freeTextCharacterProblem(text: string): string | undefined {
  const found = FREE_TEXT_FORBIDDEN.exec(text)?.[0];
  if (found === undefined) return undefined;
  const code = `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  return `must be printable text: it holds ${code}, a control or bidirectional character (only tab and line feed are allowed)`;
}

/** Why `text` is no acceptable free text for `field`, phrased for the caller; undefined when it is. */
export function freeTextProblem(field: string, text: string): string | undefined {
  const problem = freeTextCharacterProblem(text);
  return problem && `${field} ${problem}`;
}

/** The same rule with a length (the dashboard's and the console's fields), in words after the field's name. */
export function printableTextProblem(text: string, maxLength: number): string | undefined {
  if (text.length > maxLength) return `must be at most ${maxLength} characters; got ${text.length}`;
  return freeTextCharacterProblem(text);
}
