import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as listVersions } from '#api/list-versions';
import { handler as listWebhooks } from '#api/list-webhooks';
import { handler as rollback } from '#api/rollback';
import { keyOf } from '#store/layout';
import { apiEvent } from '#test-support/fixtures';
import { PROJECT_ID, expectError, invoke, projectItem, transactionCanceled, useMockTable } from './mock-table';

const { ddb, givenProject } = useMockTable();

const versionItem = (id: string, version_number: number, notes = '') => ({
  ...keyOf.version(PROJECT_ID, id),
  entity: 'VERSION',
  projectId: PROJECT_ID,
  id,
  version_number,
  uploaded_at: 1_699_000_000 + version_number,
  size_bytes: 2048 * version_number,
  notes,
});

describe('GET /v1/projects/:id/versions (spec §4.4)', () => {
  it('lists versions highest version_number first with exactly the spec fields, and the current version id', async () => {
    givenProject(projectItem({ currentVersionId: 'ver_b' }));
    ddb.on(QueryCommand).resolves({ Items: [versionItem('ver_a', 1, 'first'), versionItem('ver_c', 3), versionItem('ver_b', 2, 'fix')] });
    const reply = await invoke(listVersions, apiEvent('list-versions', { projectId: PROJECT_ID }));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      versions: [
        { id: 'ver_c', version_number: 3, uploaded_at: 1_699_000_003, size_bytes: 6144, notes: '' },
        { id: 'ver_b', version_number: 2, uploaded_at: 1_699_000_002, size_bytes: 4096, notes: 'fix' },
        { id: 'ver_a', version_number: 1, uploaded_at: 1_699_000_001, size_bytes: 2048, notes: 'first' },
      ],
      current_version_id: 'ver_b',
    });
  });

  it("reads only the project's version items", async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await invoke(listVersions, apiEvent('list-versions', { projectId: PROJECT_ID }));
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input.ExpressionAttributeValues).toEqual({ ':pk': `PROJECT#${PROJECT_ID}`, ':prefix': 'VERSION#' });
  });
});

describe('POST /v1/projects/:id/versions/rollback (spec §4.5)', () => {
  const roll = (body: unknown) => invoke(rollback, apiEvent('rollback', { projectId: PROJECT_ID, body }));

  it('moves the pointer in one transaction with the check that the version is the project\'s, and answers the new current_version_id', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const reply = await roll({ version_id: 'ver_a' });
    expect([reply.status, reply.body]).toEqual([200, { ok: true, current_version_id: 'ver_a' }]);
    const items = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(items[0]?.ConditionCheck?.Key).toEqual(keyOf.version(PROJECT_ID, 'ver_a'));
    expect(items[1]?.Update).toMatchObject({ Key: keyOf.project(PROJECT_ID), ExpressionAttributeValues: { ':v': 'ver_a' } });
  });

  it('answers a version that is not the project\'s with 404', async () => {
    ddb.on(TransactWriteCommand).rejects(transactionCanceled('ConditionalCheckFailed', 'None'));
    expectError(await roll({ version_id: 'ver_other' }), 404, 'Version ver_other not found in this project');
  });

  it('retries a transaction that lost a conflict with another, then answers 200', async () => {
    ddb.on(TransactWriteCommand).rejectsOnce(transactionCanceled('None', 'TransactionConflict')).resolves({});
    const reply = await roll({ version_id: 'ver_a' });
    expect(reply.status).toBe(200);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('answers an empty object with 400 saying version_id is required', async () => {
    expectError(await roll({}), 400, 'version_id is required');
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });
});

describe('GET /v1/projects/:id/webhooks (spec §4.6)', () => {
  it('lists every configuration with events as a JSON string and numeric enabled flags, nothing else', async () => {
    const stored = (id: string, enabled: number, events: string[]) => ({
      ...keyOf.webhook(PROJECT_ID, id),
      entity: 'WEBHOOK',
      projectId: PROJECT_ID,
      id,
      url: `https://discord.com/api/webhooks/${id}/token`,
      events: JSON.stringify(events),
      enabled,
      created_at: 1_699_000_000,
      updated_at: 1_699_000_500,
    });
    ddb.on(QueryCommand).resolves({ Items: [stored('whk_1', 1, ['version_deployed', 'key_abuse']), stored('whk_2', 0, [])] });
    const reply = await invoke(listWebhooks, apiEvent('list-webhooks', { projectId: PROJECT_ID }));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      webhooks: [
        {
          id: 'whk_1',
          url: 'https://discord.com/api/webhooks/whk_1/token',
          events: '["version_deployed","key_abuse"]',
          enabled: 1,
          created_at: 1_699_000_000,
          updated_at: 1_699_000_500,
        },
        { id: 'whk_2', url: 'https://discord.com/api/webhooks/whk_2/token', events: '[]', enabled: 0, created_at: 1_699_000_000, updated_at: 1_699_000_500 },
      ],
    });
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input.ExpressionAttributeValues).toEqual({ ':pk': `PROJECT#${PROJECT_ID}`, ':prefix': 'WEBHOOK#' });
  });

  it('answers { webhooks: [] } for a project without any', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    const reply = await invoke(listWebhooks, apiEvent('list-webhooks', { projectId: PROJECT_ID }));
    expect([reply.status, reply.body]).toEqual([200, { webhooks: [] }]);
  });
});
