import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS, keysIssue, ownerCreate, parseCommand, projectCreate, tokenCreate, versionsUpload, webhooksAdd } from '#dashboard/commands';
import { CommandError, type DashboardContext, openContext } from '#dashboard/context';
import { hashToken } from '#domain/tokens';
import { npmCommand } from '#local/npm-command';
import { KEY_LIFETIME_SECONDS } from '#store/dashboard-store';
import { createTestTable, type TestTable } from '#test-support/fixtures';

const REPO_ROOT = new URL('../../', import.meta.url).pathname;
const NOW = 1_750_000_000;

let table: TestTable;
let dashboard: { context: DashboardContext; close(): void };

/** Everything in the table, to show that a refused command wrote nothing. */
async function scanAll(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.db.send(new ScanCommand({ TableName: table.tableName, ConsistentRead: true, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

beforeAll(async () => {
  table = await createTestTable('dashboard-cli');
  const opened = openContext({ kind: 'local', endpoint: table.endpoint, tableName: table.tableName });
  dashboard = { context: { ...opened.context, now: () => NOW }, close: opened.close };
});

afterAll(async () => {
  dashboard?.close();
  await table?.drop();
});

describe('dashboard commands against DynamoDB Local', () => {
  it('owner create makes an owner whose token the authorizer will find, storing only its hash', async () => {
    const { ownerId, token } = await ownerCreate.run(dashboard.context, parseCommand(ownerCreate, []));
    expect(await table.stores.dashboard.ownerExists(ownerId)).toBe(true);
    expect((await table.stores.tokens.findToken(hashToken(token)))?.ownerId).toBe(ownerId);
    expect(JSON.stringify(await scanAll())).not.toContain(token);
  });

  it('token create adds a second working token to an existing owner', async () => {
    const { ownerId, token: first } = await ownerCreate.run(dashboard.context, {});
    const { token } = await tokenCreate.run(dashboard.context, parseCommand(tokenCreate, ['--owner', ownerId]));
    expect(token).not.toBe(first);
    expect((await table.stores.tokens.findToken(hashToken(token)))?.ownerId).toBe(ownerId);
  });

  it('project create, keys issue, versions upload and webhooks add write what the API reads', async () => {
    const { ownerId } = await ownerCreate.run(dashboard.context, {});
    const { projectId } = await projectCreate.run(dashboard.context, parseCommand(projectCreate, ['--owner', ownerId, '--name', 'CLI Script', '--plan', 'pro']));
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

    const v1 = await versionsUpload.run(dashboard.context, parseCommand(versionsUpload, ['--project', projectId, '--size-bytes', '4096']));
    const v2 = await versionsUpload.run(dashboard.context, parseCommand(versionsUpload, ['--project', projectId, '--size-bytes', '5120', '--notes', 'Second']));
    expect([v1.version_number, v2.version_number]).toEqual([1, 2]);
    expect(await table.stores.projects.getProject(projectId)).toMatchObject({ currentVersionId: v2.id, keyCount: 152 });
    expect(await table.stores.projects.listVersions(projectId)).toContainEqual({ id: v1.id, version_number: 1, uploaded_at: NOW, size_bytes: 4096, notes: '' });

    const { id } = await webhooksAdd.run(
      dashboard.context,
      parseCommand(webhooksAdd, ['--project', projectId, '--url', 'https://discord.com/api/webhooks/1/t', '--events', 'clone_detected,new_executor', '--disabled']),
    );
    expect(await table.stores.projects.listWebhooks(projectId)).toEqual([
      { id, url: 'https://discord.com/api/webhooks/1/t', events: '["clone_detected","new_executor"]', enabled: 0, created_at: NOW, updated_at: NOW },
    ]);
  });

  it.each([
    ['token create', ['--owner', 'own_00000000000000000000'], 'Owner own_00000000000000000000 not found'],
    ['project create', ['--owner', 'own_00000000000000000000', '--name', 'X'], 'Owner own_00000000000000000000 not found'],
    ['keys issue', ['--project', 'prj_00000000000000000000', '--count', '3'], 'Project prj_00000000000000000000 not found'],
    ['versions upload', ['--project', 'prj_00000000000000000000', '--size-bytes', '1'], 'Project prj_00000000000000000000 not found'],
    ['webhooks add', ['--project', 'prj_00000000000000000000', '--url', 'https://discord.com/api/webhooks/1/t', '--events', 'key_abuse'], 'Project prj_00000000000000000000 not found'],
  ])('%s naming an unknown owner or project fails and writes nothing', async (command, argv, message) => {
    const before = await scanAll();
    const run = COMMANDS[command]?.prepare(argv);
    await expect(run?.(dashboard.context)).rejects.toThrow(CommandError);
    await expect(run?.(dashboard.context)).rejects.toThrow(message);
    expect(await scanAll()).toEqual(before);
  });

  it('a command line with one bad flag among good ones is refused before anything is written', async () => {
    const { ownerId } = await ownerCreate.run(dashboard.context, {});
    const { projectId } = await projectCreate.run(dashboard.context, { ownerId, name: 'Guarded', plan: 'business' });
    const before = await scanAll();
    expect(() => COMMANDS['keys issue']?.prepare(['--project', projectId, '--count', '10', '--watermark', 'WM_abcdef0123456789'])).toThrow(/--watermark/);
    expect(await scanAll()).toEqual(before);
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
    expect(Object.keys(owner)).toEqual(['ownerId', 'token']);
    expect((await table.stores.tokens.findToken(hashToken(owner.token ?? '')))?.ownerId).toBe(owner.ownerId);

    const refused = await cli(['project', 'create', '--owner', owner.ownerId ?? '', '--name', 'X', '--plan', 'gold']);
    expect(refused).toEqual({ code: 2, stdout: '', stderr: '--plan must be one of business, pro, free; got "gold"\n' });
  });
});
