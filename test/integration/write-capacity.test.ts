import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { LOADER_LIMITS } from '#domain/key-check';
import { hashKeyValue } from '#domain/key-values';
import { revokeBulk } from '#domain/project-api';
import { capacityRecordingClient, indexUnits } from '#test-support/consumed-capacity';
import { createTestTable, FIXED_NOW, NO_DEADLINE, type SeededOwner, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/**
 * What the hot paths cost in capacity units, as DynamoDB Local reports them with `ReturnConsumedCapacity:
 * INDEXES`. Local has no partitions, but AWS throttles per partition (~1,000 WCU/s), and every index write of a
 * key lands in one partition per project or watermark: the paths that touch many keys must write none.
 */

let table: TestTable;
let owner: SeededOwner;
let recorder: ReturnType<typeof capacityRecordingClient>;
let stores: ReturnType<typeof createStores>;

beforeAll(async () => {
  table = await createTestTable('capacity');
  owner = await seedOwner(table.stores);
  recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  stores = createStores(recorder.db, table.tableName);
});

afterAll(async () => {
  recorder?.db.destroy();
  await table?.drop();
});

describe('write capacity of the paths that touch many keys', () => {
  it("a single revoke writes the key's own item, 1 WCU, and no index", async () => {
    const { projectId, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 3, watermark: 'aaaaaaaaaaaaaaaa' });
    recorder.take();
    expect(await stores.projects.revokeKey(projectId, keys[1]!.id, FIXED_NOW)).toBe('revoked');
    const { write } = recorder.take();
    expect(write.table).toBe(1);
    expect(write.indexes).toEqual({});
  });

  it('a bulk revoke of 150 keys writes 150 WCU on the table and none on any index, reading no key; a repeat changes nothing', async () => {
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 150, watermark: 'bbbbbbbbbbbbbbbb' });
    const project = await stores.projects.getProject(projectId);
    recorder.take();
    expect(await revokeBulk(stores.projects, project!, 'bbbbbbbbbbbbbbbb', FIXED_NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 150, complete: true });
    const first = recorder.take();
    expect(first.write.table).toBe(150);
    expect(indexUnits(first.write)).toBe(0);
    // The index is read, never written; no key is read before its conditional write.
    expect(first.read.indexes).toHaveProperty('byWatermark');
    expect(first.read.table).toBe(0);

    // Each key already revoked is one failed condition (AWS charges it 1 WCU), and nothing is written.
    expect(await revokeBulk(stores.projects, project!, 'bbbbbbbbbbbbbbbb', FIXED_NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 0, complete: true });
    const repeat = recorder.take();
    expect(repeat.write.table).toBe(0);
    expect(repeat.conditionFailures).toBe(150);
    expect(repeat.read.table).toBe(0);
    expect(indexUnits(repeat.write)).toBe(0);
  });

  it("a loader key check writes the key's own item once, 1 WCU and no index, whether it opens the minute's window or counts within it", async () => {
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, now: FIXED_NOW });
    const check = {
      projectId,
      keyId: key!.id,
      keyHash: hashKeyValue(key!.key),
      fingerprint: 'a'.repeat(64),
      perKeyPerMinute: LOADER_LIMITS.perKeyPerMinute,
      report: { project_id: projectId, executor: 'Wave', fingerprint: 'a'.repeat(64) },
      // Every check here counts: the rule is never asked.
      mayRun: () => true,
    };
    for (const now of [FIXED_NOW, FIXED_NOW + 1, FIXED_NOW + 2]) {
      recorder.take();
      expect(await stores.keyChecks.checkAndCount({ ...check, now })).toMatchObject({ outcome: 'counted' });
      expect(recorder.take()).toMatchObject({ requests: 1, conditionFailures: 0, write: { table: 1, indexes: {} } });
    }
    // Another container, which has not seen the key this minute, tries the write that opens a window first:
    // its condition fails (AWS charges that 1 WCU too), a read of the attributes it tests says why, and the write
    // within the window counts the use.
    const otherContainer = createStores(recorder.db, table.tableName);
    recorder.take();
    expect(await otherContainer.keyChecks.checkAndCount({ ...check, now: FIXED_NOW + 3 })).toMatchObject({ outcome: 'counted' });
    expect(recorder.take()).toMatchObject({ requests: 3, conditionFailures: 1, write: { table: 1, indexes: {} } });
  });
});
