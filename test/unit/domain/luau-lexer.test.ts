import fc from 'fast-check';
import luaparse, { type Lexer } from 'luaparse';
import { describe, expect, it } from 'vitest';
import { LuauLexError, lexLuau, luauTokens, TOKEN, type TokenKind } from '#domain/luau-lexer';

const texts = (source: string) => luauTokens(source).map(([, start, end]) => source.slice(start, end));
const kinds = (source: string) => luauTokens(source).map(([kind]) => kind);

/** luaparse's tokens (Lua 5.3) as source slices: the reference where the two grammars overlap. */
function luaparseTokens(source: string): string[] {
  const parser = luaparse.parse(source, { wait: true, comments: false, luaVersion: '5.3' }) as unknown as Lexer;
  const out: string[] = [];
  for (let token = parser.lex(); token.type !== luaparse.tokenTypes.EOF; token = parser.lex()) out.push(source.slice(token.range[0], token.range[1]));
  return out;
}

describe('luau lexer', () => {
  it('reads long strings and comments with levels, nested brackets inside them', () => {
    expect(texts('a = [==[ ]] ]=] ]==] .. b --[=[ ]] ]=] c')).toEqual(['a', '=', '[==[ ]] ]=] ]==]', '..', 'b', 'c']);
    expect(kinds('x = [[\nline\n]]')).toEqual([TOKEN.NAME, TOKEN.SYMBOL, TOKEN.LONG_STRING]);
  });

  it('reads numbers as Luau does: hex, exponents, underscores', () => {
    expect(texts('0x1F 1e3 1_000 1e-3 .5 3.14 0b101 0x1e+1')).toEqual(['0x1F', '1e3', '1_000', '1e-3', '.5', '3.14', '0b101', '0x1e', '+', '1']);
  });

  it('reads escapes, \\z and escaped line breaks inside strings', () => {
    expect(texts('"a\\"b" \'c\\\'d\' "e\\z\n   f" "g\\\nh"')).toEqual(['"a\\"b"', "'c\\'d'", '"e\\z\n   f"', '"g\\\nh"']);
  });

  it('reads backtick strings with nested interpolation, tables inside it', () => {
    const source = 'print(`a{x + `b{y}c`}d{ {1} }e`)';
    expect(texts(source)).toEqual(['print', '(', '`a{', 'x', '+', '`b{', 'y', '}c`', '}d{', '{', '1', '}', '}e`', ')']);
  });

  it('reads Luau compound operators and type arrows as one symbol each', () => {
    expect(texts('a //= b ..= c -> d :: e ... ~= ==')).toEqual(['a', '//=', 'b', '..=', 'c', '->', 'd', '::', 'e', '...', '~=', '==']);
  });

  it('refuses in strict mode what Luau refuses', () => {
    for (const bad of ['"open', 'x = [[never closed', '--[[ never closed', '`a{b', 'a $ b', '[=x', '`{{`']) {
      expect(() => luauTokens(bad), bad).toThrow(LuauLexError);
    }
  });

  it('goes on past broken pieces in lenient mode, as for a dump among prose', () => {
    const found: Array<[TokenKind, string]> = [];
    const source = "it's here: local a=1\nx = [[ open\nb = 2";
    lexLuau(source, (kind, start, end) => found.push([kind, source.slice(start, end)]), { lenient: true });
    expect(found).toContainEqual([TOKEN.ERROR, "'s here: local a=1"]);
    expect(found.map(([, text]) => text)).toEqual(['it', "'s here: local a=1", 'x', '=', '[', '[', 'open', 'b', '=', '2']);
  });

  const NAMES = ['a', 'b1', '_c', 'local', 'function', 'end', 'return', 'nil', 'true', 'x_y'];
  const NUMBERS = ['0', '42', '3.25', '0x1F', '1e3', '2E-2', '.5'];
  const STRINGS = ['"s"', "'q'", '"esc\\"aped"', "'\\n\\t'", '"\\65\\066"', '[[long]]', '[==[with ]] inside]==]', '[=[\nmulti\nline\n]=]'];
  const SYMBOLS = ['+', '-', '*', '/', '%', '^', '#', '==', '~=', '<=', '>=', '<', '>', '=', '(', ')', '{', '}', '[', ']', ';', ':', ',', '.', '..', '...'];
  const COMMENTS = ['--c\n', '--[[ long ]]', '--[==[ x ]] ]==]', '-- [[not long\n'];
  const token = fc.oneof(fc.constantFrom(...NAMES), fc.constantFrom(...NUMBERS), fc.constantFrom(...STRINGS), fc.constantFrom(...SYMBOLS));
  const separator = fc.oneof(
    fc.constantFrom(' ', '  ', '\t', '\n', '\r\n', ' \t '),
    fc.constantFrom(...COMMENTS).map((c) => ` ${c} `),
  );

  it('finds the same tokens as luaparse (Lua 5.3) where the grammars overlap', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(token, separator), { minLength: 1, maxLength: 40 }), (pieces) => {
        const source = pieces.map(([text, gap]) => text + gap).join('');
        expect(texts(source)).toEqual(luaparseTokens(source));
      }),
      { numRuns: 500 },
    );
  });
});
