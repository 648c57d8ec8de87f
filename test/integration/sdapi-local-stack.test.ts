import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unixSeconds } from '#domain/model';
import { DEMO_KEY_COUNT, type DemoSeed, seedDemo } from '#local/seed';
import { type LocalServer, startLocalServer } from '#local/server';
import { startTelemetryPipeline, type TelemetryPipeline } from '#local/telemetry-pipeline';
import { createTestTable, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';
import { runCli } from '#test-support/sdapi-run-cli';
import { EXIT } from '../../sdapi/errors';

/**
 * sdapi against the local stack's server: the real authorizer and handlers on DynamoDB Local, seeded with
 * the same demo `npm start` seeds. (The server is started on the run's shared DynamoDB Local rather than
 * through startLocalStack, which starts a DynamoDB Local of its own.)
 */
const scripts = new MemoryScriptStore();
let table: TestTable;
let server: LocalServer;
let telemetry: TelemetryPipeline;
let demo: DemoSeed;
let dir: string;

const run = (argv: string[], options: { stdinIsTTY?: boolean; answers?: string[] } = {}) =>
  runCli(argv, { api: { fetch: globalThis.fetch }, env: { SDAPI_BASE_URL: server.url, SDAPI_TOKEN: demo.token, SDAPI_PROJECT: demo.projectId }, ...options });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sdapi-local-'));
  table = await createTestTable('sdapi-local-stack');
  demo = await seedDemo(table.stores, scripts, unixSeconds());
  telemetry = startTelemetryPipeline({ store: table.stores.telemetry });
  server = await startLocalServer({ port: 0, stores: table.stores, telemetry: telemetry.sink, scripts });
});

afterAll(async () => {
  await server?.close();
  await telemetry?.stop();
  await table?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('sdapi against the local stack', () => {
  it('lists one page of keys, then every key with --all', async () => {
    const page = await run(['keys', 'list']);
    expect(page.code).toBe(EXIT.ok);
    expect(page.stdout).toContain(`Keys 1-50 of ${DEMO_KEY_COUNT}. Next page: --offset 50, or --all for every key.`);
    const all = await run(['keys', 'list', '--all', '--json']);
    expect(all.code).toBe(EXIT.ok);
    const { keys, total } = JSON.parse(all.stdout) as { keys: { id: string; watermark: string }[]; total: number };
    expect(total).toBe(DEMO_KEY_COUNT);
    expect(new Set(keys.map((key) => key.id)).size).toBe(DEMO_KEY_COUNT);
    expect(keys.filter((key) => key.watermark === demo.sharedWatermark)).toHaveLength(2);
  });

  it('lists versions, rolls back, and shows the new current version', async () => {
    const before = await run(['versions', 'list']);
    expect(before.stdout).toMatch(new RegExp(`^\\*\\s+${demo.versionIds[2]}\\s+v3\\s`, 'm'));
    const rollback = await run(['versions', 'rollback', demo.versionIds[0]!]);
    expect(rollback).toMatchObject({ code: EXIT.ok, stdout: `Current version is now ${demo.versionIds[0]}.\n` });
    const after = await run(['versions', 'list', '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject({ current_version_id: demo.versionIds[0] });
  });

  it('lists the webhook with its secret masked', async () => {
    const result = await run(['webhooks', 'list']);
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toContain(demo.webhookId);
    expect(result.stdout).toContain('execution_drop,new_executor,key_abuse,version_deployed,clone_detected');
    expect(result.stdout).not.toContain(demo.webhookUrl);
  });

  it('revokes a key, and again without error', async () => {
    const { keys } = JSON.parse((await run(['keys', 'list', '--limit', '1', '--json'])).stdout) as { keys: { id: string }[] };
    expect(await run(['keys', 'revoke', keys[0]!.id])).toMatchObject({ code: EXIT.ok, stdout: `Revoked key ${keys[0]!.id}.\n` });
    expect((await run(['keys', 'revoke', keys[0]!.id])).code).toBe(EXIT.ok);
  });

  it('revokes the keys of a leaked dump in one command, then has nothing left to revoke', async () => {
    const file = join(dir, 'leak.lua');
    writeFileSync(
      file,
      `-- loader\nlocal wm = "WM_${demo.sharedWatermark}"\nlocal other = "WM_00000000000000ff" -- WM_${demo.sharedWatermark.toUpperCase()}\n`,
    );
    const leak = await run(['leak', file, '--yes']);
    expect(leak.code).toBe(EXIT.ok);
    expect(leak.stdout).toContain(`Revoked 2 keys carrying ${demo.sharedWatermark} (revoked_count 2).`);
    expect(leak.stdout).toMatch(/00000000000000ff\s+visible\s+1\s+0\s+unknown: no key carries it, not revoked/);
    expect(leak.stdout).toContain('uppercase hex; a watermark is lowercase');

    const again = await run(['keys', 'revoke-bulk', demo.sharedWatermark, '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ ok: true, revoked_count: 0, complete: true });
    const repeat = await run(['leak', file, '--yes']);
    expect(repeat.code).toBe(EXIT.ok);
    expect(repeat.stdout).toMatch(new RegExp(`${demo.sharedWatermark}\\s+visible\\s+1\\s+0\\s+already revoked \\(2 keys\\)`));
  });

  it("exits 1 with the API's message for a project that is not the caller's", async () => {
    const result = await run(['versions', 'list', '--project', 'prj_00000000000000000000']);
    expect(result).toMatchObject({ code: EXIT.apiError, stderr: 'sdapi: Project not found (HTTP 404, GET /v1/projects/prj_00000000000000000000/versions)\n' });
    expect(result.stdout + result.stderr).not.toContain(demo.token);
  });
});
