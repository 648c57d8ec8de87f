import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { ENTITY, keyOf } from '#adapters/layout';
import { DynamoProjectStore } from '#adapters/project-store';
import { SEQUENCE_LEASE } from '#adapters/sequence';
import { TABLE } from '#adapters/table-definition';
import { KeyNotFound } from '#domain/errors';
import type { Project } from '#domain/model';
import { revokeBulk, revokeKey } from '#domain/project-api';
import { consumeRateLimit, RATE_LIMIT, rateWindowAt } from '#domain/rate-limit';
import { createTestTable, FIXED_NOW, NO_DEADLINE, type SeededOwner, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

let table: TestTable;
let owner: SeededOwner;
/** The audit trail of a request by the owner's token. */
const trail = () => ({ log: table.stores.audit, actor: { tokenId: owner.tokenId, requestId: 'req-repository' } });

beforeAll(async () => {
  table = await createTestTable('repository');
  owner = await seedOwner(table.stores);
});

afterAll(async () => {
  await table?.drop();
});

async function project(projectId: string): Promise<Project> {
  const found = await table.stores.projects.getProject(projectId);
  if (!found) throw new Error(`project ${projectId} missing`);
  return found;
}

/** The stored key item, internal attributes included. */
async function storedKey(keyId: string) {
  const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.key(keyId), ConsistentRead: true }));
  return Item;
}

/** Every issue sequence number of a project, read from the key-order index. */
async function issueSequence(projectId: string): Promise<number[]> {
  const index = TABLE.indexes.byIssueOrder;
  const seqs: number[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': index.partitionKey },
        ExpressionAttributeValues: { ':p': projectId },
        ExclusiveStartKey: startKey,
      }),
    );
    seqs.push(...(page.Items ?? []).map((item) => Number(item.issueSeq)));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return seqs;
}

async function activeIdsWithWatermark(projectId: string, watermark: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const page of table.stores.projects.keyIdsWithWatermark(projectId, watermark)) ids.push(...page);
  return (await table.stores.projects.activeAmong(ids)).sort();
}

interface SentCommand {
  command: string;
  input: unknown;
  /** What DynamoDB Local answered; absent for a call the client failed before sending. */
  output?: unknown;
}

/**
 * A project store on this file's table whose client records every command the store sends and what came back,
 * for the tests of what the store asks DynamoDB for (the handler tests run on the in-memory stores instead).
 */
function recordingProjectStore(options: { queryPageSize?: number; firstTransactionConflicts?: boolean } = {}) {
  const db = createDocumentClient(localDynamoConfig(table.endpoint));
  const sent: SentCommand[] = [];
  let conflicted = false;
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? 'unknown';
      // Small pages make DynamoDB answer with LastEvaluatedKey as it does past 1 MB, without a megabyte of keys.
      const pageLimited = command === 'QueryCommand' && options.queryPageSize ? { ...args, input: { ...args.input, Limit: options.queryPageSize } } : args;
      const call: SentCommand = { command, input: pageLimited.input };
      sent.push(call);
      if (command === 'TransactWriteItemsCommand' && options.firstTransactionConflicts && !conflicted) {
        conflicted = true;
        throw new TransactionCanceledException({
          message: 'Transaction cancelled',
          $metadata: {},
          CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
        });
      }
      const result = await next(pageLimited);
      call.output = result.output;
      return result;
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  return { projects: new DynamoProjectStore(db, table.tableName), sent, destroy: () => db.destroy() };
}

describe('key order pagination (spec §4.1)', () => {
  let projectId: string;
  let issued: string[];

  beforeAll(async () => {
    const seeded = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 250 });
    projectId = seeded.projectId;
    issued = seeded.keys.map((key) => key.id);
  });

  it('pages of 100 at offsets 0, 100 and 200 hold every key exactly once, in issue order', async () => {
    const pages = await Promise.all([0, 100, 200].map((offset) => table.stores.projects.listKeysAfter(projectId, offset, 100)));
    expect(pages.map((page) => page.length)).toEqual([100, 100, 50]);
    expect(pages.flat().map((key) => key.id)).toEqual(issued);
  });

  it('pages of an odd size walk the same order without a gap or an overlap', async () => {
    const walked: string[] = [];
    for (let offset = 0; offset < 250; offset += 37) walked.push(...(await table.stores.projects.listKeysAfter(projectId, offset, 37)).map((key) => key.id));
    expect(walked).toEqual(issued);
  });

  it('gives an empty page at and beyond the end', async () => {
    expect(await table.stores.projects.listKeysAfter(projectId, 250, 50)).toEqual([]);
    expect(await table.stores.projects.listKeysAfter(projectId, 999_999_999_999_999, 100)).toEqual([]);
    expect((await table.stores.projects.listKeysAfter(projectId, 249, 50)).map((key) => key.id)).toEqual([issued[249]]);
  });

  it('reads a page with one query of the keys-only issue-order index, limited to the page and starting after the offset, then the keys with one consistent BatchGetItem', async () => {
    const recording = recordingProjectStore();
    const page = await recording.projects.listKeysAfter(projectId, 200, 30);
    recording.destroy();
    expect(page.map((key) => key.id)).toEqual(issued.slice(200, 230));
    expect(recording.sent).toMatchObject([
      {
        command: 'QueryCommand',
        input: { IndexName: TABLE.indexes.byIssueOrder.name, Limit: 30, ExpressionAttributeValues: { ':p': projectId, ':after': 200 } },
        output: { Count: 30, ScannedCount: 30 },
      },
      { command: 'BatchGetItemCommand', input: { RequestItems: { [table.tableName]: { ConsistentRead: true } } } },
    ]);
    expect(recording.sent).toHaveLength(2);
  });

  it('shows a revoke made a moment ago, since the keys are read from the table and not from the index', async () => {
    const { projectId: fresh, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 3 });
    await table.stores.projects.revokeKey(fresh, keys[1]!.id, FIXED_NOW);
    expect((await table.stores.projects.listKeysAfter(fresh, 0, 3)).map((key) => key.revoked)).toEqual([0, 1, 0]);
  });

  it('finds the keys of a watermark from the watermark index alone, in issue order, with revoked ones, paged among them', async () => {
    const leaked = 'c0ffee00c0ffee00';
    const { projectId: marked, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 3, watermark: leaked });
    await table.stores.dashboard.issueKeys({ projectId: marked, count: 2, tier: 'standard', maxUses: null, now: FIXED_NOW });
    await table.stores.projects.revokeKey(marked, keys[1]!.id, FIXED_NOW);

    const recording = recordingProjectStore();
    const found = await recording.projects.listKeysWithWatermark(marked, leaked, 0, 100);
    const paged = await recording.projects.listKeysWithWatermark(marked, leaked, 1, 1);
    recording.destroy();
    expect(found).toEqual({ keys: keys.map((key, i) => expect.objectContaining({ id: key.id, watermark: leaked, revoked: i === 1 ? 1 : 0 })), total: 3 });
    expect(paged).toEqual({ keys: [expect.objectContaining({ id: keys[1]!.id })], total: 3 });
    // Per call: one query of the watermark index (never the issue-order index of the whole project) and one BatchGetItem.
    expect(recording.sent.map((sent) => [sent.command, (sent.input as { IndexName?: string }).IndexName])).toEqual([
      ['QueryCommand', TABLE.indexes.byWatermark.name],
      ['BatchGetItemCommand', undefined],
      ['QueryCommand', TABLE.indexes.byWatermark.name],
      ['BatchGetItemCommand', undefined],
    ]);
    expect(await table.stores.projects.listKeysWithWatermark(projectId, leaked, 0, 100)).toEqual({ keys: [], total: 0 });
  });

  it('takes the total from the project counter', async () => {
    expect((await project(projectId)).keyCount).toBe(250);
  });

  it('returns key metadata with numeric flags and null for no use cap', async () => {
    const [key] = await table.stores.projects.listKeysAfter(projectId, 0, 1);
    expect(key).toEqual({
      id: issued[0],
      user_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      tier: 'standard',
      watermark: expect.stringMatching(/^[0-9a-f]{16}$/),
      issued_at: FIXED_NOW,
      expires_at: expect.any(Number),
      max_uses: null,
      current_uses: 0,
      revoked: 0,
    });
  });
});

describe('key attributes', () => {
  it('hands out exactly the spec fields of a key, never an attribute the item carries besides them', async () => {
    const { projectId, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 1 });
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keyOf.key(keys[0]!.id),
        UpdateExpression: 'SET secret = :raw',
        ExpressionAttributeValues: { ':raw': 'raw-key-value' },
      }),
    );
    const [key] = await table.stores.projects.listKeysAfter(projectId, 0, 1);
    expect(Object.keys(key ?? {}).sort()).toEqual(['current_uses', 'expires_at', 'id', 'issued_at', 'max_uses', 'revoked', 'tier', 'user_hash', 'watermark']);
    expect(JSON.stringify(key)).not.toContain('raw-key-value');
  });
});

describe('issue sequence', () => {
  it('stays dense (no gap, no repeat) when keys are issued concurrently', async () => {
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    const batches = [20, 20, 20, 20, 120];
    const issued = await Promise.all(
      batches.map((count) => table.stores.dashboard.issueKeys({ projectId, count, tier: 'standard', maxUses: null, now: FIXED_NOW })),
    );
    const total = batches.reduce((sum, count) => sum + count, 0);
    expect(issued.flat()).toHaveLength(total);
    expect((await issueSequence(projectId)).sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect((await project(projectId)).keyCount).toBe(total);
  });
});

describe('sequence lease (numbering writers take turns)', () => {
  const leaseOf = async (projectId: string) =>
    (await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.sequenceLease(projectId), ConsistentRead: true }))).Item;
  const putLease = (projectId: string, until: number) =>
    table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...keyOf.sequenceLease(projectId), entity: ENTITY.sequenceLease, holder: 'crashed-writer', until },
      }),
    );

  it('takes over a lease its holder left behind once it has expired, and leaves no lease after issuing', async () => {
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    await putLease(projectId, Math.floor(Date.now() / 1000) - 1);
    expect(await table.stores.dashboard.issueKeys({ projectId, count: 3, tier: 'standard', maxUses: null, now: FIXED_NOW })).toHaveLength(3);
    expect(await leaseOf(projectId)).toBeUndefined();
  });

  it('waits while another writer holds the lease and issues once it is released', async () => {
    const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId });
    await putLease(projectId, Math.floor(Date.now() / 1000) + SEQUENCE_LEASE.seconds);
    const order: string[] = [];
    const issuing = table.stores.dashboard.issueKeys({ projectId, count: 2, tier: 'standard', maxUses: null, now: FIXED_NOW }).then(() => order.push('issued'));
    // Give the writer time to try (and fail) a few times before the holder lets go.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await project(projectId)).keyCount).toBe(0);
    order.push('released');
    await table.db.send(new DeleteCommand({ TableName: table.tableName, Key: keyOf.sequenceLease(projectId) }));
    await issuing;
    expect(order).toEqual(['released', 'issued']);
    expect((await project(projectId)).keyCount).toBe(2);
  });
});

describe('watermark index (spec §4.3)', () => {
  const watermark = '00112233445566aa';

  it('is scoped to the project: the same watermark in another project is neither listed nor revoked', async () => {
    const mine = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 5, watermark });
    await table.stores.dashboard.issueKeys({ projectId: mine.projectId, count: 3, tier: 'standard', maxUses: null, now: FIXED_NOW });
    const theirOwner = await seedOwner(table.stores);
    const theirs = await seedProject(table.stores, { ownerId: theirOwner.ownerId, keys: 4, watermark });

    expect(await activeIdsWithWatermark(mine.projectId, watermark)).toEqual(mine.keys.map((key) => key.id).sort());
    expect(await revokeBulk(table.stores.projects, await project(mine.projectId), watermark, FIXED_NOW, NO_DEADLINE)).toEqual({
      ok: true,
      revoked_count: 5,
      complete: true,
    });
    expect(await activeIdsWithWatermark(theirs.projectId, watermark)).toHaveLength(4);
    for (const key of theirs.keys) expect((await storedKey(key.id))?.revoked).toBe(0);
  });

  it('keeps a revoked key (the revoke writes no index) but no longer lists it as active, and the key keeps its watermark', async () => {
    const { projectId, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 3, watermark });
    expect(await table.stores.projects.revokeKey(projectId, keys[0]!.id, FIXED_NOW + 60)).toBe('revoked');
    expect(await activeIdsWithWatermark(projectId, watermark)).toEqual([keys[1]!.id, keys[2]!.id].sort());
    expect(await storedKey(keys[0]!.id)).toMatchObject({ revoked: 1, revokedAt: FIXED_NOW + 60, watermark, watermarkKey: `${projectId}#${watermark}` });
  });

  it("reads the project's partition of the index page by page, following LastEvaluatedKey to the end", async () => {
    const { projectId, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 5, watermark: 'dddddddddddddddd' });
    await table.stores.projects.revokeKey(projectId, keys[0]!.id, FIXED_NOW);
    const recording = recordingProjectStore({ queryPageSize: 2 });
    const pages: string[][] = [];
    for await (const page of recording.projects.keyIdsWithWatermark(projectId, 'dddddddddddddddd')) pages.push(page);
    recording.destroy();

    // Revoked keys too: the index keeps them (a revoke must not write it).
    expect(pages.flat().sort()).toEqual(keys.map((key) => key.id).sort());
    const queries = recording.sent.filter((call) => call.command === 'QueryCommand');
    expect(queries.length).toBeGreaterThan(1);
    queries.forEach((query, i) => {
      expect(query).toMatchObject({
        input: { IndexName: TABLE.indexes.byWatermark.name, ExpressionAttributeValues: { ':w': `${projectId}#dddddddddddddddd` } },
      });
      const previous = queries[i - 1]?.output as { LastEvaluatedKey?: unknown } | undefined;
      expect((query.input as { ExclusiveStartKey?: unknown }).ExclusiveStartKey).toEqual(previous?.LastEvaluatedKey);
    });
    // No key is read: the index alone answers.
    expect(recording.sent).toHaveLength(queries.length);
  });

  it('bulk revokes 300 keys, then a second run revokes 0', async () => {
    const { projectId, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 300, watermark: 'bbbbbbbbbbbbbbbb' });
    const other = await table.stores.dashboard.issueKeys({ projectId, count: 2, tier: 'standard', maxUses: null, now: FIXED_NOW });
    const open = await project(projectId);
    expect(await revokeBulk(table.stores.projects, open, 'bbbbbbbbbbbbbbbb', FIXED_NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 300, complete: true });
    expect(await revokeBulk(table.stores.projects, open, 'bbbbbbbbbbbbbbbb', FIXED_NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 0, complete: true });
    const listed = (await Promise.all([0, 100, 200, 300].map((offset) => table.stores.projects.listKeysAfter(projectId, offset, 100)))).flat();
    const revokedIds = new Set(keys.map((key) => key.id));
    expect(listed).toHaveLength(302);
    for (const key of listed) expect(key.revoked).toBe(revokedIds.has(key.id) ? 1 : 0);
    expect(other.every((key) => !revokedIds.has(key.id))).toBe(true);
  });

  it('two concurrent bulk revokes of one watermark revoke each key once: their counts sum to the number of keys', async () => {
    const { projectId, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 200, watermark: 'cccccccccccccccc' });
    const open = await project(projectId);
    const [first, second] = await Promise.all([
      revokeBulk(table.stores.projects, open, 'cccccccccccccccc', FIXED_NOW, NO_DEADLINE),
      revokeBulk(table.stores.projects, open, 'cccccccccccccccc', FIXED_NOW, NO_DEADLINE),
    ]);
    expect(first!.revoked_count + second!.revoked_count).toBe(200);
    for (const key of keys.slice(0, 20)) expect((await storedKey(key.id))?.revoked).toBe(1);
    expect(await activeIdsWithWatermark(projectId, 'cccccccccccccccc')).toEqual([]);
  });
});

describe('revoking one key (spec §4.2)', () => {
  it('refuses a key of another project as not found and leaves it active', async () => {
    const mine = await seedProject(table.stores, { ownerId: owner.ownerId });
    const theirs = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 1 });
    const keyId = theirs.keys[0]!.id;
    expect(await table.stores.projects.revokeKey(mine.projectId, keyId, FIXED_NOW)).toBe('not_found');
    await expect(revokeKey(table.stores.projects, await project(mine.projectId), keyId, FIXED_NOW, trail())).rejects.toEqual(new KeyNotFound(keyId));
    expect(await storedKey(keyId)).toMatchObject({ revoked: 0, watermarkKey: expect.any(String) });
  });

  it('tells an unknown key from an already revoked one, and the use case answers ok both times for a twice-revoked key', async () => {
    const { projectId, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 1 });
    const open = await project(projectId);
    expect(await table.stores.projects.revokeKey(projectId, 'key_does_not_exist', FIXED_NOW)).toBe('not_found');
    expect(await revokeKey(table.stores.projects, open, keys[0]!.id, FIXED_NOW, trail())).toEqual({ ok: true });
    expect(await revokeKey(table.stores.projects, open, keys[0]!.id, FIXED_NOW + 5, trail())).toEqual({ ok: true });
    expect(await table.stores.projects.revokeKey(projectId, keys[0]!.id, FIXED_NOW + 10)).toBe('already_revoked');
    expect(await storedKey(keys[0]!.id)).toMatchObject({ revoked: 1, revokedAt: FIXED_NOW });
  });
});

describe('rollback (spec §4.5)', () => {
  it('refuses a version of another project and leaves the pointer where it was', async () => {
    const mine = await seedProject(table.stores, { ownerId: owner.ownerId, versions: ['one', 'two'] });
    const theirs = await seedProject(table.stores, { ownerId: owner.ownerId, versions: ['elsewhere'] });
    expect(await table.stores.projects.setCurrentVersion(mine.projectId, theirs.versions[0]!.id)).toBe(false);
    expect(await table.stores.projects.setCurrentVersion(mine.projectId, 'ver_unknown')).toBe(false);
    expect((await project(mine.projectId)).currentVersionId).toBe(mine.versions[1]!.id);
    expect((await project(theirs.projectId)).currentVersionId).toBe(theirs.versions[0]!.id);
  });

  it('moves the pointer to an earlier version of the project', async () => {
    const { projectId, versions } = await seedProject(table.stores, { ownerId: owner.ownerId, versions: ['one', 'two', 'three'] });
    expect(await table.stores.projects.setCurrentVersion(projectId, versions[0]!.id)).toBe(true);
    expect((await project(projectId)).currentVersionId).toBe(versions[0]!.id);
  });

  it('ends concurrent rollbacks on one of the requested versions, each answered as done', async () => {
    const { projectId, versions } = await seedProject(table.stores, { ownerId: owner.ownerId, versions: ['a', 'b', 'c', 'd'] });
    const requested = [versions[0]!.id, versions[1]!.id, versions[2]!.id];
    const outcomes = await Promise.all([...requested, ...requested].map((versionId) => table.stores.projects.setCurrentVersion(projectId, versionId)));
    expect(outcomes.every(Boolean)).toBe(true);
    expect(requested).toContain((await project(projectId)).currentVersionId);
  });

  it('retries a rollback whose transaction lost a conflict with another transaction, and lands it', async () => {
    const { projectId, versions } = await seedProject(table.stores, { ownerId: owner.ownerId, versions: ['one', 'two'] });
    const recording = recordingProjectStore({ firstTransactionConflicts: true });
    expect(await recording.projects.setCurrentVersion(projectId, versions[0]!.id)).toBe(true);
    recording.destroy();
    expect(recording.sent.map((call) => call.command)).toEqual(['TransactWriteItemsCommand', 'TransactWriteItemsCommand']);
    expect((await project(projectId)).currentVersionId).toBe(versions[0]!.id);
  });

  it('lists the versions the dashboard uploaded with dense version numbers', async () => {
    const { projectId, versions } = await seedProject(table.stores, { ownerId: owner.ownerId, versions: ['first', '', 'third'] });
    const listed = await table.stores.projects.listVersions(projectId);
    expect(listed.map((version) => [version.id, version.version_number, version.notes]).sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
      [versions[0]!.id, 1, 'first'],
      [versions[1]!.id, 2, ''],
      [versions[2]!.id, 3, 'third'],
    ]);
  });
});

describe('exact rate limit (spec §8)', () => {
  const now = 1_700_000_085;

  it('allows 100 requests in a window, refuses the 101st, and counts another token apart', async () => {
    const counts: (number | undefined)[] = [];
    for (let i = 0; i < 101; i++) counts.push(await table.stores.rateLimits.countRequest('bucket-sequential', { start: 1_700_000_040, seconds: 60 }, 100));
    expect(counts.slice(0, 100)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(counts[100]).toBeUndefined();
    expect(await table.stores.rateLimits.countRequest('bucket-other', { start: 1_700_000_040, seconds: 60 }, 100)).toBe(1);
    expect(await table.stores.rateLimits.countRequest('bucket-sequential', { start: 1_700_000_100, seconds: 60 }, 100)).toBe(1);
  });

  it('allows exactly 100 of 150 concurrent requests', async () => {
    const decisions = await Promise.all(Array.from({ length: 150 }, () => consumeRateLimit(table.stores.rateLimits, 'bucket-concurrent', now)));
    const allowed = decisions.filter((decision) => decision.allowed);
    expect(allowed).toHaveLength(RATE_LIMIT.requests);
    expect(allowed.map((decision) => decision.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(decisions.filter((decision) => !decision.allowed).every((decision) => decision.resetSeconds === 15)).toBe(true);
  });

  it('stores the window with a TTL after the window has closed', async () => {
    await consumeRateLimit(table.stores.rateLimits, 'bucket-ttl', now);
    const { start } = rateWindowAt(now);
    const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.rateWindow('bucket-ttl', start) }));
    expect(Item?.requests).toBe(1);
    expect(Item?.[TABLE.ttlAttribute]).toBeGreaterThanOrEqual(start + RATE_LIMIT.windowSeconds);
  });
});

describe('tokens', () => {
  it('finds a token by its hash only: its owner, its id and its scope', async () => {
    expect(await table.stores.tokens.findToken(owner.tokenHash)).toEqual({ ownerId: owner.ownerId, tokenId: owner.tokenId, scope: 'write' });
    expect(await table.stores.tokens.findToken(owner.token)).toBeUndefined();
    expect(await table.stores.tokens.findToken('0'.repeat(64))).toBeUndefined();
  });
});
