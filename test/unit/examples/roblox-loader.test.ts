import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import luaparse, { type Identifier, type Node as LuaNode } from 'luaparse';
import { describe, expect, it } from 'vitest';
import { refusalSentence } from '#domain/scripts';
import { configuredStub } from '#domain/stub-loader';
import type { HttpReply, HttpRequest } from '#loader-runner/roblox';
import { runInRoblox } from '#loader-runner/roblox';
import { runStubLoader, STUB_LOADER } from '#loader-runner/run';

/**
 * examples/roblox-loader.luau, the stub buyers run, in the fengari VM with Roblox and the executor stubbed
 * (loader-runner/roblox.ts) and the service's answers given here: the request it sends (DESIGN.md, "Script
 * delivery"), the copy it keeps and the If-None-Match it sends with it, what runs on 200 and 304, and what the
 * buyer reads on every other answer. test/integration/stub-loader.test.ts runs it against the local stack.
 */

const BASE_URL = 'https://keys.test.example';
const PROJECT_ID = 'prj_0123456789abcdef0123';
const KEY = 'sdk_buyer-key-5f2a9c';
const MACHINE = 'HWID-7C1E-4B2D-9F00';
const sha256 = (input: string) => createHash('sha256').update(input).digest('hex');
const SCRIPT = 'print("the publisher\'s script, WM_0123456789abcdef")';

const reply = (status: number, body: string, headers: Record<string, string> = {}): HttpReply => ({
  StatusCode: status,
  StatusMessage: String(status),
  Headers: headers,
  Body: body,
});
const served = reply(200, SCRIPT, { 'Content-Type': 'text/plain; charset=utf-8', ETag: '"tag-1"', 'X-Version-Number': '3', 'X-Script-SHA256': sha256(SCRIPT) });
const notModified = reply(304, '', { ETag: '"tag-1"', 'X-Script-SHA256': sha256(SCRIPT) });

/** Runs the stub once with these answers in turn; records what it sent. With `files`, keep_copy is on unless said. */
async function stub(answers: HttpReply[], files?: Map<string, string>, keepCopy = files !== undefined) {
  const sent: HttpRequest[] = [];
  const queue = [...answers];
  const run = await runStubLoader({
    baseUrl: BASE_URL,
    projectId: PROJECT_ID,
    key: KEY,
    machineId: MACHINE,
    files,
    keepCopy,
    request: (request) => {
      sent.push(request);
      return queue.shift() ?? { raise: 'no answer scripted' };
    },
    wait: () => undefined,
  });
  return { ...run, sent };
}

describe('examples/roblox-loader.luau: what it is made of', () => {
  it('is Lua 5.1 syntax and reaches for no globals but Roblox, executor and Lua ones', () => {
    const chunk = luaparse.parse(readFileSync(STUB_LOADER, 'utf8'), { luaVersion: '5.1', scope: true, onCreateNode: (_node: LuaNode) => undefined });
    const globals = [...new Set((chunk.globals ?? []).map((identifier: Identifier) => identifier.name))].sort();
    expect(globals).toEqual(
      [
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
        'os',
        'loadstring',
        'bit32',
        'game',
        'task',
        'getgenv',
        'script_key',
        'gethwid',
        'http',
        'http_request',
        'identifyexecutor',
        'request',
        'syn',
        'readfile',
        'writefile',
        'isfile',
        'makefolder',
      ].sort(),
    );
  });
});

describe('examples/roblox-loader.luau: the fetch', () => {
  it('POSTs the key check body to <base>/v1/loader/script, with the fingerprint as the SHA-256 of the machine id', async () => {
    const { sent, error } = await stub([served]);
    expect(error).toBeUndefined();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ Url: `${BASE_URL}/v1/loader/script`, Method: 'POST', Headers: { 'Content-Type': 'application/json' } });
    expect(JSON.parse(sent[0]!.Body)).toEqual({
      project_id: PROJECT_ID,
      key: KEY,
      fingerprint: sha256(MACHINE),
      executor: 'npm run loader',
      timing: { run_in_session: 1 },
    });
    expect(JSON.stringify(sent[0])).not.toContain(MACHINE);
  });

  it('runs the served script with loadstring on 200', async () => {
    expect((await stub([served])).output).toEqual(["the publisher's script, WM_0123456789abcdef"]);
  });

  it('keeps the copy in one file per project and key, named without the key, and sends its ETag as If-None-Match next time; on 304 the copy runs', async () => {
    const files = new Map<string, string>();
    await stub([served], files);
    expect([...files.keys()]).toEqual([`script-cache/${PROJECT_ID}-${sha256(KEY).slice(0, 16)}.lua`]);
    expect([...files.keys()].join()).not.toContain(KEY);
    const second = await stub([notModified], files);
    expect(second.sent[0]?.Headers['If-None-Match']).toBe('"tag-1"');
    expect(second.output).toEqual(["the publisher's script, WM_0123456789abcdef"]);
  });

  it('keeps no copy and sends no If-None-Match unless the publisher set keep_copy, even where the executor has files', async () => {
    const files = new Map<string, string>();
    await stub([served], files, false);
    expect(files.size).toBe(0);
    const { sent } = await stub([served], files, false);
    expect(sent[0]?.Headers['If-None-Match']).toBeUndefined();
  });

  it('never runs a kept copy another script edited: on a 304 whose X-Script-SHA256 it does not match, it fetches the script in full and runs that (issue 33 item 2)', async () => {
    const files = new Map<string, string>();
    await stub([served], files);
    const [path] = [...files.keys()];
    files.set(path ?? '', `"tag-1"\n${SCRIPT}\nprint("injected")`);
    const run = await stub([notModified, served], files);
    expect(run.output).toEqual(["the publisher's script, WM_0123456789abcdef"]);
    expect(run.output.join()).not.toContain('injected');
    expect(run.sent.map((request) => request.Headers['If-None-Match'])).toEqual(['"tag-1"', undefined]);
    expect([...files.values()]).toEqual([`"tag-1"\n${SCRIPT}`]);
  });

  it('runs no kept copy on a 304 that carries no X-Script-SHA256 (a server before the header): it asks for the script', async () => {
    const files = new Map<string, string>();
    await stub([served], files);
    const run = await stub([reply(304, '', { ETag: '"tag-1"' }), served], files);
    expect(run.statuses).toEqual([304, 200]);
    expect(run.output).toEqual(["the publisher's script, WM_0123456789abcdef"]);
  });

  it('sends no If-None-Match where the executor has no files', async () => {
    await stub([served]);
    const { sent } = await stub([served]);
    expect(sent[0]?.Headers).toEqual({ 'Content-Type': 'application/json' });
  });

  it('replaces its copy when the script changed (a rollback or upload answers 200)', async () => {
    const files = new Map<string, string>();
    await stub([served], files);
    const changed = await stub([reply(200, 'print("v4")', { ETag: '"tag-2"' })], files);
    expect(changed.output).toEqual(['v4']);
    expect([...files.values()]).toEqual(['"tag-2"\nprint("v4")']);
  });
});

describe('examples/roblox-loader.luau: what the buyer sees when it does not run', () => {
  it.each([
    [
      "a 403 refusal: the service's sentence and the code",
      reply(403, JSON.stringify({ error: 'This key has been revoked: contact the seller for a new one.', valid: false, code: 'KEY_REVOKED' })),
      '[Loader] This key has been revoked: contact the seller for a new one. (KEY_REVOKED)',
    ],
    [
      "a 403 ban: the service's sentence with the publisher's reason, and the code",
      reply(
        403,
        JSON.stringify({ error: refusalSentence({ code: 'KEY_BANNED', ban: { reason: 'Shared the key', until: null } }), valid: false, code: 'KEY_BANNED' }),
      ),
      '[Loader] This key is banned by the seller: "Shared the key". It lasts until the seller lifts it. (KEY_BANNED)',
    ],
    [
      'a 404: no version yet',
      reply(404, JSON.stringify({ error: 'no version' })),
      "[Loader] The script's publisher has not uploaded the script yet. Try again later.",
    ],
    [
      'a 400',
      reply(400, JSON.stringify({ error: 'fingerprint must be 64 lowercase hex characters' })),
      '[Loader] The script server could not read the request: fingerprint must be 64 lowercase hex characters.',
    ],
    [
      'a network failure',
      { raise: 'HttpError: ConnectFail' } as HttpReply,
      '[Loader] Could not reach the script server (HttpError: ConnectFail). Check your connection and try again.',
    ],
    ['a 200 that is not Lua', reply(200, 'this is not lua ((('), /^\[Loader\] The script \(version nil\) could not be loaded: /],
  ])('on %s, it stops with a message and runs nothing', async (_name, answer, message) => {
    const run = await stub([answer]);
    expect(run.output).toEqual([]);
    if (typeof message === 'string') expect(run.error).toBe(message);
    else expect(run.error).toMatch(message);
  });
});

describe('examples/roblox-loader.luau: a busy server is asked again, a bounded number of times', () => {
  const busy = reply(429, JSON.stringify({ error: 'Too many' }), { 'Retry-After': '12' });
  const failing = reply(500, JSON.stringify({ error: 'Internal error' }));

  it("runs the script after a 429 once it has waited the server's Retry-After (plus under a second of spread)", async () => {
    const run = await stub([busy, served]);
    expect(run.sent).toHaveLength(2);
    expect(run.waits).toHaveLength(1);
    expect(run.waits[0]).toBeGreaterThanOrEqual(12);
    expect(run.waits[0]).toBeLessThan(13);
    expect(run.output).toEqual(["the publisher's script, WM_0123456789abcdef"]);
    expect(run.sent[1]?.Body).toBe(run.sent[0]?.Body);
  });

  it('asks at most 3 more times, then shows the buyer the message and runs nothing', async () => {
    const run = await stub([busy, busy, busy, busy, served]);
    expect(run.sent).toHaveLength(4);
    expect(run.waits).toHaveLength(3);
    expect(run.output).toEqual([]);
    expect(run.error).toBe('[Loader] Too many runs right now. Try again in 12 seconds.');
  });

  it('waits 1, 2 and 4 seconds (plus spread) after a 5xx without Retry-After, then says what the server answered', async () => {
    const run = await stub([failing, failing, failing, failing]);
    expect(run.sent).toHaveLength(4);
    expect(run.waits.map(Math.floor)).toEqual([1, 2, 4]);
    expect(run.error).toBe('[Loader] The script server answered HTTP 500: Internal error. Try again later.');
  });

  it('does not wait past 30 seconds: a longer Retry-After is shown to the buyer at once', async () => {
    const run = await stub([reply(429, JSON.stringify({ error: 'Too many' }), { 'Retry-After': '45' })]);
    expect(run.sent).toHaveLength(1);
    expect(run.waits).toEqual([]);
    expect(run.error).toBe('[Loader] Too many runs right now. Try again in 45 seconds.');
  });

  it.each([
    ['a 403 refusal', reply(403, JSON.stringify({ error: 'revoked', valid: false, code: 'KEY_REVOKED' }))],
    ['a 400', reply(400, JSON.stringify({ error: 'bad' }))],
    ['a 404', reply(404, JSON.stringify({ error: 'no version' }))],
  ])('never asks again after %s', async (_name, answer) => {
    const run = await stub([answer, served]);
    expect(run.sent).toHaveLength(1);
    expect(run.waits).toEqual([]);
  });
});

describe("examples/roblox-loader.luau: the session's timing (issue 32), telemetry only", () => {
  /**
   * `runs` runs in one executor session, each answered by `answers` in turn; each request takes the next of
   * `seconds` on os.clock(); with `files`, keep_copy is on. The bodies' `timing`, in order.
   */
  async function session(runs: number, answers: HttpReply[], seconds: number[], files?: Map<string, string>) {
    let clock = 1000;
    const queue = [...answers];
    const durations = [...seconds];
    const sent: HttpRequest[] = [];
    const run = await runStubLoader({
      baseUrl: BASE_URL,
      projectId: PROJECT_ID,
      key: KEY,
      machineId: MACHINE,
      files,
      keepCopy: files !== undefined,
      runs,
      clock: () => clock,
      request: (request) => {
        sent.push(request);
        clock += durations.shift() ?? 0;
        return queue.shift() ?? { raise: 'no answer scripted' };
      },
      wait: () => undefined,
    });
    return { ...run, sent, timings: sent.map((request) => (JSON.parse(request.Body) as { timing?: unknown }).timing) };
  }

  it("sends each run's number in the session, the previous run's request and the session's first, in whole milliseconds; never its own (not known yet)", async () => {
    const run = await session(3, [served, served, served], [0.4204, 0.1396, 0.15]);
    expect(run.error).toBeUndefined();
    expect(run.output).toHaveLength(3);
    expect(run.timings).toEqual([
      { run_in_session: 1 },
      // The previous run was the first: it is not compared with itself.
      { run_in_session: 2, previous_request_ms: 420 },
      { run_in_session: 3, previous_request_ms: 140, first_request_ms: 420 },
    ]);
  });

  it('compares a request only with the first answered alike: a 304 (no body) is never set against a 200 (the script)', async () => {
    const run = await session(4, [served, notModified, notModified, notModified], [0.9, 0.1, 0.06, 0.05], new Map());
    expect(run.statuses).toEqual([200, 304, 304, 304]);
    expect(run.output).toHaveLength(4);
    expect(run.timings).toEqual([
      { run_in_session: 1 },
      { run_in_session: 2, previous_request_ms: 900 },
      // The previous run's 304 was the session's first 304: nothing to compare it with.
      { run_in_session: 3, previous_request_ms: 100 },
      { run_in_session: 4, previous_request_ms: 60, first_request_ms: 100 },
    ]);
  });

  it("times only a run's first attempt, the one right after the loader line: a retry after a 429's wait is not timed", async () => {
    const busy = reply(429, JSON.stringify({ error: 'Too many' }), { 'Retry-After': '1' });
    const run = await session(2, [busy, served, served], [0.08, 5, 0.2]);
    expect(run.timings).toEqual([{ run_in_session: 1 }, { run_in_session: 1 }, { run_in_session: 2, previous_request_ms: 80 }]);
  });

  it('counts a run whose key was refused, and times its request', async () => {
    const refused = reply(403, JSON.stringify({ error: 'revoked', valid: false, code: 'KEY_REVOKED' }));
    const run = await session(2, [refused, served], [0.3, 0.1]);
    expect(run.timings).toEqual([{ run_in_session: 1 }, { run_in_session: 2, previous_request_ms: 300 }]);
  });

  const source = () => configuredStub(readFileSync(STUB_LOADER, 'utf8'), { api_base_url: BASE_URL, project_id: PROJECT_ID });
  const runWith = async (prelude: string) => {
    const sent: HttpRequest[] = [];
    const output: string[] = [];
    const result = runInRoblox(`${prelude}\nscript_key = ${JSON.stringify(KEY)}\n${source()}`, 'roblox-loader.luau', {
      machineId: MACHINE,
      executor: 'Wave',
      clock: () => 0,
      request: (request) => {
        sent.push(request);
        return served;
      },
      wait: () => undefined,
      print: (line) => output.push(line),
    });
    return { result, output, body: JSON.parse(sent[0]?.Body ?? '{}') as Record<string, unknown> };
  };

  it('sends no timing where the executor has no getgenv (Roblox itself), and runs the script the same', async () => {
    const { result, output, body } = await runWith('getgenv = nil');
    expect(result).toEqual({ ok: true });
    expect(output).toEqual(["the publisher's script, WM_0123456789abcdef"]);
    expect(body).not.toHaveProperty('timing');
  });

  it.each([
    ['a slot another script overwrote', 'getgenv().script_loader_timing = "mine"', { run_in_session: 1 }],
    [
      'a session whose figures are garbage',
      `getgenv().script_loader_timing = { [${JSON.stringify(BASE_URL)}] = { runs = 4, first = {}, previous = 7 } }`,
      undefined,
    ],
  ])('runs the script the same over %s: only the timing suffers', async (_name, prelude, timing) => {
    const { result, output, body } = await runWith(prelude);
    expect(result).toEqual({ ok: true });
    expect(output).toEqual(["the publisher's script, WM_0123456789abcdef"]);
    expect(body.timing).toEqual(timing);
  });
});
