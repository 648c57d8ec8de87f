import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf, PARTITION, RETENTION_SECONDS } from '#adapters/layout';
import { TABLE } from '#adapters/table-definition';
import { type AuditEntry, apiEntry } from '#domain/audit';
import type { Caller } from '#domain/model';
import type { ProjectStore } from '#domain/ports';
import { callerOfToken, hashToken, issueToken, newApiToken, scopeOf } from '#domain/tokens';
import { createAuthorizer } from '#functions/authorizer';
import { createRouteHandlers } from '#http/routes';
import { memoryKeySecret } from '#local/key-secret';
import {
  apiEvent,
  authorizerEvent,
  createTestTable,
  lambdaContext,
  type RouteEntry,
  type SeededOwner,
  seedOwner,
  seedProject,
  type TestTable,
} from '#test-support/fixtures';

/**
 * The audit trail on DynamoDB Local: the route handlers the stack deploys, behind the real authorizer, write an
 * entry for every change they make, with the change (or, for a bulk revoke, before and after it), and the entries
 * list newest first.
 */
const NOW = 1_750_000_000;
const WATERMARK = 'feedfacecafebeef';
const WEBHOOK_URL = 'https://discord.com/api/webhooks/1234567890123456789/webhook-token-that-must-never-be-audited';

let table: TestTable;
let owner: SeededOwner;
let caller: Caller;
let clock = NOW;
let handlers: ReturnType<typeof createRouteHandlers>;
let project: Awaited<ReturnType<typeof seedProject>>;
const authorizer = () => createAuthorizer({ tokens: table.stores.tokens, logger: new Logger({ serviceName: 'developer-api-authorizer' }) });

/** The caller exactly as API Gateway hands it on: the context the real authorizer returned for the token. */
async function authorizedCaller(token: string): Promise<Caller> {
  const { context } = await authorizer()(authorizerEvent(`Bearer ${token}`));
  if (typeof context?.ownerId !== 'string' || typeof context.tokenHash !== 'string') throw new Error('authorizer gave no caller');
  return callerOfToken(context.ownerId, context.tokenHash, scopeOf(context.scope));
}

async function call(entry: RouteEntry, body: unknown, requestId: string, via = handlers) {
  const result = await via[entry](apiEvent(entry, { projectId: project.projectId, caller, body, requestId }), lambdaContext());
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
}

const entries = (limit = 100) => table.stores.audit.list({ projectId: project.projectId }, limit);
const entryOf = async (requestId: string): Promise<AuditEntry | undefined> => (await entries()).find((entry) => entry.requestId === requestId);

beforeAll(async () => {
  table = await createTestTable('audit-trail');
  handlers = createRouteHandlers({
    stores: table.stores,
    keySecret: memoryKeySecret(),
    now: () => clock,
    logger: new Logger({ serviceName: 'developer-api' }),
  });
  owner = await seedOwner(table.stores);
  project = await seedProject(table.stores, {
    ownerId: owner.ownerId,
    keys: 4,
    versions: ['first', 'second'],
    webhooks: [{ url: WEBHOOK_URL, events: ['version_deployed'] }],
  });
  await table.stores.dashboard.issueKeys({ projectId: project.projectId, count: 30, watermark: WATERMARK, tier: 'standard', maxUses: null, now: NOW });
  caller = await authorizedCaller(owner.token);
});

afterAll(async () => {
  await table?.drop();
});

describe('an audit entry for every change through the API', () => {
  it('revoke: the project, the action, the token id, the request id, the time, the key and one key revoked, kept 90 days', async () => {
    clock = NOW + 10;
    const keyId = project.keys[0]!.id;
    expect(await call('revoke-key', { key_id: keyId }, 'req-revoke')).toMatchObject({ status: 200 });
    expect(await entryOf('req-revoke')).toEqual({
      entryId: expect.stringMatching(/^aud_[0-9a-f]{20}$/),
      at: NOW + 10,
      projectId: project.projectId,
      action: 'key.revoke',
      status: 'completed',
      source: 'api',
      tokenId: owner.tokenId,
      requestId: 'req-revoke',
      target: { key_id: keyId },
      outcome: { revoked_count: 1 },
    });
    const entry = await entryOf('req-revoke');
    const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.auditEntry(entry!) }));
    expect(Item?.[TABLE.ttlAttribute]).toBe(NOW + 10 + RETENTION_SECONDS.audit);
    expect(RETENTION_SECONDS.audit).toBeGreaterThanOrEqual(90 * 86_400);
  });

  it('revoke of a key already revoked: entered with revoked_count 0; of an unknown key: a 404 and no entry', async () => {
    const keyId = project.keys[0]!.id;
    expect(await call('revoke-key', { key_id: keyId }, 'req-again')).toMatchObject({ status: 200 });
    expect(await entryOf('req-again')).toMatchObject({ action: 'key.revoke', status: 'completed', target: { key_id: keyId }, outcome: { revoked_count: 0 } });
    expect(await call('revoke-key', { key_id: 'key_does_not_exist' }, 'req-unknown')).toMatchObject({ status: 404 });
    expect(await entryOf('req-unknown')).toBeUndefined();
  });

  it('bulk revoke: the watermark and the revoked_count of the answer', async () => {
    const reply = await call('revoke-bulk', { watermark: WATERMARK }, 'req-bulk');
    expect(reply).toMatchObject({ status: 200, body: { revoked_count: 30 } });
    expect(await entryOf('req-bulk')).toMatchObject({
      action: 'key.revoke_bulk',
      status: 'completed',
      tokenId: owner.tokenId,
      target: { watermark: WATERMARK },
      outcome: { revoked_count: 30 },
    });
  });

  it('rollback: the version asked for, the previous and the new current version', async () => {
    const [first, second] = project.versions;
    expect(await call('rollback', { version_id: first!.id }, 'req-rollback')).toMatchObject({ status: 200 });
    expect(await entryOf('req-rollback')).toMatchObject({
      action: 'version.rollback',
      status: 'completed',
      tokenId: owner.tokenId,
      target: { version_id: first!.id },
      outcome: { previous_version_id: second!.id, current_version_id: first!.id },
    });
    expect(await call('rollback', { version_id: 'ver_does_not_exist' }, 'req-rollback-404')).toMatchObject({ status: 404 });
    expect(await entryOf('req-rollback-404')).toBeUndefined();
  });

  it('reads change nothing and enter nothing', async () => {
    const before = (await entries()).length;
    for (const entry of ['list-keys', 'list-versions', 'list-webhooks'] as const) expect((await call(entry, undefined, `req-${entry}`)).status).toBe(200);
    expect(await entries()).toHaveLength(before);
  });

  it('a bulk revoke that fails half-way leaves an entry telling how many keys it revoked, and the retry enters the rest', async () => {
    const watermark = '0123456789abcdef';
    await table.stores.dashboard.issueKeys({ projectId: project.projectId, count: 50, watermark, tier: 'standard', maxUses: null, now: NOW });
    // The store fails at its 21st revoke, as a throttled write past the SDK's retries would.
    let writes = 0;
    const failing = new Proxy(table.stores.projects, {
      get: (target, property) => {
        if (property === 'revokeIfActive') {
          return (async (...args) => {
            if (++writes === 21) throw new Error('ProvisionedThroughputExceededException');
            return target.revokeIfActive(...args);
          }) satisfies ProjectStore['revokeIfActive'];
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    // Silent: the 500 and its log line are this test's expected outcome.
    const failingHandlers = createRouteHandlers({
      stores: { ...table.stores, projects: failing },
      keySecret: memoryKeySecret(),
      now: () => clock,
      logger: new Logger({ serviceName: 'developer-api', logLevel: 'SILENT' }),
    });
    expect(await call('revoke-bulk', { watermark }, 'req-bulk-cut', failingHandlers)).toMatchObject({ status: 500 });

    const revoked = (await table.stores.projects.listKeysAfter(project.projectId, 0, 1000)).filter(
      (key) => key.watermark === watermark && key.revoked === 1,
    ).length;
    expect(revoked).toBeGreaterThanOrEqual(20);
    expect(revoked).toBeLessThan(50);
    expect(await entryOf('req-bulk-cut')).toMatchObject({
      action: 'key.revoke_bulk',
      status: 'failed',
      target: { watermark },
      outcome: { revoked_count: revoked },
    });

    expect(await call('revoke-bulk', { watermark }, 'req-bulk-retry')).toMatchObject({ status: 200, body: { revoked_count: 50 - revoked } });
    expect(await entryOf('req-bulk-retry')).toMatchObject({ status: 'completed', outcome: { revoked_count: 50 - revoked } });
  });

  it('names the token that made each change: a second token of the owner is told apart from the first', async () => {
    const second = newApiToken();
    await issueToken(table.stores.tokens, { ownerId: owner.ownerId, tokenHash: hashToken(second), now: NOW });
    const first = caller;
    caller = await authorizedCaller(second);
    try {
      expect(await call('revoke-key', { key_id: project.keys[1]!.id }, 'req-second-token')).toMatchObject({ status: 200 });
    } finally {
      caller = first;
    }
    const entry = await entryOf('req-second-token');
    expect(entry?.tokenId).toBe(callerOfToken(owner.ownerId, hashToken(second), 'write').tokenId);
    expect(entry?.tokenId).not.toBe(owner.tokenId);
  });
});

describe('listing the trail', () => {
  it('lists a project newest first, and --limit keeps the newest', async () => {
    const all = await entries(1000);
    const ids = all.map((entry) => entry.entryId);
    expect(ids).toEqual(ids.toSorted().reverse());
    expect(all.at(-1)?.requestId).toBe('req-revoke');
    expect(all[0]?.requestId).toBe('req-second-token');
    expect(await entries(3)).toEqual(all.slice(0, 3));
  });

  it('keeps the trail of a project to that project', async () => {
    const other = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 1 });
    expect(await table.stores.audit.list({ projectId: other.projectId }, 100)).toEqual([]);
  });
});

describe('no write overwrites an entry', () => {
  const entryLike = (taken: AuditEntry, action: AuditEntry['action']): AuditEntry => ({
    ...taken,
    action,
    requestId: `clash-${action}`,
    target: { clash: true },
    outcome: {},
  });

  it('an entry whose id is taken is refused, alone or with the revoke or rollback it records, and nothing of that change is written', async () => {
    const other = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 1, versions: ['one', 'two'] });
    const taken = apiEntry(
      { actor: { tokenId: caller.tokenId, requestId: 'first' } },
      { projectId: other.projectId, at: NOW, action: 'key.revoke', target: { key_id: 'x' }, outcome: { revoked_count: 1 } },
    );
    await table.stores.audit.record(taken);

    await expect(table.stores.audit.record(entryLike(taken, 'key.revoke_bulk'))).rejects.toThrow();
    const keyId = other.keys[0]?.id ?? '';
    await expect(table.stores.projects.revokeKey(other.projectId, keyId, NOW, entryLike(taken, 'key.revoke'))).rejects.toThrow();
    const { Item: key } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.key(keyId), ConsistentRead: true }));
    expect(key?.revoked).toBe(0);
    await expect(table.stores.projects.setCurrentVersion(other.projectId, other.versions[0]?.id ?? '', entryLike(taken, 'version.rollback'))).rejects.toThrow();
    expect((await table.stores.projects.getProject(other.projectId))?.currentVersionId).toBe(other.versions[1]?.id);

    expect(await table.stores.audit.list({ projectId: other.projectId }, 100)).toEqual([taken]);
  });
});

describe('selling keys in the trail', () => {
  it('enters key.issue with the order, the count and the ids (a repeat issuing 0) and key.reset_hwid with what it cleared; never a raw key value', async () => {
    const order = { count: 2, max_fingerprints: 1, order_id: 'audit-order' };
    const issued = await call('issue-keys', order, 'req-issue');
    expect(issued.status).toBe(200);
    expect(await call('issue-keys', order, 'req-issue-again')).toMatchObject({ status: 200 });
    const keys = issued.body.keys as { id: string; key: string }[];
    const ids = keys.map((key) => key.id).join(',');
    expect(await entryOf('req-issue')).toMatchObject({
      action: 'key.issue',
      status: 'completed',
      tokenId: owner.tokenId,
      target: { order_id: 'audit-order', count: 2 },
      outcome: { issued_count: 2, key_ids: ids },
    });
    expect(await entryOf('req-issue-again')).toMatchObject({
      action: 'key.issue',
      target: { order_id: 'audit-order', count: 2 },
      outcome: { issued_count: 0, key_ids: ids },
    });
    expect(await call('reset-hwid', { key_id: keys[0]!.id }, 'req-reset')).toMatchObject({ status: 200, body: { ok: true, cleared: 0 } });
    expect(await entryOf('req-reset')).toMatchObject({ action: 'key.reset_hwid', target: { key_id: keys[0]!.id }, outcome: { cleared: 0 } });
    const text = JSON.stringify(await entries(1000));
    for (const key of keys) expect(text).not.toContain(key.key);
  });
});

describe('what an entry never holds', () => {
  it('no raw token, token hash, key value or webhook URL or token appears in any audit entry of the table', async () => {
    const { Items = [] } = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `${PARTITION.projectAudit}${project.projectId}` },
      }),
    );
    const owners = await table.stores.audit.list({ ownerId: owner.ownerId }, 100);
    expect(Items.length).toBeGreaterThan(5);
    expect(owners.length).toBeGreaterThan(0);
    const text = JSON.stringify([Items, owners]);
    const webhookToken = WEBHOOK_URL.split('/').at(-1) ?? '';
    for (const secret of [owner.token, owner.tokenHash, WEBHOOK_URL, webhookToken]) expect(text).not.toContain(secret);
  });
});
