import { beforeEach, describe, expect, it, vi } from 'vitest';
import { AUDIT_UNSETTLED } from '#domain/audit';
import type { Key } from '#domain/model';
import { BULK_REVOKE_ANSWER_RESERVE_MS } from '#domain/project-api';
import { CALLER, expectError, invoke, type MemoryApi, memoryApi, NOW, PROJECT_ID, SECURITY_HEADERS } from '#test-support/api-harness';
import { captureLogs } from '#test-support/event-fixtures';
import { apiEvent, lambdaContext } from '#test-support/fixtures';

let api: MemoryApi;
beforeEach(() => {
  api = memoryApi();
});

const SPEC_KEY_FIELDS = ['current_uses', 'expires_at', 'id', 'issued_at', 'max_uses', 'revoked', 'tier', 'user_hash', 'watermark'];

describe('GET /v1/projects/:id/keys (spec §4.1)', () => {
  const list = (query?: Record<string, string>) => invoke(api.handlers['list-keys'], apiEvent('list-keys', { projectId: PROJECT_ID, query }));
  const listedIds = async (query?: Record<string, string>) => ((await list(query)).body.keys as Key[]).map((key) => key.id);

  it('answers { keys, total } with exactly the spec fields of each key, total from the project counter', async () => {
    // 248 keys issued before these two, on an earlier page: the total counts them, this page does not hold them.
    api = memoryApi({ keyCount: 248 });
    const issued = api.store.addKeys(PROJECT_ID, [{}, { max_uses: 5, current_uses: 3, revoked: 1 }]);
    const reply = await list({ offset: '248' });
    expect(reply.status).toBe(200);
    expect(reply.headers).toMatchObject(SECURITY_HEADERS);
    expect(reply.body.total).toBe(250);
    const keys = reply.body.keys as Record<string, unknown>[];
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(Object.keys(key).sort()).toEqual(SPEC_KEY_FIELDS);
    expect(keys[1]).toEqual({
      id: issued[1]!.id,
      user_hash: 'b'.repeat(64),
      tier: 'standard',
      watermark: '0123456789abcdef',
      issued_at: 1_700_000_000,
      expires_at: 1_702_592_000,
      max_uses: 5,
      current_uses: 3,
      revoked: 1,
    });
    expect(keys[0]).toMatchObject({ max_uses: null, revoked: 0 });
  });

  it('answers the first 50 keys in issue order by default', async () => {
    const issued = api.store.addKeys(
      PROJECT_ID,
      Array.from({ length: 60 }, () => ({})),
    );
    expect(await listedIds()).toEqual(issued.slice(0, 50).map((key) => key.id));
  });

  it('maps limit and offset to the keys issued after the offset, so a deep page is that page', async () => {
    api = memoryApi({ keyCount: 200_000 });
    const issued = api.store.addKeys(
      PROJECT_ID,
      Array.from({ length: 101 }, () => ({})),
    );
    expect(await listedIds({ limit: '100', offset: '200000' })).toEqual(issued.slice(0, 100).map((key) => key.id));
    expect(await listedIds({ limit: '2', offset: '200099' })).toEqual(issued.slice(99).map((key) => key.id));
  });

  it('with watermark, answers only the keys carrying it, revoked ones too, paged among them, total counting them', async () => {
    const leaked = 'feedfacecafebeef';
    const keys = api.store.addKeys(PROJECT_ID, [{ watermark: leaked }, {}, { watermark: leaked, revoked: 1 }, {}, { watermark: leaked }]);
    const marked = [keys[0], keys[2], keys[4]].map((key) => key!.id);
    const all = await list({ watermark: leaked });
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect((all.body.keys as Key[]).map((key) => key.id)).toEqual(marked);
    for (const key of all.body.keys as Record<string, unknown>[]) expect(Object.keys(key).sort()).toEqual(SPEC_KEY_FIELDS);
    expect(await listedIds({ watermark: leaked, offset: '1', limit: '1' })).toEqual([marked[1]]);
    expect(await list({ watermark: 'aaaaaaaaaaaaaaaa' })).toMatchObject({ status: 200, body: { keys: [], total: 0 } });
  });

  it.each([
    [{ watermark: 'WM_feedfacecafebeef' }, 'watermark must be the 16 hex characters after the WM_ prefix: drop the prefix and send "feedfacecafebeef"'],
    [{ watermark: 'FEEDFACECAFEBEEF' }, 'watermark must be lowercase hex: send "feedfacecafebeef"'],
    [{ limit: '101' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '0' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '-5' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '2.5' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '1e2' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '' }, 'limit must be a whole number between 1 and 100'],
    [{ offset: '-1' }, 'offset must be a whole number between 0 and 999999999999999'],
    [{ offset: '1e3' }, 'offset must be a whole number between 0 and 999999999999999'],
    [{ offset: '12345678901234567890' }, 'offset must be a whole number between 0 and 999999999999999'],
    [{ page: '2' }, 'Unknown query parameter "page"; allowed: limit, offset, watermark'],
  ])('answers the query %j with 400 and says what is wrong, without reading keys', async (query, message) => {
    const listKeysAfter = vi.spyOn(api.store, 'listKeysAfter');
    expectError(await list(query), 400, message);
    expect(listKeysAfter).not.toHaveBeenCalled();
  });

  it.each(['__proto__', 'constructor', 'toString'])('refuses the query parameter %s as unknown, like any other', async (name) => {
    // Parsed from JSON as the Lambda runtime does, so the name is an own property of the query object.
    const query = JSON.parse(`{"${name}": "1"}`) as Record<string, string>;
    expectError(await list(query), 400, `Unknown query parameter "${name}"; allowed: limit, offset, watermark`);
  });

  it('refuses a repeated query parameter as ambiguous', async () => {
    const event = apiEvent('list-keys', { projectId: PROJECT_ID, query: { limit: '20' }, multiValueQuery: { limit: ['10', '20'] } });
    expectError(await invoke(api.handlers['list-keys'], event), 400, 'Query parameter "limit" was given 2 times; give it once');
  });
});

describe('POST /v1/projects/:id/keys/revoke (spec §4.2)', () => {
  const revoke = (body: unknown) => invoke(api.handlers['revoke-key'], apiEvent('revoke-key', { projectId: PROJECT_ID, body }));

  it('revokes the key at the time of the request and answers { ok: true }', async () => {
    const [key] = api.store.addKeys(PROJECT_ID, [{}]);
    const reply = await revoke({ key_id: key!.id });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true });
    expect(api.store.storedKey(key!.id)).toMatchObject({ revoked: 1, revokedAt: NOW });
  });

  it("records who revoked the key, the caller's token id, and the key detail shows it as revoked_by (issue 33)", async () => {
    const [key] = api.store.addKeys(PROJECT_ID, [{}]);
    expect((await api.store.getKey(PROJECT_ID, key!.id))?.revoked_by).toBeNull();
    await revoke({ key_id: key!.id });
    expect((await api.store.getKey(PROJECT_ID, key!.id))?.revoked_by).toBe(CALLER.tokenId);
  });

  it('answers an empty object with 400 saying key_id is required, without revoking anything', async () => {
    const revokeKey = vi.spyOn(api.store, 'revokeKey');
    expectError(await revoke({}), 400, 'key_id is required');
    expect(revokeKey).not.toHaveBeenCalled();
  });

  it('answers a key_id that is not a string with 400', async () => {
    expectError(await revoke({ key_id: 12 }), 400, 'key_id must be a string');
  });

  it('answers an unknown key with 404', async () => {
    expectError(await revoke({ key_id: 'key_gone' }), 404, 'Key key_gone not found in this project');
  });

  it('answers a key of another project with 404, as if it did not exist, and leaves it active', async () => {
    api.store.addProject({ id: 'prj_other', ownerId: 'own_other' });
    const [theirs] = api.store.addKeys('prj_other', [{}]);
    expectError(await revoke({ key_id: theirs!.id }), 404, `Key ${theirs!.id} not found in this project`);
    expect(api.store.storedKey(theirs!.id)?.revoked).toBe(0);
  });

  it('answers an already revoked key with 200 { ok: true } again, keeping the first revocation time', async () => {
    const [key] = api.store.addKeys(PROJECT_ID, [{}]);
    await api.store.revokeKey(PROJECT_ID, key!.id, NOW - 600);
    const reply = await revoke({ key_id: key!.id });
    expect([reply.status, reply.body]).toEqual([200, { ok: true }]);
    expect(api.store.storedKey(key!.id)?.revokedAt).toBe(NOW - 600);
  });
});

describe('POST /v1/projects/:id/keys/revoke-bulk (spec §4.3)', () => {
  const bulk = (body: unknown) => invoke(api.handlers['revoke-bulk'], apiEvent('revoke-bulk', { projectId: PROJECT_ID, body }));
  const watermark = 'deadbeefdeadbeef';

  it("records the caller's token id as revoked_by on every key it revoked (issue 33)", async () => {
    const marked = api.store.addKeys(PROJECT_ID, [{ watermark }, { watermark }]);
    await bulk({ watermark });
    for (const key of marked) expect((await api.store.getKey(PROJECT_ID, key.id))?.revoked_by).toBe(CALLER.tokenId);
  });

  it("revokes the project's active keys with the watermark and counts those it changed, and no other key", async () => {
    const marked = api.store.addKeys(
      PROJECT_ID,
      Array.from({ length: 30 }, () => ({ watermark })),
    );
    const [alreadyRevoked] = api.store.addKeys(PROJECT_ID, [{ watermark, revoked: 1 }]);
    const otherWatermark = api.store.addKeys(PROJECT_ID, [{ watermark: 'aaaaaaaaaaaaaaaa' }]);
    api.store.addProject({ id: 'prj_other', ownerId: 'own_other' });
    const otherProject = api.store.addKeys('prj_other', [{ watermark }]);

    const reply = await bulk({ watermark });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true, revoked_count: 30, complete: true });
    for (const key of marked) expect(api.store.storedKey(key.id)).toMatchObject({ revoked: 1, revokedAt: NOW });
    expect(api.store.storedKey(alreadyRevoked!.id)?.revokedAt).toBeUndefined();
    for (const key of [...otherWatermark, ...otherProject]) expect(api.store.storedKey(key.id)?.revoked).toBe(0);
  });

  it("stops by the function's own clock: with less than the answer reserve left it answers 200 complete: false, and a fresh call finishes", async () => {
    api.store.addKeys(
      PROJECT_ID,
      Array.from({ length: 5 }, () => ({ watermark })),
    );
    const late = { ...lambdaContext(), getRemainingTimeInMillis: () => BULK_REVOKE_ANSWER_RESERVE_MS - 1 };
    const stopped = await invoke(api.handlers['revoke-bulk'], apiEvent('revoke-bulk', { projectId: PROJECT_ID, body: { watermark } }), late);
    expect([stopped.status, stopped.body]).toEqual([200, { ok: true, revoked_count: 0, complete: false }]);
    expect((await bulk({ watermark })).body).toEqual({ ok: true, revoked_count: 5, complete: true });
  });

  it('answers 200 with its count, not 500, when the audit entry cannot be completed after the revokes, and logs the outcome at error level', async () => {
    const marked = api.store.addKeys(
      PROJECT_ID,
      Array.from({ length: 3 }, () => ({ watermark })),
    );
    vi.spyOn(api.store, 'finish').mockRejectedValue(new Error('ProvisionedThroughputExceededException'));
    const logs = captureLogs();
    try {
      const reply = await bulk({ watermark });
      expect([reply.status, reply.body]).toEqual([200, { ok: true, revoked_count: 3, complete: true }]);
    } finally {
      logs.restore();
    }
    for (const key of marked) expect(api.store.storedKey(key.id)?.revoked).toBe(1);
    const [entry] = api.store.auditEntries();
    expect(logs.entries().filter((line) => line.message === AUDIT_UNSETTLED)).toEqual([
      expect.objectContaining({ level: 'ERROR', entryId: entry?.entryId, projectId: PROJECT_ID, outcome: { revoked_count: 3, complete: true } }),
    ]);
  });

  it('answers { ok: true, revoked_count: 0, complete: true } when no key carries the watermark', async () => {
    api.store.addKeys(PROJECT_ID, [{ watermark: 'aaaaaaaaaaaaaaaa' }]);
    const reply = await bulk({ watermark });
    expect([reply.status, reply.body]).toEqual([200, { ok: true, revoked_count: 0, complete: true }]);
  });

  it.each([
    ['WM_deadbeefdeadbeef', 'watermark must be the 16 hex characters after the WM_ prefix: drop the prefix and send "deadbeefdeadbeef"'],
    ['DEADBEEFDEADBEEF', 'watermark must be lowercase hex: send "deadbeefdeadbeef"'],
    ['deadbeef', 'watermark must be exactly 16 lowercase hex characters (0-9, a-f); got 8 characters'],
  ])('answers the watermark %j with 400 and advice, without touching any key', async (value, message) => {
    const keyIdsWithWatermark = vi.spyOn(api.store, 'keyIdsWithWatermark');
    expectError(await bulk({ watermark: value }), 400, message);
    expect(keyIdsWithWatermark).not.toHaveBeenCalled();
  });

  it('answers a missing watermark with 400', async () => {
    expectError(await bulk({}), 400, 'watermark is required');
  });
});
