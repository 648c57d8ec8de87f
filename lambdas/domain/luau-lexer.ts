/**
 * A Luau lexer, enough to find the tokens of a script and the whitespace between them (the hidden mark,
 * hidden-mark.ts, lives in that whitespace). It follows Luau's Lexer.cpp: long strings and comments with levels
 * (`[==[ … ]==]`), backtick strings with `{}` interpolation (nested), escapes (`\z`, an escaped line break),
 * numbers as Luau skips them (`0x1F`, `1e3`, `1_000`: digits, `.` and `_`, an exponent sign, then letters).
 *
 * Two modes: strict (a script as uploaded: anything Luau would refuse makes the whole script unlexable, and it is
 * then served with the visible marks only) and lenient (a leaked dump, maybe cut anywhere and pasted among other
 * text: a broken piece becomes an ERROR token and lexing goes on).
 */

export const TOKEN = {
  NAME: 0,
  NUMBER: 1,
  /** A `"` or `'` string. */
  STRING: 2,
  /** A long string, `[[ … ]]` at any level. */
  LONG_STRING: 3,
  /** A backtick string or one of its pieces around `{}`. */
  INTERP: 4,
  SYMBOL: 5,
  /** Lenient mode only: what Luau would refuse (an unknown character, an unfinished string). */
  ERROR: 6,
} as const;
export type TokenKind = (typeof TOKEN)[keyof typeof TOKEN];

/** Called once per token, in order: its kind and its [start, end) offsets in the text. */
export type TokenSink = (kind: TokenKind, start: number, end: number) => void;

export class LuauLexError extends Error {}

const SYMBOLS_3 = new Set(['...', '..=', '//=']);
const SYMBOLS_2 = new Set(['..', '==', '~=', '<=', '>=', '+=', '-=', '*=', '/=', '%=', '^=', '//', '->', '::']);
/** Characters that are a symbol alone; those that may start a longer one are looked up in the sets above. */
const SINGLE = new Uint8Array(128);
for (const c of '+-*/%^#&~|<>=(){}[];:,.?@') SINGLE[c.charCodeAt(0)] = 1;
const MAY_GROW = new Uint8Array(128);
for (const symbol of [...SYMBOLS_3, ...SYMBOLS_2]) MAY_GROW[symbol.charCodeAt(0)] = 1;

/** The length of the symbol at `i` (3, 2 or 1), 0 when none starts there. */
function symbolLength(text: string, i: number, c: number): number {
  if (c >= 128 || SINGLE[c] === 0) return 0;
  if (MAY_GROW[c] === 0) return 1;
  if (SYMBOLS_3.has(text.slice(i, i + 3))) return 3;
  return SYMBOLS_2.has(text.slice(i, i + 2)) ? 2 : 1;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const isWordChar = (c: number) => isAlpha(c) || isDigit(c);
const isNewline = (c: number) => c === 0x0a || c === 0x0d;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0b || c === 0x0c;

const BACKSLASH = 0x5c;
const BACKTICK = 0x60;
const OPEN_BRACKET = 0x5b;
const EQUALS = 0x3d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * The level of a long bracket opening at `at` (`[` then `=`×level then `[`), or -1 when none opens there.
 */
function longOpenLevel(text: string, at: number): number {
  let i = at + 1;
  while (text.charCodeAt(i) === EQUALS) i++;
  return text.charCodeAt(i) === OPEN_BRACKET ? i - at - 1 : -1;
}

/** Where the long bracket of `level` whose body starts at `from` closes (just past `]=…=]`), or -1. */
function longCloseEnd(text: string, from: number, level: number): number {
  const close = `]${'='.repeat(level)}]`;
  const at = text.indexOf(close, from);
  return at < 0 ? -1 : at + close.length;
}

/** Past a quoted string's closing quote, or the index of the line break (or end) that left it unfinished, negated - 1. */
function quotedEnd(text: string, from: number, quote: number): number {
  let i = from;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === quote) return i + 1;
    if (isNewline(c)) return -i - 1;
    if (c === BACKSLASH) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x7a) {
        // \z skips the whitespace after it, line breaks included.
        i += 2;
        while (i < n && isSpace(text.charCodeAt(i))) i++;
        continue;
      }
      if (isNewline(next)) {
        const after = text.charCodeAt(i + 2);
        i += isNewline(after) && after !== next ? 3 : 2;
        continue;
      }
      i += 2;
      continue;
    }
    i++;
  }
  return -n - 1;
}

/**
 * A backtick piece starting at `from` (just past the backtick or the `}` that resumes it): past its end, and whether
 * it opened an interpolation (`{`) rather than closed the string; negative when a line break or the end came first.
 */
function interpEnd(text: string, from: number): { end: number; opens: boolean } | { broken: number } {
  let i = from;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === BACKTICK) return { end: i + 1, opens: false };
    if (c === OPEN_BRACE) return { end: i + 1, opens: true };
    if (isNewline(c)) return { broken: i };
    if (c === BACKSLASH) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x7a) {
        i += 2;
        while (i < n && isSpace(text.charCodeAt(i))) i++;
        continue;
      }
      if (isNewline(next)) {
        const after = text.charCodeAt(i + 2);
        i += isNewline(after) && after !== next ? 3 : 2;
        continue;
      }
      i += 2;
      continue;
    }
    i++;
  }
  return { broken: n };
}

/** Past a number starting at `from`, as Luau's readNumber skips it. */
function numberEnd(text: string, from: number): number {
  let i = from;
  do i++;
  while (isDigit(text.charCodeAt(i)) || text.charCodeAt(i) === 0x2e || text.charCodeAt(i) === 0x5f);
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i++;
    const sign = text.charCodeAt(i);
    if (sign === 0x2b || sign === 0x2d) i++;
  }
  while (isWordChar(text.charCodeAt(i))) i++;
  return i;
}

/**
 * Lexes `text` from `from`, calling `sink` for each token. Strict mode throws LuauLexError on what Luau refuses;
 * lenient mode reports it as an ERROR token and goes on.
 */
export function lexLuau(text: string, sink: TokenSink, options: { lenient?: boolean; from?: number } = {}): void {
  const lenient = options.lenient === true;
  const n = text.length;
  let i = options.from ?? 0;
  /** Open interpolations: the brace depth inside each, innermost last. */
  const interps: number[] = [];
  const fail = (message: string, start: number, end: number): number => {
    if (!lenient) throw new LuauLexError(`${message} at offset ${start}`);
    sink(TOKEN.ERROR, start, end);
    return end;
  };
  // A first line starting with # (a shebang) is skipped, as Luau does.
  if (i === 0 && text.charCodeAt(0) === 0x23 && text.charCodeAt(1) === 0x21) {
    while (i < n && !isNewline(text.charCodeAt(i))) i++;
  }
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    const start = i;
    if (isAlpha(c)) {
      do i++;
      while (isWordChar(text.charCodeAt(i)));
      sink(TOKEN.NAME, start, i);
      continue;
    }
    if (isDigit(c) || (c === 0x2e && isDigit(text.charCodeAt(i + 1)))) {
      i = numberEnd(text, i);
      sink(TOKEN.NUMBER, start, i);
      continue;
    }
    if (c === 0x2d && text.charCodeAt(i + 1) === 0x2d) {
      // A comment: long when a long bracket opens right after `--`.
      const level = text.charCodeAt(i + 2) === OPEN_BRACKET ? longOpenLevel(text, i + 2) : -1;
      if (level >= 0) {
        const end = longCloseEnd(text, i + 4 + level, level);
        if (end >= 0) {
          i = end;
          continue;
        }
        if (!lenient) throw new LuauLexError(`unfinished long comment at offset ${start}`);
      }
      while (i < n && !isNewline(text.charCodeAt(i))) i++;
      continue;
    }
    if (c === 0x22 || c === 0x27) {
      const end = quotedEnd(text, i + 1, c);
      if (end >= 0) {
        i = end;
        sink(TOKEN.STRING, start, i);
      } else i = fail('unfinished string', start, -end - 1);
      continue;
    }
    if (c === BACKTICK || (c === CLOSE_BRACE && interps.length > 0 && interps[interps.length - 1] === 0)) {
      if (c === CLOSE_BRACE) interps.pop();
      const piece = interpEnd(text, i + 1);
      if ('broken' in piece) {
        i = fail('unfinished backtick string', start, piece.broken);
        continue;
      }
      i = piece.end;
      if (piece.opens) {
        if (text.charCodeAt(i) === OPEN_BRACE) {
          // Luau refuses `{{` in an interpolated string (it reads as an escaped brace elsewhere).
          i = fail('double brace in a backtick string', start, i + 1);
          continue;
        }
        interps.push(0);
      }
      sink(TOKEN.INTERP, start, i);
      continue;
    }
    if (c === OPEN_BRACKET) {
      const level = longOpenLevel(text, i);
      if (level >= 0) {
        const end = longCloseEnd(text, i + 2 + level, level);
        if (end >= 0) {
          i = end;
          sink(TOKEN.LONG_STRING, start, i);
          continue;
        }
        if (!lenient) throw new LuauLexError(`unfinished long string at offset ${start}`);
      } else if (text.charCodeAt(i + 1) === EQUALS) {
        if (!lenient) throw new LuauLexError(`invalid long string delimiter at offset ${start}`);
      }
      i++;
      sink(TOKEN.SYMBOL, start, i);
      continue;
    }
    const length = symbolLength(text, i, c);
    if (length === 0) {
      i = fail(`unexpected character ${JSON.stringify(text[i])}`, start, i + 1);
      continue;
    }
    if (interps.length > 0) {
      const top = interps.length - 1;
      if (c === OPEN_BRACE) interps[top] = (interps[top] ?? 0) + 1;
      else if (c === CLOSE_BRACE) interps[top] = (interps[top] ?? 0) - 1;
    }
    i += length;
    sink(TOKEN.SYMBOL, start, i);
  }
  if (interps.length > 0 && !lenient) throw new LuauLexError('unfinished backtick string at the end');
}

/** A script's tokens as [kind, start, end] triples; throws LuauLexError when it does not lex as Luau. */
export function luauTokens(text: string): Array<[TokenKind, number, number]> {
  const tokens: Array<[TokenKind, number, number]> = [];
  lexLuau(text, (kind, start, end) => tokens.push([kind, start, end]));
  return tokens;
}
