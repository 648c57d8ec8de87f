import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_LIFETIME_SECONDS } from '#adapters/dashboard-store';
import { EXIT, runCli } from '#dashboard/cli';
import { parseCommand } from '#dashboard/command';
import { COMMANDS } from '#dashboard/commands';
import { keysIssue } from '#dashboard/commands/keys';
import { ownerCreate } from '#dashboard/commands/owner';
import { projectCreate } from '#dashboard/commands/projects';
import { tokenCreate } from '#dashboard/commands/tokens';
import { versionsUpload } from '#dashboard/commands/versions';
import { webhooksAdd } from '#dashboard/commands/webhooks';
import { CommandError, type DashboardContext, openContext } from '#dashboard/context';
import { hashToken } from '#domain/tokens';
import { npmCommand } from '#local/npm-command';
import { createTestTable, scanTable, scriptFileOf, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';

const REPO_ROOT = new URL('../../', import.meta.url).pathname;
const NOW = 1_750_000_000;

/** Where uploads' scripts go: these tests are not about where scripts live (script-delivery.test.ts is). */
const scripts = new MemoryScriptStore();
let table: TestTable;
let dashboard: { context: DashboardContext; close(): void };

beforeAll(async () => {
  table = await createTestTable('dashboard-cli');
  const opened = openContext({ kind: 'local', endpoint: table.endpoint, tableName: table.tableName });
  dashboard = { context: { ...opened.context, scripts, now: () => NOW }, close: opened.close };
});

afterAll(async () => {
  dashboard?.close();
  await table?.drop();
});

describe('concurrent writers on one project (issue 15.6)', () => {
  // Each issuer opens its own context, with its own DynamoDB client, as eight `keys issue` processes would.
  const contexts: { context: DashboardContext; close(): void }[] = [];
  const openIssuer = () => {
    const opened = openContext({ kind: 'local', endpoint: table.endpoint, tableName: table.tableName });
    contexts.push(opened);
    return { ...opened.context, scripts, now: () => NOW };
  };
  afterAll(() => {
    for (const opened of contexts) opened.close();
  });

  it('eight concurrent `keys issue --count 100` all succeed, with issue numbers 1..800 each used once', async () => {
    const { ownerId } = await ownerCreate.run(dashboard.context, {});
    const { projectId } = await projectCreate.run(dashboard.context, parseCommand(projectCreate, ['--owner', ownerId, '--name', 'Busy', '--plan', 'business']));
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => keysIssue.run(openIssuer(), parseCommand(keysIssue, ['--project', projectId, '--count', '100']))),
    );
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    const issued = results.flatMap((result) => (result.status === 'fulfilled' ? result.value.keys.map((key) => key.id) : []));
    expect(new Set(issued).size).toBe(800);

    const listed = [];
    for (let offset = 0; offset < 800; offset += 100) listed.push(...(await table.stores.projects.listKeysAfter(projectId, offset, 100)));
    // Dense and unique: offset N is the range issueSeq > N, so eight pages of 100 hold every key exactly once.
    expect(listed.map((key) => key.id).sort()).toEqual([...issued].sort());
    expect(await table.stores.projects.listKeysAfter(projectId, 800, 100)).toEqual([]);
    expect((await table.stores.projects.getProject(projectId))?.keyCount).toBe(800);
  });

  it('eight concurrent version uploads all succeed with version numbers 1..8, and the project points at the last one', async () => {
    const { ownerId } = await ownerCreate.run(dashboard.context, {});
    const { projectId } = await projectCreate.run(
      dashboard.context,
      parseCommand(projectCreate, ['--owner', ownerId, '--name', 'Busy uploads', '--plan', 'business']),
    );
    const uploads = await Promise.all(
      Array.from({ length: 8 }, () => versionsUpload.run(openIssuer(), parseCommand(versionsUpload, ['--project', projectId, '--file', scriptFileOf(4096)]))),
    );
    expect(uploads.map((upload) => upload.version_number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const project = await table.stores.projects.getProject(projectId);
    expect(project?.currentVersionId).toBe(uploads.find((upload) => upload.version_number === 8)?.id);
  });
});

describe('dashboard commands against DynamoDB Local', () => {
  it('owner create makes an owner whose token the authorizer will find, storing only its hash', async () => {
    const { ownerId, token } = await ownerCreate.run(dashboard.context, parseCommand(ownerCreate, []));
    expect(await table.stores.dashboard.ownerExists(ownerId)).toBe(true);
    expect((await table.stores.tokens.findToken(hashToken(token)))?.ownerId).toBe(ownerId);
    expect(JSON.stringify(await scanTable(table))).not.toContain(token);
  });

  it('token create adds a second working token to an existing owner', async () => {
    const { ownerId, token: first } = await ownerCreate.run(dashboard.context, {});
    const { token } = await tokenCreate.run(dashboard.context, parseCommand(tokenCreate, ['--owner', ownerId]));
    expect(token).not.toBe(first);
    expect((await table.stores.tokens.findToken(hashToken(token)))?.ownerId).toBe(ownerId);
  });

  it('keys issue --max-fingerprints --note --discord-id write a machine-bound key the API shows in detail', async () => {
    const { ownerId } = await ownerCreate.run(dashboard.context, {});
    const { projectId } = await projectCreate.run(dashboard.context, parseCommand(projectCreate, ['--owner', ownerId, '--name', 'Sold Script']));
    const sold = await keysIssue.run(
      dashboard.context,
      parseCommand(keysIssue, ['--project', projectId, '--max-fingerprints', '2', '--note', 'giveaway winner', '--discord-id', '123456789012345678']),
    );
    const plain = await keysIssue.run(dashboard.context, parseCommand(keysIssue, ['--project', projectId]));
    expect(await table.stores.keys.getKey(projectId, sold.keys[0]!.id)).toMatchObject({
      max_fingerprints: 2,
      fingerprints: [],
      note: 'giveaway winner',
      discord_id: '123456789012345678',
    });
    expect(await table.stores.keys.getKey(projectId, plain.keys[0]!.id)).toMatchObject({
      max_fingerprints: null,
      fingerprints: [],
      note: null,
      discord_id: null,
    });
  });

  it('project create, keys issue, versions upload and webhooks add write what the API reads', async () => {
    const { ownerId } = await ownerCreate.run(dashboard.context, {});
    const { projectId } = await projectCreate.run(
      dashboard.context,
      parseCommand(projectCreate, ['--owner', ownerId, '--name', 'CLI Script', '--plan', 'pro']),
    );
    expect(await table.stores.projects.getProject(projectId)).toMatchObject({ ownerId, name: 'CLI Script', plan: 'pro', keyCount: 0, currentVersionId: null });

    const random = await keysIssue.run(dashboard.context, parseCommand(keysIssue, ['--project', projectId, '--count', '150']));
    const marked = await keysIssue.run(
      dashboard.context,
      parseCommand(keysIssue, ['--project', projectId, '--count', '2', '--watermark', 'abcdef0123456789', '--max-uses', '10', '--expires-at', '1760000000']),
    );
    expect(random.keys).toHaveLength(150);
    expect(new Set(random.keys.map((key) => key.watermark)).size).toBe(150);
    expect(marked.keys.map((key) => key.watermark)).toEqual(['abcdef0123456789', 'abcdef0123456789']);
    const listed = await table.stores.projects.listKeysAfter(projectId, 0, 200);
    expect(listed.map((key) => key.id)).toEqual([...random.keys, ...marked.keys].map((key) => key.id));
    expect(listed[0]).toMatchObject({ tier: 'standard', issued_at: NOW, expires_at: NOW + KEY_LIFETIME_SECONDS, max_uses: null, current_uses: 0, revoked: 0 });
    expect(listed[0]?.user_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(listed[150]).toMatchObject({ watermark: 'abcdef0123456789', max_uses: 10, expires_at: 1_760_000_000 });
    expect(Object.keys(marked.keys[0] ?? {})).toEqual(['id', 'watermark', 'key']);

    const v1 = await versionsUpload.run(dashboard.context, parseCommand(versionsUpload, ['--project', projectId, '--file', scriptFileOf(4096)]));
    const v2 = await versionsUpload.run(
      dashboard.context,
      parseCommand(versionsUpload, ['--project', projectId, '--file', scriptFileOf(5120), '--notes', 'Second']),
    );
    expect([v1.version_number, v2.version_number]).toEqual([1, 2]);
    expect(await table.stores.projects.getProject(projectId)).toMatchObject({ currentVersionId: v2.id, keyCount: 152 });
    expect(await table.stores.projects.listVersions(projectId)).toContainEqual({ id: v1.id, version_number: 1, uploaded_at: NOW, size_bytes: 4096, notes: '' });

    const { id } = await webhooksAdd.run(
      dashboard.context,
      parseCommand(webhooksAdd, [
        '--project',
        projectId,
        '--url',
        'https://discord.com/api/webhooks/1/t',
        '--events',
        'clone_detected,new_executor',
        '--disabled',
      ]),
    );
    expect(await table.stores.projects.listWebhooks(projectId)).toEqual([
      { id, url: 'https://discord.com/api/webhooks/1/t', events: '["clone_detected","new_executor"]', enabled: 0, created_at: NOW, updated_at: NOW },
    ]);
  });

  it.each([
    ['token create', ['--owner', 'own_00000000000000000000'], 'Owner own_00000000000000000000 not found'],
    ['project create', ['--owner', 'own_00000000000000000000', '--name', 'X'], 'Owner own_00000000000000000000 not found'],
    ['keys issue', ['--project', 'prj_00000000000000000000', '--count', '3'], 'Project prj_00000000000000000000 not found'],
    ['versions upload', ['--project', 'prj_00000000000000000000', '--file', scriptFileOf(1)], 'Project prj_00000000000000000000 not found'],
    [
      'webhooks add',
      ['--project', 'prj_00000000000000000000', '--url', 'https://discord.com/api/webhooks/1/t', '--events', 'key_abuse'],
      'Project prj_00000000000000000000 not found',
    ],
  ])('%s naming an unknown owner or project fails and writes nothing', async (command, argv, message) => {
    const before = await scanTable(table);
    const run = COMMANDS[command]?.prepare(argv);
    await expect(run?.(dashboard.context)).rejects.toThrow(CommandError);
    await expect(run?.(dashboard.context)).rejects.toThrow(message);
    expect(await scanTable(table)).toEqual(before);
  });

  it('a command line with one bad flag among good ones is refused before anything is written', async () => {
    const { ownerId } = await ownerCreate.run(dashboard.context, {});
    const { projectId } = await projectCreate.run(dashboard.context, { ownerId, name: 'Guarded', plan: 'business' });
    const before = await scanTable(table);
    expect(() => COMMANDS['keys issue']?.prepare(['--project', projectId, '--count', '10', '--watermark', 'WM_abcdef0123456789'])).toThrow(/--watermark/);
    expect(await scanTable(table)).toEqual(before);
  });

  it("webhooks add refuses the local stand-in's path, or any URL but a Discord webhook's, with the form to use, and writes nothing", async () => {
    const { ownerId } = await ownerCreate.run(dashboard.context, {});
    const { projectId } = await projectCreate.run(dashboard.context, { ownerId, name: 'Hooks', plan: 'business' });
    const before = await scanTable(table);
    const standIn = 'http://127.0.0.1:3000/_local/discord/webhooks/123456789012345678/tok';
    const stderr: string[] = [];
    const code = await runCli({
      argv: ['webhooks', 'add', '--project', projectId, '--url', standIn, '--events', 'version_deployed'],
      env: { DYNAMODB_ENDPOINT: table.endpoint, TABLE_NAME: table.tableName },
      stdout: () => undefined,
      stderr: (text) => stderr.push(text),
    });
    expect(code).toBe(EXIT.usage);
    expect(stderr.join('')).toContain('--url must be a Discord webhook URL, https://discord.com/api/webhooks/ID/TOKEN');
    expect(await scanTable(table)).toEqual(before);
  });
});

describe('dashboard CLI process', () => {
  const execFileAsync = promisify(execFile);
  // Exactly the command the README and DESIGN.md give: npm run -s dashboard -- <command>.
  const cli = (argv: string[]) => {
    const npm = npmCommand(['run', '-s', 'dashboard', '--', ...argv]);
    return execFileAsync(npm.command, npm.args, {
      cwd: REPO_ROOT,
      shell: npm.shell,
      // npm's own warnings (from the machine's npm config) would otherwise share stderr with the CLI.
      env: { ...process.env, DYNAMODB_ENDPOINT: table.endpoint, TABLE_NAME: table.tableName, npm_config_loglevel: 'error' },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );
  };

  it('prints one JSON object and exits 0, or one line on stderr and exits non-zero', async () => {
    const created = await cli(['owner', 'create']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout.endsWith('\n')).toBe(true);
    const owner = JSON.parse(created.stdout) as Record<string, string>;
    expect(Object.keys(owner)).toEqual(['ownerId', 'token', 'tokenId']);
    expect((await table.stores.tokens.findToken(hashToken(owner.token ?? '')))?.ownerId).toBe(owner.ownerId);

    const refused = await cli(['project', 'create', '--owner', owner.ownerId ?? '', '--name', 'X', '--plan', 'gold']);
    expect(refused).toEqual({ code: 2, stdout: '', stderr: '--plan must be one of business, pro, free; got "gold"\n' });
  });
});

describe('token and audit commands, as the CLI prints them', () => {
  /** One CLI run in this process, against this file's table: its exit code, and stdout parsed (it must be one JSON line). */
  async function cli(...argv: string[]) {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runCli({
      argv,
      env: { DYNAMODB_ENDPOINT: table.endpoint, TABLE_NAME: table.tableName },
      stateFile: '/nonexistent/stack.json',
      stdout: (text) => stdout.push(text),
      stderr: (text) => stderr.push(text),
    });
    const out = stdout.join('');
    if (code === EXIT.ok) expect(out).toMatch(/^\{.*\}\n$/);
    return { code, json: out ? (JSON.parse(out) as Record<string, unknown>) : undefined, stderr: stderr.join('') };
  }

  it('owner create, token create, token list, token revoke and audit list print exactly the shapes of the contract', async () => {
    const owner = await cli('owner', 'create');
    expect(owner.code).toBe(EXIT.ok);
    expect(Object.keys(owner.json ?? {})).toEqual(['ownerId', 'token', 'tokenId']);
    const ownerId = String(owner.json?.ownerId);

    const created = await cli('token', 'create', '--owner', ownerId);
    expect(created.json).toEqual({ token: expect.stringMatching(/^sdt_/), tokenId: expect.stringMatching(/^tok_[0-9a-f]{20}$/), scope: 'write' });
    expect(Object.keys(created.json ?? {})).toEqual(['token', 'tokenId', 'scope']);
    const read = await cli('token', 'create', '--owner', ownerId, '--scope', 'read');
    expect(read.json).toMatchObject({ scope: 'read' });

    const listed = await cli('token', 'list', '--owner', ownerId);
    expect(Object.keys(listed.json ?? {})).toEqual(['tokens']);
    const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.tokenId).localeCompare(String(b.tokenId));
    expect((listed.json!.tokens as Record<string, unknown>[]).toSorted(byId)).toEqual(
      [
        { tokenId: owner.json?.tokenId, scope: 'write', createdAt: expect.any(Number) },
        { tokenId: created.json?.tokenId, scope: 'write', createdAt: expect.any(Number) },
        { tokenId: read.json?.tokenId, scope: 'read', createdAt: expect.any(Number) },
      ].toSorted(byId),
    );
    for (const token of listed.json!.tokens as Record<string, unknown>[]) expect(Object.keys(token)).toEqual(['tokenId', 'scope', 'createdAt']);
    const listedText = JSON.stringify(listed.json);
    for (const token of [owner.json?.token, created.json?.token, read.json?.token]) {
      expect(listedText).not.toContain(String(token));
      expect(listedText).not.toContain(hashToken(String(token)));
    }

    expect((await cli('token', 'revoke', '--token-id', String(created.json?.tokenId))).json).toEqual({ tokenId: created.json?.tokenId, revoked: true });
    expect((await cli('token', 'list', '--owner', ownerId)).json?.tokens).toHaveLength(2);

    const { projectId } = await projectCreate.run(dashboard.context, { ownerId, name: 'Audited', plan: 'business' });
    expect(await cli('audit', 'list', '--project', projectId)).toEqual({ code: EXIT.ok, json: { entries: [] }, stderr: '' });
  });

  it('refuses to revoke an unknown or already revoked token with one line on stderr, exit 1, nothing written', async () => {
    const owner = await cli('owner', 'create');
    const tokenId = String(owner.json?.tokenId);
    expect((await cli('token', 'revoke', '--token-id', tokenId)).code).toBe(EXIT.ok);
    const before = await scanTable(table);
    const again = await cli('token', 'revoke', '--token-id', tokenId);
    expect(again).toEqual({
      code: EXIT.failed,
      json: undefined,
      stderr: expect.stringMatching(new RegExp(`^Token ${tokenId} is already revoked \\(at [^\\n]+\\)\\n$`)),
    });
    expect(await cli('token', 'revoke', '--token-id', 'tok_ffffffffffffffffffff')).toEqual({
      code: EXIT.failed,
      json: undefined,
      stderr: 'Token tok_ffffffffffffffffffff not found: "token list --owner ID" shows an owner\'s tokens\n',
    });
    expect(await cli('token', 'revoke', '--token-id', 'sdt_not-an-id')).toMatchObject({ code: EXIT.usage, json: undefined });
    expect(await scanTable(table)).toEqual(before);
  });
});
