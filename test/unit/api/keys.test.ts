import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as listKeys } from '#api/list-keys';
import { handler as revokeBulk } from '#api/revoke-bulk';
import { handler as revokeKey } from '#api/revoke-key';
import { keyOf } from '#store/layout';
import { TABLE } from '#store/table-definition';
import { apiEvent } from '#test-support/fixtures';
import { NOW, PROJECT_ID, SECURITY_HEADERS, conditionFailed, expectError, invoke, keyItem, projectItem, useMockTable } from './mock-table';

const { ddb, givenProject } = useMockTable();

const SPEC_KEY_FIELDS = ['current_uses', 'expires_at', 'id', 'issued_at', 'max_uses', 'revoked', 'tier', 'user_hash', 'watermark'];

describe('GET /v1/projects/:id/keys (spec §4.1)', () => {
  const list = (query?: Record<string, string>) => invoke(listKeys, apiEvent('list-keys', { projectId: PROJECT_ID, query }));

  it('answers { keys, total } with exactly the spec fields of each key, total from the project counter', async () => {
    givenProject(projectItem({ keyCount: 250 }));
    ddb.on(QueryCommand).resolves({ Items: [keyItem(1), keyItem(2, { revoked: 1, max_uses: 5 })] });
    const reply = await list();
    expect(reply.status).toBe(200);
    expect(reply.headers).toMatchObject(SECURITY_HEADERS);
    expect(reply.body.total).toBe(250);
    const keys = reply.body.keys as Record<string, unknown>[];
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(Object.keys(key).sort()).toEqual(SPEC_KEY_FIELDS);
    expect(keys[1]).toEqual({
      id: 'key_00000000000000000002',
      user_hash: 'b'.repeat(64),
      tier: 'standard',
      watermark: '0123456789abcdef',
      issued_at: 1_699_500_000,
      expires_at: 1_702_092_000,
      max_uses: 5,
      current_uses: 3,
      revoked: 1,
    });
    expect(keys[0]).toMatchObject({ max_uses: null, revoked: 0 });
  });

  it('never lets internal attributes (pk, sk, issueSeq, index keys, projectId) into the response', async () => {
    ddb.on(QueryCommand).resolves({ Items: [keyItem(1, { secret: 'raw-key-value' })] });
    const reply = await list();
    for (const internal of ['"pk"', '"sk"', 'KEY#', 'issueSeq', 'watermarkKey', 'issueOrderKey', 'projectId', 'entity', 'raw-key-value']) {
      expect(reply.raw).not.toContain(internal);
    }
  });

  it('reads the first 50 keys in issue order by default', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    expect((await list()).status).toBe(200);
    const [query] = ddb.commandCalls(QueryCommand);
    expect(query?.args[0].input).toMatchObject({
      IndexName: TABLE.indexes.byIssueOrder.name,
      Limit: 50,
      ExpressionAttributeValues: { ':p': PROJECT_ID, ':after': 0 },
    });
  });

  it('maps limit and offset to a sequence range, so a deep page costs only its own keys', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    expect((await list({ limit: '100', offset: '200000' })).status).toBe(200);
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({ Limit: 100, ExpressionAttributeValues: { ':after': 200_000 } });
  });

  it.each([
    [{ limit: '101' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '0' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '-5' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '2.5' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '1e2' }, 'limit must be a whole number between 1 and 100'],
    [{ limit: '' }, 'limit must be a whole number between 1 and 100'],
    [{ offset: '-1' }, 'offset must be a whole number between 0 and 999999999999999'],
    [{ offset: '1e3' }, 'offset must be a whole number between 0 and 999999999999999'],
    [{ offset: '12345678901234567890' }, 'offset must be a whole number between 0 and 999999999999999'],
    [{ page: '2' }, 'Unknown query parameter "page"; allowed: limit, offset'],
  ])('answers the query %j with 400 and says what is wrong, without reading keys', async (query, message) => {
    expectError(await list(query), 400, message);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it.each(['__proto__', 'constructor', 'toString'])('refuses the query parameter %s as unknown, like any other', async (name) => {
    // Parsed from JSON as the Lambda runtime does, so the name is an own property of the query object.
    const query = JSON.parse(`{"${name}": "1"}`) as Record<string, string>;
    expectError(await list(query), 400, `Unknown query parameter "${name}"; allowed: limit, offset`);
  });

  it('refuses a repeated query parameter as ambiguous', async () => {
    const event = apiEvent('list-keys', { projectId: PROJECT_ID, query: { limit: '20' }, multiValueQuery: { limit: ['10', '20'] } });
    expectError(await invoke(listKeys, event), 400, 'Query parameter "limit" was given 2 times; give it once');
  });
});

describe('POST /v1/projects/:id/keys/revoke (spec §4.2)', () => {
  const revoke = (body: unknown) => invoke(revokeKey, apiEvent('revoke-key', { projectId: PROJECT_ID, body }));

  it('revokes the key with a write conditioned on it belonging to the project, and answers { ok: true }', async () => {
    ddb.on(UpdateCommand, { Key: keyOf.key('key_1') }).resolves({});
    const reply = await revoke({ key_id: 'key_1' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true });
    const [write] = ddb.commandCalls(UpdateCommand, { Key: keyOf.key('key_1') });
    expect(write?.args[0].input).toMatchObject({
      UpdateExpression: expect.stringContaining('REMOVE watermarkKey'),
      ConditionExpression: 'projectId = :p AND revoked = :zero',
      ExpressionAttributeValues: { ':p': PROJECT_ID, ':one': 1, ':zero': 0, ':now': NOW },
    });
  });

  it('answers an empty object with 400 saying key_id is required', async () => {
    expectError(await revoke({}), 400, 'key_id is required');
    expect(ddb.commandCalls(UpdateCommand, { Key: keyOf.key('key_1') })).toHaveLength(0);
  });

  it('answers a key_id that is not a string with 400', async () => {
    expectError(await revoke({ key_id: 12 }), 400, 'key_id must be a string');
  });

  it('answers an unknown key with 404', async () => {
    ddb.on(UpdateCommand, { Key: keyOf.key('key_gone') }).rejects(conditionFailed());
    expectError(await revoke({ key_id: 'key_gone' }), 404, 'Key key_gone not found in this project');
  });

  it('answers a key of another project with 404, as if it did not exist', async () => {
    ddb.on(UpdateCommand, { Key: keyOf.key('key_theirs') }).rejects(conditionFailed(keyItem(1, { projectId: 'prj_other', revoked: 0 })));
    expectError(await revoke({ key_id: 'key_theirs' }), 404, 'Key key_theirs not found in this project');
  });

  it('answers an already revoked key with 200 { ok: true } again', async () => {
    ddb.on(UpdateCommand, { Key: keyOf.key('key_done') }).rejects(conditionFailed(keyItem(1, { revoked: 1 })));
    const reply = await revoke({ key_id: 'key_done' });
    expect([reply.status, reply.body]).toEqual([200, { ok: true }]);
  });
});

describe('POST /v1/projects/:id/keys/revoke-bulk (spec §4.3)', () => {
  const bulk = (body: unknown) => invoke(revokeBulk, apiEvent('revoke-bulk', { projectId: PROJECT_ID, body }));
  const watermark = 'deadbeefdeadbeef';

  it('revokes the active keys the watermark index lists for this project and counts those it changed', async () => {
    const listed = [1, 2, 3, 4].map((seq) => ({ pk: `KEY#key_${seq}`, sk: 'KEY', watermarkKey: `${PROJECT_ID}#${watermark}`, issueSeq: seq }));
    ddb.on(QueryCommand).resolvesOnce({ Items: listed.slice(0, 2), LastEvaluatedKey: { pk: 'KEY#key_2' } }).resolves({ Items: listed.slice(2) });
    ddb.on(UpdateCommand, { Key: keyOf.key('key_1') }).resolves({});
    ddb.on(UpdateCommand, { Key: keyOf.key('key_2') }).rejects(conditionFailed(keyItem(2, { revoked: 1 })));
    ddb.on(UpdateCommand, { Key: keyOf.key('key_3') }).resolves({});
    ddb.on(UpdateCommand, { Key: keyOf.key('key_4') }).resolves({});

    const reply = await bulk({ watermark });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true, revoked_count: 3 });
    const queries = ddb.commandCalls(QueryCommand);
    expect(queries.map((call) => call.args[0].input.IndexName)).toEqual([TABLE.indexes.byWatermark.name, TABLE.indexes.byWatermark.name]);
    expect(queries[0]?.args[0].input.ExpressionAttributeValues).toEqual({ ':w': `${PROJECT_ID}#${watermark}` });
    expect(queries[1]?.args[0].input.ExclusiveStartKey).toEqual({ pk: 'KEY#key_2' });
  });

  it('answers { ok: true, revoked_count: 0 } when no key carries the watermark', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    const reply = await bulk({ watermark });
    expect([reply.status, reply.body]).toEqual([200, { ok: true, revoked_count: 0 }]);
  });

  it.each([
    ['WM_deadbeefdeadbeef', 'watermark must be the 16 hex characters after the WM_ prefix: drop the prefix and send "deadbeefdeadbeef"'],
    ['DEADBEEFDEADBEEF', 'watermark must be lowercase hex: send "deadbeefdeadbeef"'],
    ['deadbeef', 'watermark must be exactly 16 lowercase hex characters (0-9, a-f); got 8 characters'],
  ])('answers the watermark %j with 400 and advice, without touching any key', async (value, message) => {
    expectError(await bulk({ watermark: value }), 400, message);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('answers a missing watermark with 400', async () => {
    expectError(await bulk({}), 400, 'watermark is required');
  });
});
