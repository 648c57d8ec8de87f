import type { LuaState } from 'fengari';
import { lauxlib, lua, lualib, to_jsstring, to_luastring } from 'fengari';

/**
 * A Lua VM for running the Luau examples under test: fengari (Lua 5.3 in JavaScript), with what Luau has and
 * Lua 5.3 has not (bit32), and plain JavaScript values passed in and out.
 *
 * Numbers follow Luau's where it matters to the examples: bit32 works on and returns doubles in 0 .. 2^32-1,
 * and whole numbers that fit in 32 bits come into Lua as integers, so `"HTTP " .. 429` reads as in Luau.
 */

/** What a Lua value becomes in JavaScript: tables with keys 1..n become arrays, other tables objects. */
export type LuaValue = undefined | boolean | number | string | LuaValue[] | { [key: string]: LuaValue } | LuaFunctionRef;
/** A Lua function seen from JavaScript (not callable from here; only its presence matters). */
interface LuaFunctionRef {
  luaFunction: true;
}

export type HostFunction = (...args: LuaValue[]) => LuaValue;
/** What JavaScript may pass into Lua: values, byte strings, and functions Lua may call, also inside tables. */
type LuaInput = LuaValue | Uint8Array | HostFunction | null | LuaInput[] | { [key: string]: LuaInput };

/** Thrown by a host function to raise a Lua error with this message, as a failing Roblox API would. */
export class LuaRaise extends Error {}

export interface LuaVm {
  /** Sets a global to a JavaScript value or function. */
  setGlobal(name: string, value: LuaInput): void;
  /** Runs a chunk with arguments (visible as `...`); returns its first result, or the Lua error's message. */
  run(source: string, chunkName: string, ...args: LuaInput[]): { ok: true; value: LuaValue } | { ok: false; error: string };
}

/** Luau's conversion of a number argument of bit32: the integer part, modulo 2^32. */
const toUint32 = (n: number): number => Math.trunc(n) >>> 0;

/** bit32 as Luau has it, for the functions a loader would reach for (Lua 5.3, and so fengari, has none). */
const BIT32: Record<string, (...args: number[]) => number> = {
  band: (...xs) => xs.reduce((acc, x) => (acc & toUint32(x)) >>> 0, 0xffffffff),
  bor: (...xs) => xs.reduce((acc, x) => (acc | toUint32(x)) >>> 0, 0),
  bxor: (...xs) => xs.reduce((acc, x) => (acc ^ toUint32(x)) >>> 0, 0),
  bnot: (x = 0) => ~toUint32(x) >>> 0,
  lshift: (x = 0, n = 0) => (Math.abs(n) >= 32 ? 0 : n >= 0 ? (toUint32(x) << n) >>> 0 : toUint32(x) >>> -n),
  rshift: (x = 0, n = 0) => (Math.abs(n) >= 32 ? 0 : n >= 0 ? toUint32(x) >>> n : (toUint32(x) << -n) >>> 0),
  lrotate: (x = 0, n = 0) => rotateLeft(toUint32(x), n),
  rrotate: (x = 0, n = 0) => rotateLeft(toUint32(x), -n),
};

function rotateLeft(x: number, n: number): number {
  const by = ((n % 32) + 32) % 32;
  return by === 0 ? x : ((x << by) | (x >>> (32 - by))) >>> 0;
}

export function createLuaVm(): LuaVm {
  const L = lauxlib.luaL_newstate();
  lualib.luaL_openlibs(L);
  installBit32(L);

  return {
    setGlobal(name, value) {
      pushValue(L, value);
      lua.lua_setglobal(L, to_luastring(name));
    },
    run(source, chunkName, ...args) {
      lua.lua_settop(L, 0);
      if (lauxlib.luaL_loadbuffer(L, to_luastring(source), null, to_luastring(`@${chunkName}`)) !== lua.LUA_OK) {
        return { ok: false, error: readString(L, -1) };
      }
      for (const arg of args) pushValue(L, arg);
      if (lua.lua_pcall(L, args.length, 1, 0) !== lua.LUA_OK) return { ok: false, error: readString(L, -1) };
      return { ok: true, value: toValue(L, -1) };
    },
  };
}

function installBit32(L: LuaState): void {
  lua.lua_createtable(L, 0, Object.keys(BIT32).length);
  for (const [name, fn] of Object.entries(BIT32)) {
    lua.lua_pushjsfunction(L, (state) => {
      const args: number[] = [];
      for (let i = 1; i <= lua.lua_gettop(state); i++) args.push(lauxlib.luaL_checknumber(state, i));
      lua.lua_pushnumber(state, fn(...args));
      return 1;
    });
    lua.lua_setfield(L, -2, to_luastring(name));
  }
  lua.lua_setglobal(L, to_luastring('bit32'));
}

function pushHostFunction(L: LuaState, fn: HostFunction): void {
  lua.lua_pushjsfunction(L, (state) => {
    const args: LuaValue[] = [];
    for (let i = 1; i <= lua.lua_gettop(state); i++) args.push(toValue(state, i));
    let result: LuaValue;
    try {
      result = fn(...args);
    } catch (error) {
      if (!(error instanceof LuaRaise)) throw error;
      lua.lua_pushstring(state, to_luastring(error.message));
      return lua.lua_error(state);
    }
    pushValue(state, result);
    return 1;
  });
}

function pushValue(L: LuaState, value: LuaInput): void {
  if (value === undefined || value === null) lua.lua_pushnil(L);
  else if (typeof value === 'function') pushHostFunction(L, value);
  else if (typeof value === 'boolean') lua.lua_pushboolean(L, value);
  else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31) lua.lua_pushinteger(L, value);
    else lua.lua_pushnumber(L, value);
  } else if (typeof value === 'string') lua.lua_pushstring(L, to_luastring(value));
  else if (value instanceof Uint8Array) lua.lua_pushstring(L, value);
  else if (Array.isArray(value)) {
    lua.lua_createtable(L, value.length, 0);
    value.forEach((item, i) => {
      pushValue(L, item);
      lua.lua_rawseti(L, -2, i + 1);
    });
  } else if ('luaFunction' in value) {
    throw new Error('a Lua function cannot be passed back into Lua');
  } else {
    lua.lua_createtable(L, 0, Object.keys(value).length);
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || item === null) continue; // a nil field is no field
      pushValue(L, item);
      lua.lua_setfield(L, -2, to_luastring(key));
    }
  }
}

function readString(L: LuaState, index: number): string {
  return to_jsstring(lua.lua_tostring(L, index));
}

function toValue(L: LuaState, index: number): LuaValue {
  const type = lua.lua_type(L, index);
  if (type === lua.LUA_TNIL) return undefined;
  if (type === lua.LUA_TBOOLEAN) return lua.lua_toboolean(L, index);
  if (type === lua.LUA_TNUMBER) return lua.lua_tonumber(L, index);
  if (type === lua.LUA_TSTRING) return readString(L, index);
  if (type === lua.LUA_TFUNCTION) return { luaFunction: true };
  if (type !== lua.LUA_TTABLE) throw new Error(`unexpected Lua value of type ${type}`);

  const table = lua.lua_absindex(L, index);
  const entries: [string | number, LuaValue][] = [];
  lua.lua_pushnil(L);
  while (lua.lua_next(L, table) !== 0) {
    const key = lua.lua_type(L, -2) === lua.LUA_TNUMBER ? lua.lua_tonumber(L, -2) : readString(L, -2);
    entries.push([key, toValue(L, -1)]);
    lua.lua_pop(L, 1);
  }
  const isArray =
    entries.length > 0 &&
    entries.every(([key]) => typeof key === 'number') &&
    entries
      .map(([key]) => key as number)
      .sort((a, b) => a - b)
      .every((key, i) => key === i + 1);
  if (isArray) return entries.sort(([a], [b]) => (a as number) - (b as number)).map(([, item]) => item);
  return Object.fromEntries(entries.map(([key, item]) => [String(key), item]));
}
