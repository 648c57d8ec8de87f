import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoBlacklistStore, MACHINE_ENTRY_READ, MACHINE_RECORD_ATTRIBUTES } from '#adapters/blacklist-store';
import { DynamoDeliveryStore, WEBHOOK_DISABLE_ATTRIBUTES, WEBHOOK_STATE_ATTRIBUTES } from '#adapters/delivery-store';
import { DISCORD_KEY_ATTRIBUTES, DISCORD_RETURN_VALUES, DynamoDiscordStore } from '#adapters/discord-store';
import { DynamoKeyCheckStore, KEY_CHECK_ATTRIBUTES, KEY_CHECK_RETURN_VALUES } from '#adapters/key-check-store';
import { DynamoKeyStore, FINGERPRINT_RESET_RETURN_VALUES, KEY_EXTEND_FAILURE_READ, KEY_EXTEND_RETURN_VALUES } from '#adapters/key-store';
import { keyOf, UPDATED_ATTRIBUTES } from '#adapters/layout';
import { KEY_ATTRIBUTE_TYPES } from '#adapters/table-definition';
import { type KeyState, refusalOf } from '#domain/key-check';
import { hashKeyValue } from '#domain/key-values';
import { consumeRateLimit, rateWindowAt } from '#domain/rate-limit';
import { createTestTable, FIXED_NOW, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

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
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
      (name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]),
    );
    expect(changed).toEqual([...UPDATED_ATTRIBUTES.currentVersion]);
  });

  it('an issue call changes nothing of the project but its key counter', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const before = await stored(keyOf.project(projectId));
    await table.stores.dashboard.issueKeys({ projectId, count: 2, tier: 'standard', maxUses: null, now: FIXED_NOW });
    const after = await stored(keyOf.project(projectId));
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
      (name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]),
    );
    expect(changed).toEqual([...UPDATED_ATTRIBUTES.keyCount]);
  });

  it('a machine reset changes nothing of the key but its fingerprints', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, maxFingerprints: 2, now: FIXED_NOW });
    await table.stores.keyChecks.checkAndCount({
      projectId,
      keyId: key!.id,
      keyHash: hashKeyValue(key!.key),
      fingerprint: 'c'.repeat(64),
      now: FIXED_NOW + 1,
      perKeyPerMinute: 10,
      report: { project_id: projectId, executor: 'Wave', fingerprint: 'c'.repeat(64) },
      mayRun: () => true,
    });
    const before = await stored(keyOf.key(key!.id));
    expect(await table.stores.keys.resetFingerprints(projectId, key!.id)).toBe(1);
    const after = await stored(keyOf.key(key!.id));
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
      (name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]),
    );
    expect(changed).toEqual(['fingerprints']);
    expect(UPDATED_ATTRIBUTES.fingerprintReset).toContain('fingerprints');
  });
});

/** Words of DynamoDB's expression grammar; every other bare word in an expression is an attribute name. */
const GRAMMAR = new Set([
  'SET',
  'REMOVE',
  'ADD',
  'DELETE',
  'AND',
  'OR',
  'NOT',
  'BETWEEN',
  'IN',
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
  'size',
  'if_not_exists',
  'list_append',
]);

/** Top-level attribute names a request names in its expressions (`#placeholders` resolved), as `dynamodb:Attributes` sees them. */
function attributesNamed(input: {
  UpdateExpression?: string;
  ConditionExpression?: string;
  ProjectionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
}): string[] {
  const text = [input.UpdateExpression, input.ConditionExpression, input.ProjectionExpression].filter(Boolean).join(' ');
  // `dynamodb:Attributes` holds top-level names: a name after a `.` is a map key inside one (fingerprints.#fp).
  const topLevel = [...text.replaceAll(/:\w+/g, ' ').matchAll(/(\.?)(#?[A-Za-z_][\w]*)/g)].filter(([, dot]) => dot === '').map(([, , word]) => word as string);
  const names = topLevel.map((word) => (word.startsWith('#') ? (input.ExpressionAttributeNames?.[word] ?? word) : word));
  return [...new Set(names.filter((name) => !GRAMMAR.has(name)))].toSorted();
}

/** A document client that records each command's input before sending it to DynamoDB Local. */
function recording(db: DynamoDBDocumentClient): { db: DynamoDBDocumentClient; inputs: { name: string; input: Record<string, unknown> }[] } {
  const inputs: { name: string; input: Record<string, unknown> }[] = [];
  const send = (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
    inputs.push({ name: command.constructor.name, input: command.input });
    return db.send(command as never);
  };
  return { db: { send } as unknown as DynamoDBDocumentClient, inputs };
}

describe('attributes the key lifecycle routes may name (ban-key, unban-key, extend-key, update-key in table-access.ts)', () => {
  const keys = Object.keys(KEY_ATTRIBUTE_TYPES);

  it('ban, unban, extend (both writes) and every kind of edit name only their granted attributes and the keys, and ask no whole item back', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [key] = await table.stores.dashboard.issueKeys({
      projectId,
      count: 1,
      tier: 'standard',
      maxUses: null,
      expiresAt: FIXED_NOW - 10,
      now: FIXED_NOW - 100,
    });
    const keyId = key?.id ?? '';
    const { db, inputs } = recording(table.db);
    const store = new DynamoKeyStore(db, table.tableName);
    /** What the writes name (beside the keys); every read is checked against its own grant here too. */
    const namedBy = async (write: () => Promise<unknown>, grantedReads: readonly string[] | 'whole item' = []) => {
      inputs.length = 0;
      await write();
      const writes = inputs.filter(({ name }) => name === UpdateCommand.name);
      expect(writes.length).toBeGreaterThan(0);
      for (const { input } of inputs) {
        // Issue 31: nothing asks a whole item back under a grant that lists attributes.
        expect(input.ReturnValuesOnConditionCheckFailure).toBeUndefined();
        expect(['ALL_OLD', 'ALL_NEW']).not.toContain(input.ReturnValues);
      }
      for (const { name, input } of inputs.filter(({ name }) => name !== UpdateCommand.name)) {
        expect(name).toBe(GetCommand.name);
        if (grantedReads !== 'whole item') for (const attribute of attributesNamed(input)) expect([...keys, ...grantedReads]).toContain(attribute);
      }
      return [...new Set(writes.flatMap(({ input }) => attributesNamed(input)))].filter((name) => !keys.includes(name));
    };
    for (const ban of [{ reason: 'r', until: FIXED_NOW + 60 }, { reason: 'r', until: null }, null]) {
      for (const name of await namedBy(() => store.setBan(projectId, keyId, ban))) expect(UPDATED_ATTRIBUTES.keyBan).toContain(name);
    }
    // The key expired: the guessed write fails and the second one counts from now, so both are named.
    // The key expired: the guessed write fails, a read of what says why, and the second write counts from now.
    const extended = await namedBy(() => store.extendExpiry(projectId, keyId, { seconds: 60, now: FIXED_NOW }), KEY_EXTEND_FAILURE_READ);
    expect(inputs.map(({ name }) => name)).toEqual([UpdateCommand.name, GetCommand.name, UpdateCommand.name]);
    for (const { input } of inputs.filter(({ name }) => name === UpdateCommand.name)) expect(input.ReturnValues).toBe(KEY_EXTEND_RETURN_VALUES[0]);
    for (const name of [...extended, ...(await namedBy(() => store.extendExpiry(projectId, keyId, { lifetimeAt: 4_102_444_800 })))]) {
      expect(UPDATED_ATTRIBUTES.keyExpiry).toContain(name);
    }
    const edits = [
      { note: 'n', discordId: '123456789012345678', maxUses: 5, maxFingerprints: 2 },
      { note: null, discordId: null, maxUses: null, maxFingerprints: null },
    ];
    // An edit asks nothing back and reads the key detail after it, as get-key does.
    for (const edit of edits)
      for (const name of await namedBy(() => store.editKey(projectId, keyId, edit), 'whole item')) expect(UPDATED_ATTRIBUTES.keyEdit).toContain(name);
  });
});

describe('attributes the loader and delivery roles may name (issue 21: IAM scoped partitions, not attributes)', () => {
  const keys = Object.keys(KEY_ATTRIBUTE_TYPES);

  it('a key check names only KEY_CHECK_ATTRIBUTES and the keys, opening a window, counting within it and being refused, and asks only the granted ReturnValues', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: 2, now: FIXED_NOW });
    const { db, inputs } = recording(table.db);
    const store = new DynamoKeyCheckStore(db, table.tableName);
    const check = {
      projectId,
      keyId: key?.id ?? '',
      keyHash: hashKeyValue(key?.key ?? ''),
      fingerprint: 'f'.repeat(64),
      now: FIXED_NOW,
      perKeyPerMinute: 60,
      report: { project_id: projectId, executor: 'Wave', fingerprint: 'f'.repeat(64), script_hash: 'a'.repeat(64), version_id: 'ver_1' },
      mayRun: (state: KeyState | undefined) => refusalOf(state, projectId, hashKeyValue(key?.key ?? ''), FIXED_NOW, 'f'.repeat(64)) === undefined,
    };
    expect((await store.checkAndCount(check)).outcome).toBe('counted');
    expect((await store.checkAndCount(check)).outcome).toBe('counted');
    expect((await store.checkAndCount(check)).outcome).toBe('not_counted');
    const updates = inputs.filter(({ name }) => name === UpdateCommand.name);
    expect(updates.length).toBeGreaterThanOrEqual(3);
    for (const { input } of updates) {
      for (const name of attributesNamed(input)) expect([...keys, ...KEY_CHECK_ATTRIBUTES]).toContain(name);
      expect(KEY_CHECK_RETURN_VALUES).toContain(input.ReturnValues);
    }
  });

  it('the Discord commands name only DISCORD_KEY_ATTRIBUTES and the keys on a key, linking, resetting and being refused, with the granted ReturnValues', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, maxFingerprints: 1, now: FIXED_NOW });
    const keyId = key?.id ?? '';
    const { db, inputs } = recording(table.db);
    const store = new DynamoDiscordStore(db, table.tableName, (project, user) => table.stores.keys.keyIdsByDiscordId(project, user));
    const ref = { projectId, keyId, keyHash: hashKeyValue(key?.key ?? '') };
    expect((await store.linkKeyToUser(ref, '123456789012345678', FIXED_NOW)).written).toBe(true);
    expect((await store.linkKeyToUser(ref, '223456789012345678', FIXED_NOW)).written).toBe(false);
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keyOf.key(keyId),
        UpdateExpression: 'SET fingerprints.m1 = :at',
        ExpressionAttributeValues: { ':at': FIXED_NOW },
      }),
    );
    expect((await store.resetMachinesOfUser({ projectId, keyId }, '123456789012345678', FIXED_NOW, FIXED_NOW - 3600)).written).toBe(true);
    expect((await store.resetMachinesOfUser({ projectId, keyId }, '123456789012345678', FIXED_NOW, FIXED_NOW - 3600)).written).toBe(false);
    const updates = inputs.filter(({ name }) => name === UpdateCommand.name);
    expect(updates).toHaveLength(4);
    for (const { input } of updates) {
      for (const name of attributesNamed(input)) expect([...keys, ...DISCORD_KEY_ATTRIBUTES]).toContain(name);
      if (input.ReturnValues !== undefined) expect(DISCORD_RETURN_VALUES).toContain(input.ReturnValues);
    }
  });

  it('a key check asks no whole item back: a refused write is followed by a read naming only KEY_CHECK_ATTRIBUTES, the watermark by a read of it alone', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: 1, now: FIXED_NOW });
    const { db, inputs } = recording(table.db);
    const store = new DynamoKeyCheckStore(db, table.tableName);
    const check = {
      projectId,
      keyId: key?.id ?? '',
      keyHash: hashKeyValue(key?.key ?? ''),
      fingerprint: 'f'.repeat(64),
      now: FIXED_NOW,
      perKeyPerMinute: 60,
      report: { project_id: projectId, executor: 'Wave', fingerprint: 'f'.repeat(64) },
      mayRun: (state: KeyState | undefined) => refusalOf(state, projectId, hashKeyValue(key?.key ?? ''), FIXED_NOW, 'f'.repeat(64)) === undefined,
    };
    expect((await store.checkAndCount(check)).outcome).toBe('counted');
    expect(await store.checkAndCount(check)).toMatchObject({ outcome: 'not_counted', key: { currentUses: 1, maxUses: 1 } });
    expect(await store.watermarkOf(check.keyId)).toMatch(/^[0-9a-f]{16}$/);
    for (const { input } of inputs) expect(input.ReturnValuesOnConditionCheckFailure).toBeUndefined();
    const reads = inputs.filter(({ name }) => name === GetCommand.name).map(({ input }) => attributesNamed(input).filter((name) => !keys.includes(name)));
    expect(reads).toEqual([[...KEY_CHECK_ATTRIBUTES].toSorted(), ['watermark']]);
  });

  it('a machine reset asks back only the map it emptied (UPDATED_OLD), and a refused one reads only projectId', async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [bound, other] = await table.stores.dashboard.issueKeys({ projectId, count: 2, tier: 'standard', maxUses: null, maxFingerprints: 2, now: FIXED_NOW });
    const { db, inputs } = recording(table.db);
    const keysOf = new DynamoKeyStore(db, table.tableName);
    expect(await keysOf.resetFingerprints(projectId, bound?.id ?? '')).toBe(0);
    expect(await keysOf.resetFingerprints('prj_other', other?.id ?? '')).toBeUndefined();
    const [reset] = inputs;
    expect(reset?.input.ReturnValues).toBe(FINGERPRINT_RESET_RETURN_VALUES[0]);
    expect(UPDATED_ATTRIBUTES.fingerprintReset).toEqual(expect.arrayContaining(attributesNamed(reset?.input ?? {}).filter((name) => !keys.includes(name))));
    const refusedRead = inputs.find(({ name }) => name === GetCommand.name);
    expect(attributesNamed(refusedRead?.input ?? {})).toEqual(['projectId']);
    for (const { input } of inputs) expect(input.ReturnValuesOnConditionCheckFailure).toBeUndefined();
  });

  it('delivery reads and disables a webhook config naming only the granted attributes, with no ReturnValues', async () => {
    const owner = await seedOwner(table.stores);
    const url = 'https://discord.com/api/webhooks/123456789012345678/granted-attributes-token';
    const { projectId, webhookIds } = await seedProject(table.stores, { ownerId: owner.ownerId, webhooks: [{ url, events: ['version_deployed'] }] });
    const { db, inputs } = recording(table.db);
    const store = new DynamoDeliveryStore(db, table.tableName);
    const state = await store.webhookState(projectId, webhookIds[0] ?? '');
    expect(state).toEqual({ enabled: 1, url });
    expect(await store.disableWebhook(projectId, webhookIds[0] ?? '', url, FIXED_NOW)).toBe(true);

    const [read, disable] = inputs;
    expect(read?.name).toBe(GetCommand.name);
    const besidesKeys = (input: Record<string, unknown> | undefined) => attributesNamed(input ?? {}).filter((name) => !keys.includes(name));
    expect(besidesKeys(read?.input)).toEqual([...WEBHOOK_STATE_ATTRIBUTES].toSorted());
    expect(disable?.name).toBe(UpdateCommand.name);
    expect(besidesKeys(disable?.input)).toEqual([...WEBHOOK_DISABLE_ATTRIBUTES].toSorted());
    expect(disable?.input.ReturnValues).toBeUndefined();
  });
});

describe('attributes the buyer blacklist names on items it shares (the loader function, add-to-blacklist)', () => {
  const keys = Object.keys(KEY_ATTRIBUTE_TYPES);
  const FP = 'b'.repeat(64);

  it("a binding check's machine record holds only its keys and MACHINE_RECORD_ATTRIBUTES, and the blacklist read names only MACHINE_ENTRY_READ", async () => {
    const owner = await seedOwner(table.stores);
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const [key] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, maxFingerprints: 1, now: FIXED_NOW });
    const { db, inputs } = recording(table.db);
    const store = new DynamoKeyCheckStore(db, table.tableName);
    const keyHash = hashKeyValue(key?.key ?? '');
    const written = await store.checkAndCount({
      projectId,
      keyId: key?.id ?? '',
      keyHash,
      fingerprint: FP,
      now: FIXED_NOW,
      perKeyPerMinute: 120,
      report: { project_id: projectId, executor: 'Wave', fingerprint: FP },
      mayRun: (state: KeyState | undefined) => refusalOf(state, projectId, keyHash, FIXED_NOW, FP) === undefined,
    });
    expect(written.outcome).toBe('counted');
    const record = await stored(keyOf.machineKey(projectId, FP, key?.id ?? ''));
    expect(Object.keys(record).toSorted()).toEqual(['pk', 'sk', ...MACHINE_RECORD_ATTRIBUTES].toSorted());
    const entryRead = inputs.find(({ input }) => String((input.Key as { pk?: string } | undefined)?.pk ?? '').startsWith('BLACKLIST#'));
    expect(attributesNamed(entryRead?.input ?? {})).toEqual([...MACHINE_ENTRY_READ]);
  });

  it("a blacklisting's bans name only UPDATED_ATTRIBUTES.blacklistBan and the keys, and ask nothing back", async () => {
    const owner = await seedOwner(table.stores);
    const { projectId, keys: issued } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 1 });
    const { db, inputs } = recording(table.db);
    expect(await new DynamoBlacklistStore(db, table.tableName).banKeys(projectId, [issued[0]?.id ?? ''], 'Leaked')).toBe(1);
    const [ban] = inputs;
    expect(UPDATED_ATTRIBUTES.blacklistBan).toEqual(expect.arrayContaining(attributesNamed(ban?.input ?? {}).filter((name) => !keys.includes(name))));
    expect(ban?.input.ReturnValues).toBeUndefined();
  });
});
