import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ID, TOKEN } from '#test-support/sdapi-run-cli';
import { makeKey, makeVersion, makeWebhook, StandInApi } from '#test-support/sdapi-stand-in-api';
import { EXIT } from '../../sdapi/errors';

/** The installed command as a user runs it: `node sdapi/bin.mjs`, a separate process, stdin and stdout pipes. */
const BIN = fileURLToPath(new URL('../../sdapi/bin.mjs', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function sdapi(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  const startedAt = Date.now();
  const env: Record<string, string> = {};
  // Only what node needs from the test's environment, so no SDAPI_* of the developer's leaks in.
  for (const name of ['PATH', 'HOME', 'TMPDIR']) if (process.env[name]) env[name] = process.env[name]!;
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? dir, env: { ...env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill(), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - startedAt });
    });
  });
}

let api: StandInApi;
let stop: () => Promise<void>;
let baseUrl: string;
let dir: string;
let settings: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sdapi-cli-'));
  api = new StandInApi({
    token: TOKEN,
    projectId: PROJECT_ID,
    keys: [makeKey({ watermark: '3f9a1c7e5b2d8046' }), makeKey()],
    versions: [makeVersion(2), makeVersion(1)],
    webhooks: [makeWebhook()],
  });
  ({ baseUrl, close: stop } = await api.listen());
  settings = { SDAPI_BASE_URL: baseUrl, SDAPI_TOKEN: TOKEN, SDAPI_PROJECT: PROJECT_ID };
});

afterAll(async () => {
  await stop?.();
  rmSync(dir, { recursive: true, force: true });
});

describe('sdapi as a command (node sdapi/bin.mjs)', () => {
  it('lists versions as JSON and exits 0', async () => {
    const run = await sdapi(['versions', 'list', '--json'], { env: settings });
    expect(run).toMatchObject({ code: EXIT.ok, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({ versions: api.versions, current_version_id: api.versions[0]!.id, total: api.versions.length });
  });

  it("exits 1 with the API's error text, and never prints the token even with --verbose", async () => {
    const run = await sdapi(['keys', 'revoke', 'key_missing', '--verbose'], { env: settings });
    expect(run.code).toBe(EXIT.apiError);
    expect(run.stderr).toContain(`-> POST ${baseUrl}/v1/projects/${PROJECT_ID}/keys/revoke {"key_id":"key_missing"}`);
    expect(run.stderr).toContain('sdapi: Key key_missing not found in this project (HTTP 404');
    expect(run.stdout + run.stderr).not.toContain(TOKEN);
  });

  it('exits 2 on a usage error', async () => {
    const run = await sdapi(['keys', 'list', '--limit', 'many'], { env: settings });
    expect(run).toMatchObject({ code: EXIT.usage, stdout: '', stderr: 'sdapi: --limit must be a whole number from 1 to 100\n' });
  });

  it('waits out a real 429 Retry-After, then succeeds', async () => {
    api.rateLimitQueue.push(1);
    const run = await sdapi(['webhooks', 'list'], { env: settings });
    expect(run.code).toBe(EXIT.ok);
    expect(run.stderr).toBe('sdapi: rate limited (429); waiting 1 s before attempt 2 of 5\n');
    expect(run.stdout).toContain('whk_2d8f4a6c0e1b3795c4e8');
    const [refused, accepted] = api.requests.filter((request) => request.path.endsWith('/webhooks')).slice(-2);
    expect(accepted!.at - refused!.at).toBeGreaterThanOrEqual(1000);
  });

  it('takes its settings from .local/stack.json when nothing else gives them', async () => {
    const cwd = join(dir, 'checkout');
    mkdirSync(join(cwd, '.local'), { recursive: true });
    writeFileSync(join(cwd, '.local', 'stack.json'), JSON.stringify({ baseUrl, token: TOKEN, projectId: PROJECT_ID, ownerId: 'own_x' }));
    const run = await sdapi(['keys', 'list', '--verbose'], { cwd });
    expect(run.code).toBe(EXIT.ok);
    expect(run.stderr).toContain('sdapi: API token from .local/stack.json');
    expect(run.stdout).toContain('Keys 1-2 of 2.');
    expect(run.stdout + run.stderr).not.toContain(TOKEN);
  });

  it('refuses to revoke a leak without a terminal or --yes', async () => {
    const file = join(dir, 'dump.lua');
    writeFileSync(file, 'x = "WM_3f9a1c7e5b2d8046"');
    const refused = await sdapi(['leak', file], { env: settings });
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain('Not revoking without confirmation');
    const confirmed = await sdapi(['leak', file, '--yes'], { env: settings });
    expect(confirmed.code).toBe(EXIT.ok);
    expect(confirmed.stdout).toContain('Revoked 1 key carrying 3f9a1c7e5b2d8046 (revoked_count 1).');
  });
});
