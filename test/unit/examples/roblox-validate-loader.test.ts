import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import luaparse, { type Identifier, type Node as LuaNode } from 'luaparse';
import { describe, expect, it } from 'vitest';
import { createLuaVm, type HostFunction, LuaRaise, type LuaValue } from '../../../loader-runner/lua-vm';

/**
 * examples/roblox-validate-loader.luau, run in a Lua VM written in JavaScript (fengari) with Roblox and the executor
 * stubbed: the request it sends (DESIGN.md, "Loader key check"), where it takes the key, the machine id and
 * the executor name from, and that only {"valid": true, "code": "KEY_VALID"} lets the script after it run.
 */

const LOADER = readFileSync(new URL('../../../examples/roblox-validate-loader.luau', import.meta.url), 'utf8');

const BASE_URL = 'https://keys.test.example';
const PROJECT_ID = 'prj_0123456789abcdef0123';
const VALIDATE_URL = `${BASE_URL}/v1/loader/validate`;

const sha256 = (input: string | Uint8Array): string => createHash('sha256').update(input).digest('hex');

/** The loader with its LOADER_SETTINGS lines set to these values (Lua literals), as a publisher would edit them. */
function loaderWith(settings: Record<string, string | null>): string {
  let source = LOADER;
  for (const [name, value] of Object.entries(settings)) {
    const line = new RegExp(`^(\\t${name} = ).*,$`, 'm');
    expect(source, `LOADER_SETTINGS has a line for ${name}`).toMatch(line);
    source = source.replace(line, `$1${value === null ? 'nil' : JSON.stringify(value)},`);
  }
  return source;
}

const CONFIGURED = { api_base_url: BASE_URL, project_id: PROJECT_ID };

type Reply =
  | { status: number; headers?: Record<string, string>; body?: string }
  | { raise: string } // the request function raises a Lua error (RequestAsync does on a failed connection)
  | { statusZero: string }; // the executor answers, but with StatusCode 0 and a message

interface Scenario {
  /** What getgenv().script_key holds; undefined: the executor has no getgenv. */
  genvKey?: string;
  /** The global script_key. */
  globalKey?: string;
  /** gethwid()'s answer; undefined: no gethwid. */
  hwid?: string;
  /** RbxAnalyticsService:GetClientId()'s answer; undefined: it raises, as it does where it is not allowed. */
  clientId?: string;
  /** Players.LocalPlayer.UserId; undefined: no LocalPlayer (a server Script). */
  userId?: number;
  placeId?: number;
  /** identifyexecutor()'s name; undefined: no identifyexecutor. */
  executor?: string;
  /** The executor request functions that exist: request, http_request, syn.request, http.request. */
  requestFunctions?: string[];
  settings?: Record<string, string | null>;
  reply?: Reply;
  /** Answers in turn, the last one repeated; instead of `reply`. */
  replies?: Reply[];
}

interface RecordedRequest {
  via: string;
  Url: string;
  Method: string;
  Headers: Record<string, string>;
  Body: string;
}

interface Outcome {
  requests: RecordedRequest[];
  /** The seconds of each task.wait. */
  waits: number[];
  /** KeyInfo, as the script after the loader saw it; undefined when the script after the loader did not run. */
  continuedWith?: LuaValue;
  /** The error that stopped the script. */
  error?: string;
}

/** Roblox and the executor as the loader sees them, built from the scenario (the chunk's `...`). */
const ENVIRONMENT = `
local scenario, host = ...
task = { wait = function(seconds) host.wait(seconds) return seconds end }

if scenario.genvKey ~= nil then
  local genv = { script_key = scenario.genvKey }
  getgenv = function() return genv end
end
script_key = scenario.globalKey
if scenario.hwid ~= nil then gethwid = function() return scenario.hwid end end
if scenario.executor ~= nil then identifyexecutor = function() return scenario.executor, "1.0.0" end end

local function requestVia(name) return function(options) return host.request(name, options) end end
for _, name in ipairs(scenario.requestFunctions) do
  if name == "request" then request = requestVia(name)
  elseif name == "http_request" then http_request = requestVia(name)
  elseif name == "syn.request" then syn = { request = requestVia(name) }
  elseif name == "http.request" then http = { request = requestVia(name) }
  else error("unknown request function " .. name) end
end

local services = {}
-- Roblox methods are called with ':'; '.' is an error there, and here.
local function method(serviceName, fn)
  return function(self, ...)
    if self ~= services[serviceName] then error("Expected ':' not '.' calling member function of " .. serviceName) end
    return fn(...)
  end
end
services.HttpService = {
  JSONEncode = method("HttpService", host.json_encode),
  JSONDecode = method("HttpService", host.json_decode),
  RequestAsync = method("HttpService", function(options) return host.request("HttpService:RequestAsync", options) end),
}
services.RbxAnalyticsService = {
  GetClientId = method("RbxAnalyticsService", function()
    if scenario.clientId == nil then error("The current thread cannot call 'GetClientId' (lacking capability)") end
    return scenario.clientId
  end),
}
services.Players = { LocalPlayer = scenario.userId and { UserId = scenario.userId } or nil }

game = { PlaceId = scenario.placeId }
game.GetService = function(self, name)
  if self ~= game then error("Expected ':' not '.' calling member function GetService") end
  return services[name] or error("'" .. tostring(name) .. "' is not a valid Service name")
end
`;

const DEFAULTS: Required<Pick<Scenario, 'genvKey' | 'hwid' | 'clientId' | 'userId' | 'placeId' | 'executor' | 'requestFunctions'>> = {
  genvKey: 'BUYER-KEY-5f2a9c',
  hwid: 'HWID-7C1E-4B2D-9F00',
  clientId: 'B2A1C3D4-0000-4000-8000-ROBLOXCLIENT',
  userId: 42,
  placeId: 1818,
  executor: 'TestExecutor',
  requestFunctions: ['request'],
};

const VALID_ANSWER = { valid: true, code: 'KEY_VALID', key_id: 'key_01', expires_at: 1_893_456_000, uses_left: 7 };
const json = (status: number, body: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** Runs the loader, followed by one line of "the publisher's script" that reports what it sees. */
function runLoader(scenario: Scenario = {}): Outcome {
  const merged = { ...DEFAULTS, ...scenario };
  const replies = scenario.replies ?? [scenario.reply ?? json(200, VALID_ANSWER)];
  const outcome: Outcome = { requests: [], waits: [] };
  const vm = createLuaVm();

  vm.setGlobal('continued', (keyInfo) => {
    outcome.continuedWith = keyInfo;
    return undefined;
  });
  const host = {
    json_encode: (value: LuaValue) => JSON.stringify(value),
    json_decode: (text: LuaValue) => {
      try {
        return JSON.parse(String(text)) as LuaValue;
      } catch {
        throw new LuaRaise("Can't parse JSON");
      }
    },
    wait: (seconds: LuaValue) => {
      outcome.waits.push(Number(seconds));
      return undefined;
    },
    request: (via: LuaValue, options: LuaValue) => {
      outcome.requests.push({ via, ...(options as object) } as RecordedRequest);
      const reply = replies[Math.min(outcome.requests.length, replies.length) - 1] as Reply;
      if ('raise' in reply) throw new LuaRaise(reply.raise);
      if ('statusZero' in reply) return { Success: false, StatusCode: 0, StatusMessage: reply.statusZero };
      return {
        Success: reply.status >= 200 && reply.status <= 299,
        StatusCode: reply.status,
        StatusMessage: String(reply.status),
        Headers: reply.headers ?? {},
        Body: reply.body ?? '',
      };
    },
  };
  const { settings, reply: _reply, replies: _replies, ...environment } = merged;
  const prepared = vm.run(ENVIRONMENT, 'environment', environment, host as Record<string, HostFunction>);
  if (!prepared.ok) throw new Error(`the stubbed environment failed: ${prepared.error}`);

  const result = vm.run(`${loaderWith({ ...CONFIGURED, ...settings })}\ncontinued(KeyInfo)\n`, 'roblox-loader.luau');
  if (!result.ok) outcome.error = result.error;
  return outcome;
}

/** Runs the loader's own SHA-256 function (the text between its two markers) on these bytes. */
function loaderSha256(input: Uint8Array): string {
  const start = LOADER.indexOf('-- SHA-256 (FIPS 180-4)');
  const end = LOADER.indexOf('-- (end of SHA-256)');
  expect(start, 'the loader marks where its SHA-256 starts').toBeGreaterThan(0);
  expect(end, 'and where it ends').toBeGreaterThan(start);
  const result = createLuaVm().run(`${LOADER.slice(start, end)}\nreturn sha256((...))`, 'sha256', input);
  if (!result.ok) throw new Error(result.error);
  return result.value as string;
}

describe('examples/roblox-validate-loader.luau: what it is made of', () => {
  it('is Lua 5.1 syntax, so no Luau-only syntax, and reaches for no globals but these', () => {
    // A Lua 5.1 parser refuses type annotations, compound assignment (+=), continue, and Lua 5.3's // and &.
    const libraryFunctions = new Set<string>();
    const chunk = luaparse.parse(LOADER, {
      luaVersion: '5.1',
      scope: true,
      onCreateNode: (node) => {
        const base = node.base as LuaNode | undefined;
        const member = node.identifier as Identifier | undefined;
        if (node.type === 'MemberExpression' && base?.type === 'Identifier' && member) {
          if (['string', 'math', 'table', 'bit32'].includes(base.name as string)) libraryFunctions.add(`${base.name}.${member.name}`);
        }
      },
    });
    const globals = (chunk.globals ?? []).map((identifier) => identifier.name).sort();
    expect(globals).toEqual(
      [
        // Lua's own
        'error',
        'ipairs',
        'math',
        'pairs',
        'pcall',
        'string',
        'table',
        'tonumber',
        'tostring',
        'type',
        // Luau's and Roblox's
        'bit32',
        'game',
        'task',
        // the buyer's key
        'getgenv',
        'script_key',
        // executor functions, each used only when it exists
        'gethwid',
        'http',
        'http_request',
        'identifyexecutor',
        'request',
        'syn',
      ].sort(),
    );
    // Library functions that Luau and Lua 5.1 both have (none of Lua 5.3's string.pack, math.tointeger, utf8...).
    expect([...libraryFunctions].sort()).toEqual(
      [
        'bit32.band',
        'bit32.bnot',
        'bit32.bxor',
        'bit32.rrotate',
        'bit32.rshift',
        'math.floor',
        'math.random',
        'string.byte',
        'string.char',
        'string.format',
        'string.gsub',
        'string.lower',
        'string.rep',
        'string.sub',
        'table.concat',
      ].sort(),
    );
  });

  it.each([
    ['the empty string', Buffer.alloc(0)],
    ['"abc"', Buffer.from('abc')],
    ['the 448-bit message of FIPS 180-4', Buffer.from('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')],
    ...[55, 56, 63, 64, 65, 119, 120, 128].map((n): [string, Buffer] => [`${n} bytes (a padding boundary)`, Buffer.alloc(n, 'a')]),
    ['a 200-byte text', Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(5).slice(0, 200))],
    ['UTF-8 text', Buffer.from('clé d’accès ✓ ключ 鍵 🔑')],
    ['every byte value 0..255', Buffer.from(Array.from({ length: 256 }, (_, i) => i))],
    ['1,000 bytes of hash output', Buffer.concat(Array.from({ length: 32 }, (_, i) => createHash('sha256').update(String(i)).digest())).subarray(0, 1000)],
  ])('its SHA-256 of %s is the standard one', (_name, input) => {
    expect(loaderSha256(new Uint8Array(input))).toBe(sha256(input));
  });

  it('its SHA-256 gives the known answers of FIPS 180-4 for "" and "abc"', () => {
    expect(loaderSha256(new Uint8Array(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(loaderSha256(new TextEncoder().encode('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('examples/roblox-validate-loader.luau: the request it sends', () => {
  it('POSTs JSON to <base>/v1/loader/validate with project_id, key, fingerprint and executor', () => {
    const { requests, error } = runLoader();
    expect(error).toBeUndefined();
    expect(requests).toHaveLength(1);
    const [sent] = requests;
    expect(sent?.via).toBe('request');
    expect(sent?.Url).toBe(VALIDATE_URL);
    expect(sent?.Method).toBe('POST');
    expect(sent?.Headers).toEqual({ 'Content-Type': 'application/json' });
    expect(JSON.parse(sent?.Body ?? '')).toEqual({
      project_id: PROJECT_ID,
      key: DEFAULTS.genvKey,
      fingerprint: sha256(DEFAULTS.hwid),
      executor: DEFAULTS.executor,
    });
  });

  it('sends the machine id only as its SHA-256: 64 lowercase hex, and the raw id nowhere', () => {
    const [sent] = runLoader().requests;
    const body = JSON.parse(sent?.Body ?? '') as { fingerprint: string };
    expect(body.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(body.fingerprint).toBe(sha256(DEFAULTS.hwid));
    expect(JSON.stringify(sent)).not.toContain(DEFAULTS.hwid);
  });

  it('sends version_id and script_hash when the publisher sets them', () => {
    const scriptHash = sha256('print("the publisher\'s script")');
    const [sent] = runLoader({ settings: { version_id: 'ver_0003', script_hash: scriptHash } }).requests;
    expect(JSON.parse(sent?.Body ?? '')).toMatchObject({ version_id: 'ver_0003', script_hash: scriptHash });
  });

  it('leaves version_id and script_hash out when they are nil', () => {
    const [sent] = runLoader().requests;
    const body = JSON.parse(sent?.Body ?? '') as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['executor', 'fingerprint', 'key', 'project_id']);
  });

  it('takes a base URL with a trailing slash without doubling it', () => {
    const [sent] = runLoader({ settings: { api_base_url: `${BASE_URL}/` } }).requests;
    expect(sent?.Url).toBe(VALIDATE_URL);
  });
});

describe('examples/roblox-validate-loader.luau: where the key, the machine id and the executor come from', () => {
  const bodyOf = (outcome: Outcome) => JSON.parse(outcome.requests[0]?.Body ?? '') as Record<string, string>;

  it('reads the key from getgenv().script_key first, then from the global script_key', () => {
    expect(bodyOf(runLoader({ genvKey: 'FROM-GENV', globalKey: 'FROM-GLOBAL' })).key).toBe('FROM-GENV');
    expect(bodyOf(runLoader({ genvKey: undefined, globalKey: 'FROM-GLOBAL' })).key).toBe('FROM-GLOBAL');
  });

  it('sends the key exactly as the buyer set it', () => {
    expect(bodyOf(runLoader({ genvKey: ' KEY with spaces ' })).key).toBe(' KEY with spaces ');
  });

  it.each([
    ['no key at all', { genvKey: undefined }],
    ['an empty key', { genvKey: '' }],
  ])('with %s, stops before sending anything and says how to set the key', (_name, scenario) => {
    const outcome = runLoader(scenario);
    expect(outcome.requests).toEqual([]);
    expect(outcome.error).toBe('[Key check] No key found. Put  script_key = "YOUR-KEY"  on the line before the loadstring, then run it again.');
    expect(outcome.continuedWith).toBeUndefined();
  });

  it('stops before sending anything when the publisher has not set the base URL or project id', () => {
    const outcome = runLoader({ settings: { project_id: '' } });
    expect(outcome.requests).toEqual([]);
    expect(outcome.error).toMatch(/publisher has not set api_base_url and project_id/);
    expect(outcome.continuedWith).toBeUndefined();
  });

  it.each([
    ['gethwid()', {}, DEFAULTS.hwid],
    ['gethwid() answering an empty string: RbxAnalyticsService:GetClientId()', { hwid: '' }, DEFAULTS.clientId],
    ['no gethwid: RbxAnalyticsService:GetClientId()', { hwid: undefined }, DEFAULTS.clientId],
    ['neither: "user:" and the local player\'s UserId', { hwid: undefined, clientId: undefined }, 'user:42'],
    ['no player either (a server Script): "place:" and the PlaceId', { hwid: undefined, clientId: undefined, userId: undefined }, 'place:1818'],
  ])('fingerprint is the SHA-256 of %s', (_name, scenario: Scenario, machineId) => {
    const outcome = runLoader(scenario);
    expect(outcome.error).toBeUndefined();
    expect(bodyOf(outcome).fingerprint).toBe(sha256(machineId));
  });

  it('executor is the name identifyexecutor() gives without spaces or line breaks around it, or "Roblox" without one', () => {
    expect(bodyOf(runLoader({ executor: 'Wave' })).executor).toBe('Wave');
    expect(bodyOf(runLoader({ executor: ' Wave \n' })).executor).toBe('Wave');
    expect(bodyOf(runLoader({ executor: undefined })).executor).toBe('Roblox');
    expect(bodyOf(runLoader({ executor: '' })).executor).toBe('Roblox');
    expect(bodyOf(runLoader({ executor: '   ' })).executor).toBe('Roblox');
  });

  it('cuts an executor name longer than 100 characters to at most 100, without splitting a character', () => {
    expect(bodyOf(runLoader({ executor: 'X'.repeat(150) })).executor).toBe('X'.repeat(100));
    const cut = bodyOf(runLoader({ executor: `${'X'.repeat(99)}éééé` })).executor ?? '';
    expect(cut).toBe('X'.repeat(99));
    expect([...cut].length).toBeLessThanOrEqual(100);
  });

  it.each(['request', 'http_request', 'syn.request', 'http.request'])("sends through the executor's %s when that is the one it has", (name) => {
    const { requests, error } = runLoader({ requestFunctions: [name] });
    expect(error).toBeUndefined();
    expect(requests.map((r) => r.via)).toEqual([name]);
  });

  it('prefers request, then http_request, then syn.request, then http.request', () => {
    const all = ['http.request', 'syn.request', 'http_request', 'request'];
    expect(runLoader({ requestFunctions: all }).requests[0]?.via).toBe('request');
    expect(runLoader({ requestFunctions: all.slice(0, 3) }).requests[0]?.via).toBe('http_request');
    expect(runLoader({ requestFunctions: all.slice(0, 2) }).requests[0]?.via).toBe('syn.request');
  });

  it('without an executor request function, sends through HttpService:RequestAsync (server Scripts)', () => {
    const { requests, error, continuedWith } = runLoader({ requestFunctions: [], hwid: undefined, executor: undefined });
    expect(error).toBeUndefined();
    expect(requests.map((r) => [r.via, r.Url, r.Method])).toEqual([['HttpService:RequestAsync', VALIDATE_URL, 'POST']]);
    expect(continuedWith).toBeDefined();
  });
});

describe('examples/roblox-validate-loader.luau: what it does with the answer', () => {
  it('on KEY_VALID, lets the script after it run, with key_id, expires_at and uses_left', () => {
    const outcome = runLoader({ reply: json(200, VALID_ANSWER) });
    expect(outcome.error).toBeUndefined();
    expect(outcome.continuedWith).toEqual({ key_id: 'key_01', expires_at: 1_893_456_000, uses_left: 7 });
  });

  it('on KEY_VALID with no limit of uses, uses_left is nil', () => {
    const outcome = runLoader({ reply: json(200, { ...VALID_ANSWER, uses_left: null }) });
    expect(outcome.error).toBeUndefined();
    expect(outcome.continuedWith).toEqual({ key_id: 'key_01', expires_at: 1_893_456_000 });
  });

  const refusal = (code: string): Reply => json(200, { valid: false, code });
  it.each([
    [
      'KEY_REVOKED',
      refusal('KEY_REVOKED'),
      "[Key check] This key has been revoked by the script's publisher. Ask them if you think that is a mistake. (KEY_REVOKED)",
    ],
    [
      'KEY_BANNED with its reason',
      json(200, { valid: false, code: 'KEY_BANNED', reason: 'Shared the key in #general' }),
      `[Key check] This key is banned by the script's publisher: "Shared the key in #general". (KEY_BANNED)`,
    ],
    ['KEY_BANNED without a reason', refusal('KEY_BANNED'), "[Key check] This key is banned by the script's publisher. (KEY_BANNED)"],
    ['KEY_EXPIRED', refusal('KEY_EXPIRED'), "[Key check] This key has expired. Renew it with the script's publisher to keep using the script. (KEY_EXPIRED)"],
    [
      'KEY_HWID_LOCKED',
      refusal('KEY_HWID_LOCKED'),
      '[Key check] This key is locked to another device (or another executor). Ask the seller for a reset (HWID reset), then run the script again here. (KEY_HWID_LOCKED)',
    ],
    ['KEY_OVER_LIMIT', refusal('KEY_OVER_LIMIT'), "[Key check] This key has no uses left. Get a new key from the script's publisher. (KEY_OVER_LIMIT)"],
    [
      'KEY_INVALID',
      refusal('KEY_INVALID'),
      '[Key check] This key is not valid for this script. Check that you copied the whole key, with no spaces, and that it is for this script. (KEY_INVALID)',
    ],
    [
      '429 with Retry-After',
      json(429, { error: 'Too many key checks' }, { 'Retry-After': '30' }),
      '[Key check] Too many key checks right now. Try again in 30 seconds.',
    ],
    [
      '429 with a lower-case retry-after',
      json(429, { error: 'Too many key checks' }, { 'retry-after': '5' }),
      '[Key check] Too many key checks right now. Try again in 5 seconds.',
    ],
    ['429 without Retry-After', json(429, { error: 'Too many key checks' }), '[Key check] Too many key checks right now. Try again in a minute.'],
    [
      '400',
      json(400, { error: 'fingerprint must be 64 lowercase hex characters' }),
      '[Key check] The key server could not read the check: fingerprint must be 64 lowercase hex characters.',
    ],
    ['500', json(500, { error: 'Internal server error' }), '[Key check] The key server answered HTTP 500: Internal server error. Try again later.'],
    ['502 with no JSON', { status: 502, body: '<html>Bad Gateway</html>' }, '[Key check] The key server answered HTTP 502. Try again later.'],
    [
      'a network failure (the request raises)',
      { raise: 'HttpError: ConnectFail' },
      '[Key check] Could not reach the key server (HttpError: ConnectFail). Check your connection and try again.',
    ],
    [
      'a network failure (status 0)',
      { statusZero: "Couldn't resolve host name" },
      "[Key check] Could not reach the key server (Couldn't resolve host name). Check your connection and try again.",
    ],
  ])('on %s, stops the script with a message for the buyer', (_name, reply: Reply, message) => {
    const outcome = runLoader({ reply });
    // A 429 or 5xx is asked again 3 times (the same answer here) before the buyer reads the message.
    const busy = 'status' in reply && (reply.status === 429 || reply.status >= 500);
    expect(outcome.requests).toHaveLength(busy ? 4 : 1);
    expect(outcome.waits).toHaveLength(busy ? 3 : 0);
    expect(outcome.error).toBe(message);
    expect(outcome.continuedWith).toBeUndefined();
  });

  it.each([
    ['valid true with another code', json(200, { valid: true, code: 'KEY_SOMETHING' }), /did not accept this key\. \(KEY_SOMETHING\)$/],
    ['KEY_VALID with valid false', json(200, { valid: false, code: 'KEY_VALID' }), /did not accept this key\. \(KEY_VALID\)$/],
    ['KEY_VALID with valid "true" (a string)', json(200, { valid: 'true', code: 'KEY_VALID' }), /did not accept this key\. \(KEY_VALID\)$/],
    ['an empty object', json(200, {}), /did not accept this key\. \(no answer\)$/],
    ['a 200 that is not JSON', { status: 200, body: 'OK' }, /answer could not be read/],
    ['a 200 with an empty body', { status: 200, body: '' }, /answer could not be read/],
  ])('stops on anything but {"valid": true, "code": "KEY_VALID"}: %s', (_name, reply: Reply, message) => {
    const outcome = runLoader({ reply });
    expect(outcome.error).toMatch(message);
    expect(outcome.continuedWith).toBeUndefined();
  });
});

describe('examples/roblox-validate-loader.luau: a busy server is asked again, a bounded number of times', () => {
  const busy = json(429, { error: 'Too many key checks' }, { 'Retry-After': '7' });

  it("lets the script run after a 429 once it has waited the server's Retry-After (plus under a second of spread)", () => {
    const outcome = runLoader({ replies: [busy, json(200, VALID_ANSWER)] });
    expect(outcome.error).toBeUndefined();
    expect(outcome.requests).toHaveLength(2);
    expect(outcome.waits).toHaveLength(1);
    expect(outcome.waits[0]).toBeGreaterThanOrEqual(7);
    expect(outcome.waits[0]).toBeLessThan(8);
    expect(outcome.continuedWith).toMatchObject({ key_id: 'key_01' });
  });

  it('waits 1, 2, 4 seconds (plus spread) after 503s without Retry-After, and runs once the server answers', () => {
    const outcome = runLoader({ replies: [json(503, { error: 'Service Unavailable' }), json(503, {}), json(502, {}), json(200, VALID_ANSWER)] });
    expect(outcome.waits.map(Math.floor)).toEqual([1, 2, 4]);
    expect(outcome.continuedWith).toMatchObject({ key_id: 'key_01' });
  });

  it('does not wait past max_retry_wait (30 s): a longer Retry-After is shown to the buyer at once', () => {
    const outcome = runLoader({ replies: [json(429, { error: 'Too many key checks' }, { 'Retry-After': '55' }), json(200, VALID_ANSWER)] });
    expect(outcome.requests).toHaveLength(1);
    expect(outcome.error).toBe('[Key check] Too many key checks right now. Try again in 55 seconds.');
  });
});
