import { createLuaVm, type HostFunction, LuaRaise, type LuaValue } from './lua-vm';

/**
 * Roblox and an executor as a loader sees them, in the fengari Lua VM: `game:GetService` (HttpService's JSON and
 * RequestAsync, RbxAnalyticsService, Players), the executor's `request`, `identifyexecutor`, `gethwid`,
 * `getgenv().script_key`, `readfile`/`writefile`/`isfile`/`makefolder`, Luau's `loadstring`, `task.wait` and `print`. What
 * they do is the host's: tests answer requests themselves, `npm run loader` sends them to the running stack.
 */

export interface HttpRequest {
  Url: string;
  Method: string;
  Headers: Record<string, string>;
  Body: string;
}

/** What an executor's request function returns (Roblox's RequestAsync shape), or a raised error. */
export type HttpReply = { StatusCode: number; StatusMessage: string; Headers: Record<string, string>; Body: string } | { raise: string };

export interface RobloxHost {
  /** The buyer's key, as `getgenv().script_key`; absent: the script sets the global `script_key` itself. */
  key?: string;
  /** What `gethwid()` answers: the machine id the loader hashes into its fingerprint. */
  machineId: string;
  executor: string;
  request(request: HttpRequest): HttpReply;
  /** What `task.wait(seconds)` does: the stub waits there before asking a busy server again. */
  wait(seconds: number): void;
  /** What `os.clock()` answers, in seconds; absent: the VM's own. The stub times its script request with it. */
  clock?: () => number;
  /** The executor's files (`readfile`, `writefile`, `isfile`); absent: an executor without them. */
  files?: Map<string, string>;
  print(line: string): void;
}

const ENVIRONMENT = `
local host = ...
local genv = { script_key = host.key }
getgenv = function() return genv end
gethwid = function() return host.machineId end
identifyexecutor = function() return host.executor, "1.0.0" end
request = function(options)
  local reply = host.request(options)
  if reply.raise ~= nil then error(reply.raise, 0) end
  return reply
end
task = { wait = function(seconds) host.wait(seconds) return seconds end }
if host.clock then os.clock = function() return host.clock() end end
loadstring = function(source, name) return load(source, name or "=loadstring") end
print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  host.print(table.concat(parts, "\\t"))
end
if host.hasFiles then
  readfile = function(path) return host.readfile(path) end
  writefile = function(path, text) host.writefile(path, text) end
  isfile = function(path) return host.isfile(path) end
  makefolder = function() end
end

local services = {}
local function method(serviceName, fn)
  return function(self, ...)
    if self ~= services[serviceName] then error("Expected ':' not '.' calling member function of " .. serviceName) end
    return fn(...)
  end
end
services.HttpService = {
  JSONEncode = method("HttpService", host.json_encode),
  JSONDecode = method("HttpService", host.json_decode),
  RequestAsync = method("HttpService", request),
}
services.RbxAnalyticsService = { GetClientId = method("RbxAnalyticsService", function() return host.machineId end) }
services.Players = { LocalPlayer = { UserId = 1 } }
game = { PlaceId = 1 }
-- game:HttpGet(url): the body of a GET, as the buyer's one line fetches the hosted stub with it.
game.HttpGet = function(self, url)
  if self ~= game then error("Expected ':' not '.' calling member function HttpGet") end
  local reply = request({ Url = url, Method = "GET", Headers = {} })
  if reply.StatusCode ~= 200 then error("HttpGet failed: HTTP " .. tostring(reply.StatusCode), 0) end
  return reply.Body
end
game.GetService = function(self, name)
  if self ~= game then error("Expected ':' not '.' calling member function GetService") end
  return services[name] or error("'" .. tostring(name) .. "' is not a valid Service name")
end
`;

/**
 * Runs a loader's source in a fresh VM with `host` as its Roblox, `runs` times in a row as one executor session does
 * (getgenv() and every global last between them); the Lua error that stopped the last run that failed, if one did.
 */
export function runInRoblox(source: string, chunkName: string, host: RobloxHost, runs = 1): { ok: true } | { ok: false; error: string } {
  const vm = createLuaVm();
  const files = host.files;
  const hostTable: Record<string, HostFunction | string | boolean> = {
    ...(host.key === undefined ? {} : { key: host.key }),
    machineId: host.machineId,
    executor: host.executor,
    hasFiles: files !== undefined,
    json_encode: (value: LuaValue) => JSON.stringify(value),
    json_decode: (text: LuaValue) => {
      try {
        return JSON.parse(String(text)) as LuaValue;
      } catch {
        throw new LuaRaise("Can't parse JSON");
      }
    },
    request: (options: LuaValue) => host.request(options as unknown as HttpRequest) as unknown as LuaValue,
    print: (line: LuaValue) => {
      host.print(String(line));
      return undefined;
    },
    wait: (seconds: LuaValue) => {
      host.wait(Number(seconds));
      return undefined;
    },
    readfile: (path: LuaValue) => {
      const text = files?.get(String(path));
      if (text === undefined) throw new LuaRaise(`file ${String(path)} does not exist`);
      return text;
    },
    writefile: (path: LuaValue, text: LuaValue) => {
      files?.set(String(path), String(text));
      return undefined;
    },
    isfile: (path: LuaValue) => files?.has(String(path)) ?? false,
    ...(host.clock ? { clock: host.clock } : {}),
  };
  const prepared = vm.run(ENVIRONMENT, 'roblox-environment', hostTable as Record<string, HostFunction>);
  if (!prepared.ok) throw new Error(`The Roblox environment failed: ${prepared.error}`);
  let failed: { ok: false; error: string } | undefined;
  for (let run = 0; run < runs; run++) {
    const result = vm.run(source, chunkName);
    if (!result.ok) failed = { ok: false, error: result.error };
  }
  return failed ?? { ok: true };
}
