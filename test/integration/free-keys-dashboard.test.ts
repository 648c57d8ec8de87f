import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '#dashboard/args';
import { parseCommand } from '#dashboard/command';
import { freeSet, freeShow } from '#dashboard/commands/free';
import { CommandError, type DashboardContext, openContext } from '#dashboard/context';
import { memoryKeySecret } from '#local/key-secret';
import { createTestTable, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/** `free set` and `free show` (dashboard/commands/free.ts) against DynamoDB Local. */

let table: TestTable;
let dashboard: { context: DashboardContext; close(): void };
let projectId: string;

const CHECKPOINTS = JSON.stringify([
  { provider: 'workink', url: 'https://work.ink/1a/demo', link_id: '4242', secret: 'wk-secret-1' },
  { provider: 'lootlabs', url: 'https://loot-link.com/s?demo', link_id: 'll', secret: 'loot-postback-secret' },
]);

beforeAll(async () => {
  table = await createTestTable('free-dashboard');
  const opened = openContext({ kind: 'local', endpoint: table.endpoint, tableName: table.tableName });
  dashboard = { context: { ...opened.context, keySecret: memoryKeySecret() }, close: opened.close };
  const owner = await seedOwner(table.stores);
  ({ projectId } = await seedProject(table.stores, { ownerId: owner.ownerId }));
});
afterAll(async () => {
  dashboard?.close();
  await table?.drop();
});

describe('free set and free show', () => {
  it('set the checkpoints and terms, and show them back without any secret', async () => {
    const set = await freeSet.run(dashboard.context, parseCommand(freeSet, ['--project', projectId, '--checkpoints', CHECKPOINTS, '--duration-hours', '48']));
    expect(set).toMatchObject({ enabled: true, duration_hours: 48, machines: 1, keys_per_machine_per_day: 1 });
    const shown = await freeShow.run(dashboard.context, parseCommand(freeShow, ['--project', projectId]));
    expect(shown).toEqual(set);
    expect(JSON.stringify(shown)).not.toMatch(/wk-secret-1|loot-postback-secret/);
  });

  it('refuse bad input naming the field, before writing anything', () => {
    expect(() => parseCommand(freeSet, ['--project', projectId, '--checkpoints', 'not json'])).toThrow(UsageError);
    expect(() => parseCommand(freeSet, ['--project', projectId, '--checkpoints', CHECKPOINTS, '--duration-hours', '73'])).toThrow(
      /duration_hours must be at most 72/,
    );
    expect(() => parseCommand(freeSet, ['--project', projectId, '--checkpoints', '[]'])).toThrow(/checkpoints must hold at least 1/);
  });

  it('refuse an unknown project', async () => {
    await expect(freeSet.run(dashboard.context, parseCommand(freeSet, ['--project', 'prj_missing', '--checkpoints', CHECKPOINTS]))).rejects.toThrow(
      CommandError,
    );
    await expect(freeShow.run(dashboard.context, parseCommand(freeShow, ['--project', 'prj_missing']))).rejects.toThrow(CommandError);
  });
});
