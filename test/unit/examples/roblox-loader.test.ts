import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import luaparse, { type Identifier, type Node as LuaNode } from 'luaparse';
import { describe, expect, it } from 'vitest';
import { refusalSentence } from '#domain/scripts';
import type { HttpReply, HttpRequest } from '#loader-runner/roblox';
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
const served = reply(200, SCRIPT, { 'Content-Type': 'text/plain; charset=utf-8', ETag: '"tag-1"', 'X-Version-Number': '3' });

/** Runs the stub once with these answers in turn; records what it sent. */
async function stub(answers: HttpReply[], files?: Map<string, string>) {
  const sent: HttpRequest[] = [];
  const queue = [...answers];
  const run = await runStubLoader({
    baseUrl: BASE_URL,
    projectId: PROJECT_ID,
    key: KEY,
    machineId: MACHINE,
    files,
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
    expect(JSON.parse(sent[0]!.Body)).toEqual({ project_id: PROJECT_ID, key: KEY, fingerprint: sha256(MACHINE), executor: 'npm run loader' });
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
    const second = await stub([reply(304, '', { ETag: '"tag-1"' })], files);
    expect(second.sent[0]?.Headers['If-None-Match']).toBe('"tag-1"');
    expect(second.output).toEqual(["the publisher's script, WM_0123456789abcdef"]);
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
