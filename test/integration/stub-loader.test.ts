import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '#dashboard/commands';
import { openContext } from '#dashboard/context';
import { REFUSAL_SENTENCES } from '#domain/scripts';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';

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
  it("prints the demo script's output: its version and the demo key's watermark; a repeat runs the kept copy on a 304", async () => {
    const dashboard = openContext({ kind: 'local', endpoint: stack.dynamodbEndpoint, tableName: stack.tableName });
    try {
      const first = await loader(stack.demoKey);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^Demo Script v3 running \(WM_[0-9a-f]{16}\)\n$/);
      expect(first.stderr).toContain('HTTP 200');
      const repeat = await loader(stack.demoKey);
      expect(repeat.stdout).toBe(first.stdout);
      expect(repeat.stderr).toContain('HTTP 304, the kept copy ran');

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
});
