import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoConfig } from '#adapters/client';
import { DynamoKeyCheckStore } from '#adapters/key-check-store';
import { keyOf } from '#adapters/layout';
import { createStores } from '#adapters/stores';
import { AddressTally } from '#domain/address-tally';
import { checkKey, type KeyState, LOADER_LIMITS, refusalOf, validateAnswer } from '#domain/key-check';
import { hashKeyValue } from '#domain/key-values';
import type { Project } from '#domain/model';
import type { TelemetrySink } from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import { issueKeys, type KeyIssuing, resetHwid } from '#domain/selling-keys';
import { memoryKeySecret } from '#local/key-secret';
import { IssueKeysBody } from '#schemas/requests';
import { capacityRecordingClient } from '#test-support/consumed-capacity';
import { createTestTable, FIXED_NOW, type SeededOwner, seedOwner, type TestTable } from '#test-support/fixtures';

/**
 * Selling keys on DynamoDB Local (DESIGN.md, "Selling keys: issue over the API, bind to machines"): order
 * idempotency under concurrency, machine binding in the check's one conditional write, the reset, and what each
 * costs in capacity units.
 */

const FP = (n: number) => n.toString(16).padStart(64, '0');
const noTelemetry: TelemetrySink = { report: async () => undefined };

let table: TestTable;
let owner: SeededOwner;
let issuing: KeyIssuing;
let addresses = 0;

beforeAll(async () => {
  table = await createTestTable('selling-keys');
  owner = await seedOwner(table.stores);
  issuing = { store: table.stores.keys, secret: memoryKeySecret() };
});

afterAll(async () => {
  await table?.drop();
});

async function newProject(): Promise<Project> {
  const projectId = await table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: 'Sold Script', plan: 'business', now: FIXED_NOW });
  return (await table.stores.projects.getProject(projectId))!;
}

const trail = () => ({ log: table.stores.audit, actor: { tokenId: owner.tokenId, requestId: crypto.randomUUID() } });
const issue = (project: Project, body: unknown, now = FIXED_NOW) => issueKeys(issuing, project, IssueKeysBody.parse(body), now, trail());

/** One check as its own Lambda container makes it (a store of its own), from its own address. */
function check(projectId: string, key: string, fingerprint: string, now = FIXED_NOW + 10) {
  addresses += 1;
  const deps = {
    keys: new DynamoKeyCheckStore(table.db, table.tableName),
    rateLimits: table.stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: noTelemetry,
  };
  return checkKey(deps, { project_id: projectId, key, fingerprint, executor: 'Wave' }, `198.51.${addresses >> 8}.${addresses & 255}`, now).then(validateAnswer);
}

async function storedKey(keyId: string) {
  const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.key(keyId), ConsistentRead: true }));
  return Item;
}

describe('order idempotency', () => {
  it('concurrent issues with one order_id issue once: one answer issued, the others repeat the same keys', async () => {
    const project = await newProject();
    const body = { count: 4, max_fingerprints: 2, order_id: 'sellix-771', note: 'sellix 771' };
    const answers = await Promise.all(Array.from({ length: 6 }, () => issue(project, body)));
    for (const answer of answers) expect({ keys: answer.keys, issued_at: answer.issued_at }).toEqual({ keys: answers[0]!.keys, issued_at: FIXED_NOW });
    expect(answers.filter((answer) => !answer.repeated)).toHaveLength(1);
    expect((await table.stores.projects.getProject(project.id))!.keyCount).toBe(4);
    const listed = await table.stores.projects.listKeysAfter(project.id, 0, 100);
    expect(listed.map((key) => key.id).sort()).toEqual(answers[0]!.keys.map((key) => key.id).sort());
  });

  it('a repeat later answers the same raw values and the first issued_at, and a different body under the order id issues nothing', async () => {
    const project = await newProject();
    const first = await issue(project, { count: 3, order_id: 'o-1' }, FIXED_NOW);
    const repeat = await issue(project, { count: 3, order_id: 'o-1' }, FIXED_NOW + 3_600);
    expect(repeat).toEqual({ ...first, repeated: true });
    await expect(issue(project, { count: 2, order_id: 'o-1' })).rejects.toThrow('order_id "o-1" cannot be used with this token and body');
    expect((await table.stores.projects.getProject(project.id))!.keyCount).toBe(3);
    // Only hashes in the table.
    for (const key of first.keys) expect(JSON.stringify(await storedKey(key.id))).not.toContain(key.key);
  });

  it('a repeat writes the keys a first call recorded but did not live to write, and no other', async () => {
    const project = await newProject();
    const first = await issue(project, { count: 3, order_id: 'o-crash' });
    await table.db.send(new DeleteCommand({ TableName: table.tableName, Key: keyOf.key(first.keys[1]!.id) }));
    const repeat = await issue(project, { count: 3, order_id: 'o-crash' });
    expect(repeat).toEqual({ ...first, repeated: true });
    const restored = await storedKey(first.keys[1]!.id);
    expect(restored).toMatchObject({ keyHash: hashKeyValue(first.keys[1]!.key), issueSeq: 2, current_uses: 0 });
    expect((await table.stores.projects.getProject(project.id))!.keyCount).toBe(3);
  });
});

describe('a replaced key secret', () => {
  it('makes a repeat of an earlier order fail without writing or answering any key, rather than answer keys the order never had', async () => {
    const project = await newProject();
    const first = await issue(project, { count: 2, order_id: 'before-rotation' });
    const rotated: KeyIssuing = { store: table.stores.keys, secret: memoryKeySecret() };
    await expect(issueKeys(rotated, project, IssueKeysBody.parse({ count: 2, order_id: 'before-rotation' }), FIXED_NOW, trail())).rejects.toThrow(
      'the key secret was replaced',
    );
    expect((await table.stores.projects.getProject(project.id))!.keyCount).toBe(2);
    expect((await table.stores.projects.listKeysAfter(project.id, 0, 10)).map((key) => key.id)).toEqual(first.keys.map((key) => key.id));
  });
});

describe('machine binding in the check', () => {
  it('12 concurrent first checks from 12 machines on a max_fingerprints 3 key bind exactly 3, and those are exactly the valid answers', async () => {
    const project = await newProject();
    const [key] = (await issue(project, { max_fingerprints: 3 })).keys;
    const machines = Array.from({ length: 12 }, (_, i) => FP(i + 1));
    const answers = await Promise.all(machines.map((fingerprint) => check(project.id, key!.key, fingerprint)));
    const valid = machines.filter((_, i) => answers[i]!.valid);
    expect(valid).toHaveLength(3);
    expect(answers.filter((answer) => !answer.valid).map((answer) => answer.code)).toEqual(Array(9).fill('KEY_HWID_LOCKED'));
    const detail = await table.stores.keys.getKey(project.id, key!.id);
    expect(detail!.fingerprints.map((bound) => bound.fingerprint).sort()).toEqual(valid.sort());
    expect(detail!.current_uses).toBe(3);
  });

  it('a bound machine keeps running; a new one past the limit is refused KEY_HWID_LOCKED with no use counted and nothing bound', async () => {
    const project = await newProject();
    const [key] = (await issue(project, { max_fingerprints: 1, max_uses: 10 })).keys;
    expect(await check(project.id, key!.key, FP(1))).toMatchObject({ valid: true, uses_left: 9 });
    expect(await check(project.id, key!.key, FP(1))).toMatchObject({ valid: true, uses_left: 8 });
    const before = await storedKey(key!.id);
    expect(await check(project.id, key!.key, FP(2))).toEqual({ valid: false, code: 'KEY_HWID_LOCKED' });
    const after = await storedKey(key!.id);
    expect(after).toEqual(before);
    expect(after?.current_uses).toBe(2);
  });

  it('answers revoked and expired before HWID locked, and HWID locked before over limit', async () => {
    const project = await newProject();
    const [spent] = (await issue(project, { max_fingerprints: 1, max_uses: 1 })).keys;
    await check(project.id, spent!.key, FP(1));
    expect(await check(project.id, spent!.key, FP(2))).toEqual({ valid: false, code: 'KEY_HWID_LOCKED' });
    expect(await check(project.id, spent!.key, FP(1))).toEqual({ valid: false, code: 'KEY_OVER_LIMIT' });
    expect(await check(project.id, spent!.key, FP(2), FIXED_NOW + 40 * 86_400)).toEqual({ valid: false, code: 'KEY_EXPIRED' });
    await table.stores.projects.revokeKey(project.id, spent!.id, FIXED_NOW);
    expect(await check(project.id, spent!.key, FP(2))).toEqual({ valid: false, code: 'KEY_REVOKED' });
  });

  it('a key without max_fingerprints stays unbound and stores no fingerprints, from any number of machines', async () => {
    const project = await newProject();
    const [key] = (await issue(project, {})).keys;
    for (let i = 1; i <= 5; i++) expect(await check(project.id, key!.key, FP(i))).toMatchObject({ valid: true });
    const item = await storedKey(key!.id);
    expect(item).not.toHaveProperty('fingerprints');
    expect(item).not.toHaveProperty('max_fingerprints');
    expect(item?.current_uses).toBe(5);
  });

  it('a reset unbinds every machine in one write; the next machine binds anew', async () => {
    const project = await newProject();
    const [key] = (await issue(project, { max_fingerprints: 2 })).keys;
    await check(project.id, key!.key, FP(1));
    await check(project.id, key!.key, FP(2));
    expect(await check(project.id, key!.key, FP(3))).toMatchObject({ code: 'KEY_HWID_LOCKED' });
    expect(await resetHwid(table.stores.keys, project, key!.id, FIXED_NOW, trail())).toEqual({ ok: true, cleared: 2 });
    expect(await check(project.id, key!.key, FP(3))).toMatchObject({ valid: true });
    const detail = await table.stores.keys.getKey(project.id, key!.id);
    expect(detail!.fingerprints).toEqual([{ fingerprint: FP(3), bound_at: FIXED_NOW + 10 }]);
    expect(detail!.last_check_at).toBe(FIXED_NOW + 10);
  });

  it("a reset of an unbound key clears 0, and of another project's key is not found", async () => {
    const project = await newProject();
    const other = await newProject();
    const [key] = (await issue(project, {})).keys;
    expect(await table.stores.keys.resetFingerprints(project.id, key!.id)).toBe(0);
    expect(await table.stores.keys.resetFingerprints(other.id, key!.id)).toBeUndefined();
    expect(await table.stores.keys.getKey(other.id, key!.id)).toBeUndefined();
  });
});

describe('capacity', () => {
  it('issuing 100 keys costs 1 WCU a key on the table plus a constant, no read per key, and 10 requests', async () => {
    const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
    try {
      const stores = createStores(recorder.db, table.tableName);
      const project = await newProject();
      recorder.take();
      await issueKeys(
        { store: stores.keys, secret: issuing.secret },
        project,
        IssueKeysBody.parse({ count: 100, order_id: 'bulk-1', max_fingerprints: 1 }),
        FIXED_NOW,
        {
          log: stores.audit,
          actor: { tokenId: owner.tokenId, requestId: 'r-1' },
        },
      );
      const tally = recorder.take();
      // The order read, the lease, the project read, the counter and order transaction, 4 batches of 25, the lease given back, the audit entry.
      expect(tally.requests).toBe(10);
      expect(tally.read.table).toBeLessThanOrEqual(2);
      expect(tally.write.table).toBeGreaterThanOrEqual(100);
      expect(tally.write.table).toBeLessThanOrEqual(110);
    } finally {
      recorder.db.destroy();
    }
  });

  it('a check writes the key item once: 1 WCU with 1 machine bound, 2 WCU with 10 (the item passes 1 KB); binding a new machine costs one failed write, its record and two reads more', async () => {
    const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
    try {
      const keys = new DynamoKeyCheckStore(recorder.db, table.tableName);
      const project = await newProject();
      const [key] = (await issue(project, { max_fingerprints: 10, discord_id: '123456789012345678' })).keys;
      const input = (fingerprint: string, now: number) => ({
        projectId: project.id,
        keyId: key!.id,
        keyHash: hashKeyValue(key!.key),
        fingerprint,
        now,
        perKeyPerMinute: LOADER_LIMITS.perKeyPerMinute,
        report: { project_id: project.id, executor: 'Wave', fingerprint },
        mayRun: (state: KeyState | undefined) => refusalOf(state, project.id, hashKeyValue(key!.key), now, fingerprint) === undefined,
      });
      recorder.take();
      expect(await keys.checkAndCount(input(FP(1), FIXED_NOW + 1))).toMatchObject({ outcome: 'counted' });
      // The write that assumes a bound machine fails (AWS charges it 1 WCU too), a read of the attributes it tests says
      // why (the write asks for no more of the item than it answers with); then the machine's record of its key (1 WCU)
      // and a read of its blacklist entry (docs/selling-keys.md, "Buyer blacklist"); the write that binds counts.
      expect(recorder.take()).toMatchObject({ requests: 5, conditionFailures: 1, write: { table: 2, indexes: {} } });
      expect(await keys.checkAndCount(input(FP(1), FIXED_NOW + 2))).toMatchObject({ outcome: 'counted' });
      expect(recorder.take()).toMatchObject({ requests: 1, conditionFailures: 0, write: { table: 1, indexes: {} } });
      for (let i = 2; i <= 10; i++) await keys.checkAndCount(input(FP(i), FIXED_NOW + i + 1));
      recorder.take();
      expect(await keys.checkAndCount(input(FP(4), FIXED_NOW + 20))).toMatchObject({ outcome: 'counted' });
      expect(recorder.take()).toMatchObject({ requests: 1, conditionFailures: 0, write: { table: 2, indexes: {} } });
    } finally {
      recorder.db.destroy();
    }
  });
});
