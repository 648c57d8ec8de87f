import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKeyValue } from '#domain/key-values';
import { consumeRateLimit, rateWindowAt } from '#domain/rate-limit';
import { keyOf, UPDATED_ATTRIBUTES } from '#store/layout';
import { FIXED_NOW, createTestTable, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/**
 * The route roles may update rate windows and a project's pointer in the attributes UPDATED_ATTRIBUTES names and no
 * other (`dynamodb:Attributes`, lib/constructs/table-access.ts). DynamoDB Local does not check IAM, so these pin the
 * stores to the grant: an update that wrote another attribute would be refused in AWS.
 */

let table: TestTable;

beforeAll(async () => {
  table = await createTestTable('granted-attributes');
}, 60_000);

afterAll(async () => {
  await table?.drop();
});

const stored = async (key: { pk: string; sk: string }) =>
  (await table.db.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }))).Item ?? {};

describe('attributes the route roles may update', () => {
  it("a rate window holds only its key and the rate window's granted attributes, after its first and its later requests", async () => {
    for (let i = 0; i < 3; i++) await consumeRateLimit(table.stores.rateLimits, 'bucket-granted', FIXED_NOW);
    const item = await stored(keyOf.rateWindow('bucket-granted', rateWindowAt(FIXED_NOW).start));
    expect(Object.keys(item).toSorted()).toEqual(['pk', 'sk', ...UPDATED_ATTRIBUTES.rateWindow].toSorted());
    expect(item.requests).toBe(3);
  });

  it('a rollback changes nothing of the project but its current version', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId, versions } = await seedProject(table.stores, { ownerId: owner.ownerId, versions: ['one', 'two'] });
    const before = await stored(keyOf.project(projectId));
    expect(await table.stores.projects.setCurrentVersion(projectId, versions[0]?.id ?? '')).toBe(true);
    const after = await stored(keyOf.project(projectId));
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]));
    expect(changed).toEqual([...UPDATED_ATTRIBUTES.currentVersion]);
  });

  it('an issue call changes nothing of the project but its key counter', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const before = await stored(keyOf.project(projectId));
    await table.stores.dashboard.issueKeys({ projectId, count: 2, tier: 'standard', maxUses: null, now: FIXED_NOW });
    const after = await stored(keyOf.project(projectId));
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]));
    expect(changed).toEqual([...UPDATED_ATTRIBUTES.keyCount]);
  });

  it('a machine reset changes nothing of the key but its fingerprints', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, maxFingerprints: 2, now: FIXED_NOW });
    await table.stores.keyChecks.checkAndCount({ projectId, keyId: key!.id, keyHash: hashKeyValue(key!.key), fingerprint: 'c'.repeat(64), now: FIXED_NOW + 1, perKeyPerMinute: 10 });
    const before = await stored(keyOf.key(key!.id));
    expect(await table.stores.keys.resetFingerprints(projectId, key!.id)).toBe(1);
    const after = await stored(keyOf.key(key!.id));
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]));
    expect(changed).toEqual(['fingerprints']);
    expect(UPDATED_ATTRIBUTES.fingerprintReset).toContain('fingerprints');
  });
});
