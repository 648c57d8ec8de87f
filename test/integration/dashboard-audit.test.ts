import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { COMMANDS } from '#dashboard/commands';
import { type DashboardContext, localCaller, openContext } from '#dashboard/context';
import { createTestTable, seedOwner, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * The dashboard's writes in the audit trail (issue 21: they wrote none): `keys issue`, `webhooks add`,
 * `versions upload` and `token migrate`, each entered after it succeeded, with the identity that ran it (locally the
 * OS user; in AWS the STS caller ARN, see test/unit/dashboard/audited.test.ts), and with no secret in the entry.
 */
const WEBHOOK_URL = 'https://discord.com/api/webhooks/1234567890123456789/dashboard-audit-webhook-token';

let table: TestTable;
let dashboard: { context: DashboardContext; close(): void };
let projectId: string;
let scriptDir: string;
let scriptFile: string;
const warnings: string[] = [];

async function run<T>(context: DashboardContext, command: string, ...argv: string[]): Promise<T> {
  const prepared = COMMANDS[command]?.prepare(argv);
  if (!prepared) throw new Error(`no command ${command}`);
  return (await prepared(context)) as T;
}

beforeAll(async () => {
  table = await createTestTable('dashboard-audit');
  const opened = openContext({ kind: 'local', endpoint: table.endpoint, tableName: table.tableName });
  dashboard = { context: { ...opened.context, scripts: new MemoryScriptStore(), warn: (line) => void warnings.push(line) }, close: opened.close };
  scriptDir = await mkdtemp(join(tmpdir(), 'dashboard-audit-'));
  scriptFile = join(scriptDir, 'script.luau');
  await writeFile(scriptFile, 'print("audited")\n');
  const owner = await seedOwner(table.stores);
  ({ projectId } = await run<{ projectId: string }>(dashboard.context, 'project create', '--owner', owner.ownerId, '--name', 'Audited'));
});

afterAll(async () => {
  dashboard?.close();
  if (scriptDir) await rm(scriptDir, { recursive: true, force: true });
  await table?.drop();
});

const trail = () => table.stores.audit.list({ projectId }, 100);

describe("the dashboard's writes in the audit trail", () => {
  it('enters keys issue, webhooks add and versions upload in the project trail with the caller, ids and counts, and no raw key or webhook token', async () => {
    const { keys } = await run<{ keys: { id: string; key: string }[] }>(dashboard.context, 'keys issue', '--project', projectId, '--count', '3');
    const { id: webhookId } = await run<{ id: string }>(
      dashboard.context,
      'webhooks add',
      '--project',
      projectId,
      '--url',
      WEBHOOK_URL,
      '--events',
      'version_deployed,key_abuse',
    );
    const version = await run<{ id: string; version_number: number }>(
      dashboard.context,
      'versions upload',
      '--project',
      projectId,
      '--file',
      scriptFile,
      '--notes',
      'audited',
    );

    const entries = await trail();
    const byDashboard = { projectId, source: 'dashboard', status: 'completed', tokenId: null, requestId: null, caller: localCaller() };
    expect(entries.map(({ entryId: _id, at: _at, ...entry }) => entry)).toEqual([
      { ...byDashboard, action: 'version.upload', target: {}, outcome: { version_id: version.id, version_number: version.version_number } },
      { ...byDashboard, action: 'webhook.add', target: { events: 'version_deployed,key_abuse', enabled: true }, outcome: { webhook_id: webhookId } },
      { ...byDashboard, action: 'key.issue', target: {}, outcome: { issued_count: 3, first_key_id: keys[0]?.id } },
    ]);
    const text = JSON.stringify(entries);
    for (const secret of [...keys.map((key) => key.key), WEBHOOK_URL, 'dashboard-audit-webhook-token']) expect(text).not.toContain(secret);
  });

  it('enters nothing for a command refused on its input or its project', async () => {
    const before = await trail();
    await expect(run(dashboard.context, 'keys issue', '--project', 'prj_ffffffffffffffffffff')).rejects.toThrow('not found');
    await expect(run(dashboard.context, 'webhooks add', '--project', projectId, '--url', 'not a url', '--events', 'key_abuse')).rejects.toThrow('--url');
    expect(await trail()).toEqual(before);
    expect(await table.stores.audit.list({ projectId: 'prj_ffffffffffffffffffff' }, 10)).toEqual([]);
  });

  it('still answers with the keys it issued when the entry cannot be written, and says so on stderr', async () => {
    const record = vi.spyOn(table.stores.audit, 'record').mockRejectedValueOnce(new Error('ProvisionedThroughputExceededException'));
    try {
      const context = { ...dashboard.context, stores: table.stores };
      const { keys } = await run<{ keys: { id: string; key: string }[] }>(context, 'keys issue', '--project', projectId, '--count', '2');
      expect(keys).toHaveLength(2);
      expect(warnings.at(-1)).toMatch(
        /^keys issue is done, but its audit entry \(key\.issue .*"issued_count":2.*\) could not be written: ProvisionedThroughputExceededException$/,
      );
    } finally {
      record.mockRestore();
    }
  });

  it('runs no command whose caller cannot be named', async () => {
    const before = await trail();
    const context: DashboardContext = {
      ...dashboard.context,
      caller: () => Promise.reject(new Error('ExpiredToken: the security token included in the request is expired')),
    };
    await expect(run(context, 'versions upload', '--project', projectId, '--file', scriptFile)).rejects.toThrow('ExpiredToken');
    expect((await table.stores.projects.listVersions(projectId)).map((version) => version.notes)).toEqual(['audited']);
    expect(await trail()).toEqual(before);
  });
});
