import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '#dashboard/commands';
import { type DashboardContext, openContext } from '#dashboard/context';
import { RATE_LIMIT_MESSAGE, rateWindowAt } from '#domain/rate-limit';
import { GATEWAY_RESPONSES } from '#http/gateway-responses';
import { SECURITY_HEADERS } from '#http/responses';
import type { LocalExtension } from '#local/extension';
import { npmCommand } from '#local/npm-command';
import { type LocalServer, startLocalServer } from '#local/server';
import { startLocalStack } from '#local/stack';
import { startTelemetryPipeline, type TelemetryPipeline } from '#local/telemetry-pipeline';
import { KeySchema, VersionSchema, WebhookSchema } from '#schemas/resources';
import { ListKeysResponse, ListVersionsResponse, ListWebhooksResponse } from '#schemas/responses';
import { createTestTable, freePort, scriptFileOf, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * The local server over real HTTP: the real authorizer and handlers on DynamoDB Local, fixtures made with the
 * dashboard's command functions, every endpoint called with fetch.
 */
const REPO_ROOT = new URL('../../', import.meta.url).pathname;
const WATERMARK = '0badc0ffee15dead';

/** Where uploads' scripts go: these tests are not about where scripts live (script-delivery.test.ts is). */
const scripts = new MemoryScriptStore();
let table: TestTable;
let server: LocalServer;
let telemetry: TelemetryPipeline;
let dashboard: { context: DashboardContext; close(): void };
let owner: { ownerId: string; token: string };
let project: string;
let keys: { id: string; watermark: string }[];
let versions: { id: string; version_number: number }[];
let webhookId: string;
let otherOwnersProject: string;
let proProject: string;

/** A dashboard command as the CLI runs it, minus argv and stdout. */
async function dashboardRun<T>(command: string, ...argv: string[]): Promise<T> {
  const run = COMMANDS[command]?.prepare(argv);
  if (!run) throw new Error(`no command ${command}`);
  return (await run(dashboard.context)) as T;
}

async function api(path: string, options: { token?: string | null; method?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? owner.token : options.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${server.url}${path}`, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

/** A stand-in for the extensions the lead plugs in (Discord stand-in, inbox, docs). */
const ping: LocalExtension = async (_req, res, url) => {
  if (url.pathname !== '/_local/ping') return false;
  res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`pong from ${url.origin}${url.search}`);
  return true;
};

const projectPath = (id: string, rest: string) => `/v1/projects/${id}${rest}`;

beforeAll(async () => {
  table = await createTestTable('local-stack');
  telemetry = startTelemetryPipeline({ store: table.stores.telemetry });
  server = await startLocalServer({ port: 0, stores: table.stores, telemetry: telemetry.sink, scripts, extensions: [ping] });
  const opened = openContext({ kind: 'local', endpoint: table.endpoint, tableName: table.tableName });
  dashboard = { context: { ...opened.context, scripts }, close: opened.close };

  owner = await dashboardRun('owner create');
  ({ projectId: project } = await dashboardRun<{ projectId: string }>('project create', '--owner', owner.ownerId, '--name', 'HTTP Script'));
  keys = [
    ...(await dashboardRun<{ keys: typeof keys }>('keys issue', '--project', project, '--count', '3', '--max-uses', '5')).keys,
    ...(await dashboardRun<{ keys: typeof keys }>('keys issue', '--project', project, '--count', '2', '--watermark', WATERMARK)).keys,
  ];
  versions = [];
  for (const [i, notes] of ['first', 'second', 'third'].entries()) {
    versions.push(await dashboardRun('versions upload', '--project', project, '--file', scriptFileOf(1000 * (i + 1)), '--notes', notes));
  }
  ({ id: webhookId } = await dashboardRun<{ id: string }>(
    'webhooks add',
    '--project',
    project,
    '--url',
    'https://discord.com/api/webhooks/123456789012345678/tok',
    '--events',
    'version_deployed,key_abuse',
  ));

  const other = await dashboardRun<{ ownerId: string }>('owner create');
  ({ projectId: otherOwnersProject } = await dashboardRun<{ projectId: string }>('project create', '--owner', other.ownerId, '--name', 'Theirs'));
  ({ projectId: proProject } = await dashboardRun<{ projectId: string }>('project create', '--owner', owner.ownerId, '--name', 'Pro', '--plan', 'pro'));
});

afterAll(async () => {
  await server?.close();
  await telemetry?.stop();
  dashboard?.close();
  await table?.drop();
});

describe('the local server answers every endpoint like the deployed API', () => {
  it('lists keys with exactly the spec fields, in issue order, with the total', async () => {
    const { status, headers, body } = await api(projectPath(project, '/keys'));
    expect(status).toBe(200);
    const listed = ListKeysResponse.parse(body);
    expect(listed.total).toBe(5);
    expect(listed.keys.map((key) => key.id)).toEqual(keys.map((key) => key.id));
    expect(listed.keys[0]).toMatchObject({ tier: 'standard', max_uses: 5, current_uses: 0, revoked: 0 });
    expect(listed.keys[0]?.expires_at).toBe((listed.keys[0]?.issued_at ?? 0) + 30 * 86_400);
    expect(listed.keys[3]).toMatchObject({ watermark: WATERMARK, max_uses: null });
    expect(Object.keys(listed.keys[0] ?? {}).sort()).toEqual(Object.keys(KeySchema.def.shape).sort());
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(headers.get(name)).toBe(value);
    expect(headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('pages keys with limit and offset', async () => {
    const { body } = await api(projectPath(project, '/keys?limit=2&offset=2'));
    expect(ListKeysResponse.parse(body).keys.map((key) => key.id)).toEqual(keys.slice(2, 4).map((key) => key.id));
  });

  it('revokes one key, then shows it revoked', async () => {
    const target = keys[0]?.id;
    expect(await api(projectPath(project, '/keys/revoke'), { body: { key_id: target } })).toMatchObject({ status: 200, body: { ok: true } });
    const { body } = await api(projectPath(project, '/keys?limit=1'));
    expect(ListKeysResponse.parse(body).keys[0]).toMatchObject({ id: target, revoked: 1 });
  });

  it('revokes every key carrying a watermark and counts them', async () => {
    const { status, body } = await api(projectPath(project, '/keys/revoke-bulk'), { body: { watermark: WATERMARK } });
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, revoked_count: 2, complete: true });
  });

  it('lists versions newest first with the current version, then rolls back', async () => {
    const listed = await api(projectPath(project, '/versions'));
    expect(listed.status).toBe(200);
    const parsed = ListVersionsResponse.parse(listed.body);
    expect(parsed.versions.map((v) => v.version_number)).toEqual([3, 2, 1]);
    expect(parsed.versions[2]).toMatchObject({ id: versions[0]?.id, size_bytes: 1000, notes: 'first' });
    expect(Object.keys(parsed.versions[0] ?? {}).sort()).toEqual(Object.keys(VersionSchema.def.shape).sort());
    expect(parsed.current_version_id).toBe(versions[2]?.id);

    const rolled = await api(projectPath(project, '/versions/rollback'), { body: { version_id: versions[0]?.id } });
    expect(rolled).toMatchObject({ status: 200, body: { ok: true, current_version_id: versions[0]?.id } });
    expect(ListVersionsResponse.parse((await api(projectPath(project, '/versions'))).body).current_version_id).toBe(versions[0]?.id);
  });

  it('lists webhooks with events as a JSON string and enabled as 0/1', async () => {
    const { status, body } = await api(projectPath(project, '/webhooks'));
    expect(status).toBe(200);
    const [webhook] = ListWebhooksResponse.parse(body).webhooks;
    expect(webhook).toMatchObject({
      id: webhookId,
      url: 'https://discord.com/api/webhooks/123456789012345678/tok',
      events: '["version_deployed","key_abuse"]',
      enabled: 1,
    });
    expect(Object.keys(webhook ?? {}).sort()).toEqual(Object.keys(WebhookSchema.def.shape).sort());
  });
});

describe('the local server refuses like the deployed API', () => {
  it('answers 401 with the gateway body without an Authorization header or with an unknown token', async () => {
    for (const token of [null, 'sdt_not-a-real-token']) {
      const { status, body } = await api(projectPath(project, '/keys'), { token });
      expect(status).toBe(401);
      expect(body).toEqual({ error: GATEWAY_RESPONSES.UNAUTHORIZED.error });
    }
  });

  it("answers an unknown project and another owner's project with the same 404", async () => {
    const unknown = await api(projectPath('prj_00000000000000000000', '/keys'));
    const foreign = await api(projectPath(otherOwnersProject, '/keys'));
    expect(unknown).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
  });

  it('answers 403 naming the Business plan for a project on another plan', async () => {
    const { status, body } = await api(projectPath(proProject, '/versions'));
    expect(status).toBe(403);
    expect(body.error).toContain('Business plan');
  });

  it('answers 400 for a revoke without key_id, a malformed watermark and a limit over 100', async () => {
    expect(await api(projectPath(project, '/keys/revoke'), { body: {} })).toMatchObject({ status: 400, body: { error: 'key_id is required' } });
    const badWatermark = await api(projectPath(project, '/keys/revoke-bulk'), { body: { watermark: 'WM_0BADC0FFEE15DEAD' } });
    expect(badWatermark.status).toBe(400);
    expect(badWatermark.body.error).toMatch(/watermark/);
    const overLimit = await api(projectPath(project, '/keys?limit=101'));
    expect(overLimit).toMatchObject({ status: 400, body: { error: 'limit must be a whole number between 1 and 100' } });
  });

  it('answers an unknown route with the 404 gateway body, token or not', async () => {
    for (const [path, method] of [
      ['/v1/projects', 'GET'],
      [projectPath(project, '/keys'), 'DELETE'],
      ['/', 'GET'],
    ] as const) {
      const { status, body } = await api(path, { method, token: null });
      expect(status).toBe(404);
      expect(body).toEqual({ error: GATEWAY_RESPONSES.MISSING_AUTHENTICATION_TOKEN.error });
    }
  });

  it("answers 413 for a body over API Gateway's 10 MB payload limit", async () => {
    const { status, body } = await api(projectPath(project, '/keys/revoke'), { body: `{"key_id":"${'x'.repeat(10 * 1024 * 1024)}"}` });
    expect(status).toBe(413);
    expect(body).toEqual({ error: GATEWAY_RESPONSES.REQUEST_TOO_LARGE.error });
  });

  it('answers the 101st request of one token in a minute with 429, Retry-After and the spec message', async () => {
    const { token } = await dashboardRun<{ token: string }>('token create', '--owner', owner.ownerId);
    // All 101 requests must fall in one fixed window; start in a fresh one if this one is nearly over.
    const window = rateWindowAt(Math.floor(Date.now() / 1000));
    if (window.resetSeconds < 20) await new Promise((resolve) => setTimeout(resolve, window.resetSeconds * 1000 + 200));

    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const responses = await Promise.all(Array.from({ length: 10 }, () => api(projectPath(project, '/webhooks'), { token })));
      statuses.push(...responses.map((response) => response.status));
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(100);

    const limited = await api(projectPath(project, '/webhooks'), { token });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: RATE_LIMIT_MESSAGE });
    expect(RATE_LIMIT_MESSAGE).toBe('Rate limit exceeded: 100 requests per minute');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});

describe('the local server itself', () => {
  it('serves /_local/ paths through its extensions first, and answers what none serves with the 404 gateway body', async () => {
    const pong = await fetch(`${server.url}/_local/ping?x=1`);
    expect(await pong.text()).toBe(`pong from ${server.url}?x=1`);
    const { status, body } = await api('/_local/nothing', { token: null });
    expect(status).toBe(404);
    expect(body).toEqual({ error: GATEWAY_RESPONSES.MISSING_AUTHENTICATION_TOKEN.error });
  });

  it('refuses a taken port in one sentence that says what to do', async () => {
    await expect(startLocalServer({ port: server.port, stores: table.stores, telemetry: telemetry.sink, scripts })).rejects.toThrow(
      `Port ${server.port} is in use: set PORT=... or stop the other process`,
    );
  });

  it("keeps the running stack's state file when a second start finds its port taken", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'local-stack-taken-'));
    try {
      const stateFile = join(dir, 'stack.json');
      const running = '{"baseUrl":"the stack that holds the port"}\n';
      await writeFile(stateFile, running);
      const second = startLocalStack({ port: server.port, stateFile, dynamodbEndpoint: table.endpoint, tableName: table.tableName });
      await expect(second).rejects.toThrow(`Port ${server.port} is in use`);
      expect(await readFile(stateFile, 'utf8')).toBe(running);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// ---- npm start's entry as a process ----

const execFileAsync = promisify(execFile);

/** Pids of the DynamoDB Local JVMs below `root` in the process tree. */
async function dynamoDbLocalDescendants(root: number): Promise<number[]> {
  const { stdout } = await execFileAsync('ps', ['-A', '-o', 'pid=,ppid=,args=']);
  const processes = stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .flatMap((match) => (match ? [{ pid: Number(match[1]), ppid: Number(match[2]), args: match[3] ?? '' }] : []));
  const below = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of processes) if (below.has(p.ppid) && !below.has(p.pid)) grew = below.add(p.pid).size > 0;
  }
  return processes.filter((p) => below.has(p.pid) && p.args.includes('DynamoDBLocal')).map((p) => p.pid);
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls `condition` until it holds; the deadline is only a guard against a hang. */
async function eventually(condition: () => Promise<boolean> | boolean, what: string, guardMs = 60_000): Promise<void> {
  const deadline = Date.now() + guardMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Still waiting after ${guardMs / 1000} s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Starts `command`, waits for the banner, and returns the process with its output so far. */
async function startUntilBanner(command: string, args: string[], port: number) {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`${command} exited before it came up:\n${output.stdout}\n${output.stderr}`);
      return output.stdout.includes('Press Ctrl+C to stop.');
    },
    `the local stack to print its banner:\n${output.stdout}\n${output.stderr}`,
    120_000,
  );
  return { child, output, exited };
}

const fileExists = (path: string) =>
  readFile(path, 'utf8').then(
    () => true,
    () => false,
  );

// SIGTERM and a POSIX process tree (ps): Windows has neither.
describe.runIf(process.platform !== 'win32')('npm start', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'local-stack-start-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints a working curl line, writes the state file, and stops DynamoDB Local and exits 0 on SIGTERM', { timeout: 300_000 }, async () => {
    // (The banner's script curl is checked here too: it returns the demo script stamped with the demo key's watermark.)
    const port = await freePort();
    const stateFile = join(dir, 'stack.json');
    const { child, output, exited } = await startUntilBanner(process.execPath, ['--import', 'tsx', 'local/start.ts', '--state-file', stateFile], port);
    try {
      const state = JSON.parse(await readFile(stateFile, 'utf8')) as Record<string, string>;
      expect(Object.keys(state)).toEqual([
        'baseUrl',
        'consoleUrl',
        'token',
        'ownerId',
        'projectId',
        'dynamodbEndpoint',
        'tableName',
        'inboxUrl',
        'demoKey',
        'demoKeyId',
        's3Endpoint',
        'bucketName',
        'discordPublicKey',
      ]);
      expect(state.baseUrl).toBe(`http://127.0.0.1:${port}`);
      expect(state.inboxUrl).toBe(`http://127.0.0.1:${port}/_local/inbox`);
      expect(state.consoleUrl).toBe(`http://127.0.0.1:${port}/console/`);
      // A newcomer opens the console first: the banner names it, and a browser at `/` is sent there.
      expect(output.stdout).toContain(`Console     ${state.consoleUrl}`);
      const root = await fetch(`${state.baseUrl}/`, { headers: { Accept: 'text/html' }, redirect: 'manual' });
      expect(root.status).toBe(302);
      expect(root.headers.get('location')).toBe('/console/');

      const curl = /curl -s -H 'Authorization: Bearer (\S+)' '(\S+\/versions)'/.exec(output.stdout);
      expect(curl?.[1]).toBe(state.token);
      const response = await fetch(curl?.[2] ?? '', { headers: { Authorization: `Bearer ${curl?.[1]}` } });
      expect(response.status).toBe(200);
      expect(ListVersionsResponse.parse(await response.json()).versions).toHaveLength(3);

      const scriptCurl = /curl -s -X POST -H 'Content-Type: application\/json' -d '(\{[^']+\})' '(\S+\/v1\/loader\/script)'/.exec(output.stdout);
      const script = await fetch(scriptCurl?.[2] ?? '', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: scriptCurl?.[1] ?? '' });
      expect(script.status).toBe(200);
      const body = await script.text();
      expect(body).toMatch(/^local WATERMARK = "WM_[0-9a-f]{16}"$/m);
      expect(body).toContain('print("Demo Script v3 running (" .. WATERMARK .. ")")');

      const javaPids = await dynamoDbLocalDescendants(child.pid ?? -1);
      expect(javaPids).toHaveLength(1);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(javaPids.filter(isRunning)).toEqual([]);
      expect(await fileExists(stateFile)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it("stops the whole stack when npm itself gets SIGTERM, although npm's shell does not pass it on", { timeout: 300_000 }, async () => {
    const port = await freePort();
    const stateFile = join(dir, 'npm-stack.json');
    const npm = npmCommand(['start', '--', '--state-file', stateFile]);
    const { child, exited } = await startUntilBanner(npm.command, npm.args, port);
    try {
      const javaPids = await dynamoDbLocalDescendants(child.pid ?? -1);
      expect(javaPids).toHaveLength(1);
      child.kill('SIGTERM');
      await exited;
      await eventually(
        async () => javaPids.filter(isRunning).length === 0 && !(await fileExists(stateFile)),
        'DynamoDB Local to stop and the state file to go',
      );
      expect(
        await fetch(`http://127.0.0.1:${port}/v1/projects/x/keys`).then(
          () => 'answered',
          () => 'refused',
        ),
      ).toBe('refused');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
