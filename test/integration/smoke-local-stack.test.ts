import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';
import { STEP_NAMES } from '../../scripts/smoke';

/**
 * `npm run smoke` against a started local stack, as CI runs it against `npm start` and a publisher after
 * `npm run deploy` (scripts/smoke.ts): every step's line passes, the upload from Chromium when one is installed.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
let stack: LocalStack;
let stateFile: string;

/** The smoke run's exit code and output; a failing run is an answer here, not an exception. */
async function smoke(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run('npm', ['run', '-s', 'smoke', '--', ...args], { cwd: ROOT, timeout: 240_000 });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '' };
  }
}

beforeAll(async () => {
  stateFile = `/tmp/smoke-local-stack-${process.pid}.json`;
  stack = await startLocalStack({ port: await freePort(), dynamodbEndpoint: dynamodbEndpoint(), tableName: `smoke-${Date.now()}`, stateFile });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

describe('npm run smoke against the local stack', () => {
  it('passes every step, one line each in the documented order, exits 0 and rolls the demo back to its version', async () => {
    const before = (await (
      await fetch(`${stack.baseUrl}/v1/projects/${stack.projectId}/versions`, { headers: { Authorization: `Bearer ${stack.token}` } })
    ).json()) as {
      current_version_id: string;
    };
    const { code, stdout } = await smoke('--state-file', stateFile);
    const lines = stdout.split('\n').filter((line) => /^(ok|FAIL|skip) /.test(line));
    expect(lines.map((line) => line.split(/\s+/)[1])).toEqual([...STEP_NAMES]);
    expect(
      lines.filter((line) => !line.startsWith('ok ')),
      stdout,
    ).toEqual([]);
    expect(stdout).toContain('All 10 steps passed.');
    expect(stdout).toMatch(/^ok {4}discord-ping +a signed PING answered PONG$/m);
    expect(stdout).toMatch(/^ok {4}upload +version \d+ through the presigned URL .* PUT from (Chromium on the console page|Node)/m);
    expect(code).toBe(0);

    const after = (await (
      await fetch(`${stack.baseUrl}/v1/projects/${stack.projectId}/versions`, { headers: { Authorization: `Bearer ${stack.token}` } })
    ).json()) as {
      current_version_id: string;
    };
    expect(after.current_version_id).toBe(before.current_version_id);
    expect(stdout).toContain('cleanup: rolled back to the version current before');
  });

  it('exits 1 with a FAIL line saying what failed when the token is wrong, and skips what needed it', async () => {
    const { code, stdout } = await smoke('--url', stack.baseUrl, '--token', 'sdt_not-a-token');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}sign-in +POST \/console\/api\/session answered 401: /m);
    expect(stdout).toMatch(/^skip {2}upload +needs sign-in, which did not pass$/m);
    expect(stdout).toContain('9 of 10 steps did not pass.');
  });
});
