// The parts of fengari (a Lua 5.3 VM in JavaScript) and luaparse (a Lua parser) that the loader tests use;
// neither package ships type declarations.

declare module 'fengari' {
  /** A Lua state. */
  export type LuaState = { readonly __luaState: unique symbol };
  /** Lua strings are byte arrays. */
  export type LuaString = Uint8Array;
  export type JsFunction = (L: LuaState) => number;

  export function to_luastring(value: string): LuaString;
  export function to_jsstring(value: LuaString): string;

  export const lua: {
    LUA_OK: number;
    LUA_MULTRET: number;
    LUA_TNIL: number;
    LUA_TBOOLEAN: number;
    LUA_TNUMBER: number;
    LUA_TSTRING: number;
    LUA_TTABLE: number;
    LUA_TFUNCTION: number;
    lua_absindex(L: LuaState, index: number): number;
    lua_createtable(L: LuaState, arraySize: number, hashSize: number): void;
    lua_error(L: LuaState): number;
    lua_getglobal(L: LuaState, name: LuaString | string): number;
    lua_gettop(L: LuaState): number;
    lua_isinteger(L: LuaState, index: number): boolean;
    lua_next(L: LuaState, index: number): number;
    lua_pcall(L: LuaState, nargs: number, nresults: number, errfunc: number): number;
    lua_pop(L: LuaState, n: number): void;
    lua_pushboolean(L: LuaState, value: boolean | number): void;
    lua_pushinteger(L: LuaState, value: number): void;
    lua_pushjsfunction(L: LuaState, fn: JsFunction): void;
    lua_pushnil(L: LuaState): void;
    lua_pushnumber(L: LuaState, value: number): void;
    lua_pushstring(L: LuaState, value: LuaString | string): LuaString;
    lua_pushvalue(L: LuaState, index: number): void;
    lua_rawseti(L: LuaState, index: number, n: number): void;
    lua_setfield(L: LuaState, index: number, key: LuaString | string): void;
    lua_setglobal(L: LuaState, name: LuaString | string): void;
    lua_settop(L: LuaState, index: number): void;
    lua_toboolean(L: LuaState, index: number): boolean;
    lua_tonumber(L: LuaState, index: number): number;
    lua_tostring(L: LuaState, index: number): LuaString;
    lua_type(L: LuaState, index: number): number;
  };

  export const lauxlib: {
    luaL_newstate(): LuaState;
    luaL_loadbuffer(L: LuaState, buffer: LuaString, size: number | null, chunkName: LuaString): number;
    luaL_checknumber(L: LuaState, arg: number): number;
  };

  export const lualib: {
    luaL_openlibs(L: LuaState): void;
  };
}

declare module 'luaparse' {
  export interface Identifier {
    type: 'Identifier';
    name: string;
  }
  export interface Node {
    type: string;
    [field: string]: unknown;
  }
  export interface Chunk {
    type: 'Chunk';
    globals?: Identifier[];
  }
  export interface ParseOptions {
    luaVersion?: '5.1' | '5.2' | '5.3' | 'LuaJIT';
    scope?: boolean;
    comments?: boolean;
    onCreateNode?: (node: Node) => void;
    /** Returns a parser to pull tokens from with lex() instead of parsing (the Luau lexer's tests compare tokens). */
    wait?: boolean;
  }
  /** A token as lex() returns it: its type (tokenTypes) and its [start, end) offsets. */
  export interface Token {
    type: number;
    range: [number, number];
  }
  export interface Lexer {
    lex(): Token;
  }
  export function parse(code: string, options?: ParseOptions): Chunk;
  const luaparse: { parse: typeof parse; tokenTypes: { EOF: number } };
  export default luaparse;
}
