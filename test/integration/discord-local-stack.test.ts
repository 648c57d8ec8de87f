import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT, runCli } from '#dashboard/cli';
import { stubUrlOf } from '#http/public-routes';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';

/**
 * Buyers' Discord commands on a started local stack, over HTTP (DESIGN.md, "Buyers help themselves in Discord"):
 * `discord simulate` signs each command with the stack's key pair, which the demo project is linked to; the buyer
 * redeems a key bound to one machine, is locked out on a new machine, resets in Discord, and the loader (the two
 * lines, the hosted stub fetched from the stack) then runs there. `npm run loader` is a child process: its requests
 * are synchronous to the VM, and this process serves them.
 */

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url);
const BUYER = '123456789012345678';

let stack: LocalStack;
let dir: string;

/** One dashboard command against the stack, found through its state file. */
async function dashboard(...argv: string[]): Promise<{ code: number; out: Record<string, unknown>; err: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli({ argv, env: {}, stateFile: stack.stateFile, stdout: (text) => stdout.push(text), stderr: (text) => stderr.push(text) });
  return { code, out: code === EXIT.ok ? (JSON.parse(stdout.join('')) as Record<string, unknown>) : {}, err: stderr.join('') };
}

const simulate = async (command: string, ...flags: string[]) => {
  const { code, out, err } = await dashboard('discord', 'simulate', '--project', stack.projectId, '--user', BUYER, '--command', command, ...flags);
  expect(code, err).toBe(EXIT.ok);
  expect(out).toMatchObject({ type: 4, data: { flags: 64 } });
  return (out.data as { content: string }).content;
};

async function loader(key: string, machine: string): Promise<{ code: number; stdout: string }> {
  const args = ['--import', 'tsx', 'loader-runner/run.ts', '--key', key, '--fingerprint', machine, '--state-file', stack.stateFile];
  try {
    const { stdout } = await run(process.execPath, args, { cwd: ROOT });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'discord-local-'));
  stack = await startLocalStack({
    port: await freePort(),
    dynamodbEndpoint: dynamodbEndpoint(),
    tableName: `local-discord-${Date.now()}`,
    stateFile: join(dir, 'stack.json'),
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('discord simulate on npm start', () => {
  it('serves the hosted stub with the stack as its base URL, and an ETag that answers 304', async () => {
    const url = stubUrlOf(stack.baseUrl, stack.projectId);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain(`\tapi_base_url = "${stack.baseUrl}",`);
    expect(text).toContain(`\tproject_id = "${stack.projectId}",`);
    const etag = response.headers.get('etag') ?? '';
    expect((await fetch(url, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    expect((await fetch(stubUrlOf(stack.baseUrl, 'prj_00000000000000000000'))).status).toBe(404);
  });

  it('redeems, shows the status, resets the machine, and the loader then runs on the new machine', async () => {
    const issued = await dashboard('keys', 'issue', '--project', stack.projectId, '--max-fingerprints', '1');
    const [key] = issued.out.keys as { id: string; key: string }[];
    if (!key) throw new Error('no key issued');

    expect((await loader(key.key, 'old machine')).stdout).toMatch(/^Demo Script v3 running \(WM_[0-9a-f]{16}\)\n$/);
    expect(await simulate('redeem', '--key', key.key)).toContain(`\`${key.id}\` is linked to your account`);
    expect(await simulate('status')).toContain(`\`${key.id}\`: active`);

    const locked = await loader(key.key, 'new machine');
    expect(locked.code).not.toBe(0);
    expect(locked.stdout).toContain('KEY_HWID_LOCKED');

    expect(await simulate('resethwid')).toContain(`\`${key.id}\`: 1 machine unbound`);
    expect((await loader(key.key, 'new machine')).stdout).toMatch(/^Demo Script v3 running/);
    expect(await simulate('resethwid')).toContain('can be reset again');
  }, 60_000);

  it('answers the loader command with the two lines and the hosted stub on the stack', async () => {
    expect(await simulate('loader')).toContain(`loadstring(game:HttpGet("${stubUrlOf(stack.baseUrl, stack.projectId)}"))()`);
  });

  it('links a new project with one command, and after unlink the endpoint refuses the signature', async () => {
    const ownerId = (await dashboard('owner', 'create')).out.ownerId as string;
    const projectId = (await dashboard('project', 'create', '--owner', ownerId, '--name', 'Linked later')).out.projectId as string;
    const linked = await dashboard('discord', 'link', '--project', projectId, '--public-key', stack.discordPublicKey, '--reset-cooldown', '3600');
    expect(linked.out).toEqual({ interactions_url: `${stack.baseUrl}/v1/discord/interactions/${projectId}`, reset_cooldown: 3600 });
    const ping = await dashboard('discord', 'simulate', '--project', projectId, '--user', BUYER, '--command', 'status');
    expect(ping.code).toBe(EXIT.ok);
    expect((await dashboard('discord', 'unlink', '--project', projectId)).out).toEqual({ ok: true });
    const refused = await dashboard('discord', 'simulate', '--project', projectId, '--user', BUYER, '--command', 'status');
    expect(refused.code).toBe(EXIT.failed);
    expect(refused.err).toContain('401');
    const audit = await dashboard('audit', 'list', '--project', projectId);
    expect((audit.out.entries as { action: string }[]).map((entry) => entry.action)).toEqual(['discord.unlink', 'discord.link']);
  });

  it('refuses bad link input with one line and writes nothing', async () => {
    const bad = await dashboard('discord', 'link', '--project', stack.projectId, '--public-key', 'abc');
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.err).toMatch(/^--public-key must be .*64 hex characters/);
    const cooldown = await dashboard('discord', 'link', '--project', stack.projectId, '--public-key', stack.discordPublicKey, '--reset-cooldown', '60');
    expect(cooldown.code).toBe(EXIT.usage);
    expect(await simulate('loader')).toContain('script_key');
  });
});
