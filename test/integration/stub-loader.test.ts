import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '#dashboard/commands';
import { openContext } from '#dashboard/context';
import { REFUSAL_SENTENCES, refusalSentence } from '#domain/scripts';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';
import { runCli } from '#test-support/sdapi-run-cli';
import { EXIT } from '../../sdapi/errors';

/**
 * `npm run loader` (examples/roblox-loader.luau, the stub buyers run, in the fengari VM) against a started local
 * stack: the served demo script runs and prints its version and the key's watermark; a repeat runs the kept copy
 * on a 304; a revoked key prints the refusal sentence. The runner is a child process, as `npm run loader` is: its
 * requests are synchronous to the VM, and this process serves them.
 */

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url);

let stack: LocalStack;
let dir: string;

async function loader(key: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'loader-runner/run.ts', '--key', key, '--state-file', stack.stateFile], {
      cwd: ROOT,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stub-loader-'));
  stack = await startLocalStack({
    port: await freePort(),
    dynamodbEndpoint: dynamodbEndpoint(),
    tableName: `local-stub-${Date.now()}`,
    stateFile: join(dir, 'stack.json'),
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run loader on a started local stack', () => {
  it("prints the demo script's output: its version and the demo key's watermark; a repeat fetches it again (the hosted stub keeps no copy)", async () => {
    const dashboard = openContext({ kind: 'local', endpoint: stack.dynamodbEndpoint, tableName: stack.tableName });
    try {
      const first = await loader(stack.demoKey);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^Demo Script v3 running \(WM_[0-9a-f]{16}\)\n$/);
      expect(first.stderr).toContain('HTTP 200');
      const repeat = await loader(stack.demoKey);
      expect(repeat.stdout).toBe(first.stdout);
      // keep_copy is off in the hosted stub (issue 33): no copy in the executor's shared workspace, no 304.
      expect(repeat.stderr).toContain('HTTP 200');
      expect(repeat.stderr).not.toContain('kept copy');

      const { keys } = (await COMMANDS['keys issue']!.prepare(['--project', stack.projectId])(dashboard.context)) as { keys: { id: string; key: string }[] };
      const [revoked] = keys;
      const response = await fetch(`${stack.baseUrl}/v1/projects/${stack.projectId}/keys/revoke`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${stack.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ key_id: revoked!.id }),
      });
      expect(response.status).toBe(200);
      const refused = await loader(revoked!.key);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe(`[Loader] ${REFUSAL_SENTENCES.KEY_REVOKED} (KEY_REVOKED)\n`);
    } finally {
      dashboard.close();
    }
  });

  it("a key banned for a week prints the publisher's reason and when the ban ends; after sdapi keys unban it runs again", async () => {
    const dashboard = openContext({ kind: 'local', endpoint: stack.dynamodbEndpoint, tableName: stack.tableName });
    try {
      const { keys } = (await COMMANDS['keys issue']!.prepare(['--project', stack.projectId])(dashboard.context)) as { keys: { id: string; key: string }[] };
      const [key] = keys;
      if (!key) throw new Error('keys issue issued no key');
      const until = Math.floor(Date.now() / 1000) + 7 * 86_400;
      const response = await fetch(`${stack.baseUrl}/v1/projects/${stack.projectId}/keys/ban`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${stack.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ key_id: key.id, reason: 'Shared the key in #general', until }),
      });
      expect(response.status).toBe(200);
      const banned = await loader(key.key);
      expect(banned.code).toBe(1);
      expect(banned.stdout).toBe(`[Loader] ${refusalSentence({ code: 'KEY_BANNED', ban: { reason: 'Shared the key in #general', until } })} (KEY_BANNED)\n`);

      const sdapi = (argv: string[]) =>
        runCli(argv, { api: { fetch: globalThis.fetch }, env: { SDAPI_BASE_URL: stack.baseUrl, SDAPI_TOKEN: stack.token, SDAPI_PROJECT: stack.projectId } });
      expect(await sdapi(['keys', 'unban', key.id])).toMatchObject({ code: EXIT.ok, stdout: `Unbanned key ${key.id}.\n` });
      const unbanned = await loader(key.key);
      expect(unbanned.code).toBe(0);
      expect(unbanned.stdout).toMatch(/^Demo Script v3 running \(WM_[0-9a-f]{16}\)\n$/);

      // The rest of sdapi's lifecycle commands, on the same key.
      const rebanned = await sdapi(['keys', 'ban', key.id, '--reason', 'Chargeback', '--for', '1d']);
      expect(rebanned.code, rebanned.stderr).toBe(EXIT.ok);
      expect(rebanned.stdout).toMatch(/^Banned key key_\w+ until \d{4}-\d\d-\d\d \d\d:\d\dZ\.\n$/);
      expect((await loader(key.key)).stdout).toContain('"Chargeback"');
      const extended = await sdapi(['keys', 'extend', key.id, '--duration', 'lifetime']);
      expect(extended).toMatchObject({ code: EXIT.ok, stdout: `Key ${key.id} now expires 2100-01-01 00:00Z.\n` });
      const edited = await sdapi(['keys', 'edit', key.id, '--note', 'renewed', '--max-uses', 'none', '--json']);
      expect(edited.code, edited.stderr).toBe(EXIT.ok);
      expect(JSON.parse(edited.stdout)).toMatchObject({ key: { id: key.id, note: 'renewed', max_uses: null, ban: { reason: 'Chargeback' } } });
      expect(await sdapi(['keys', 'edit', key.id])).toMatchObject({ code: EXIT.usage });
    } finally {
      dashboard.close();
    }
  });
});
