import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf } from '#adapters/layout';
import { hashToken, newApiToken, tokenIdOf } from '#domain/tokens';
import { startLocalStack } from '#local/stack';
import { createTestTable, freePort, type TestTable } from '#test-support/fixtures';

/**
 * A token stored before scopes existed carries none and is read as `read` (issue 21: none used to mean write).
 * So the migration that gives it its `write` scope runs at `npm start` on a table an earlier run left, as
 * `npm run deploy` runs it after `cdk deploy`.
 */
let table: TestTable;
let dir: string;

beforeAll(async () => {
  table = await createTestTable('token-scope-migration', { stream: true });
  dir = await mkdtemp(join(tmpdir(), 'token-scope-migration-'));
});

afterAll(async () => {
  await table?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('tokens stored before scopes, at npm start', () => {
  it('are migrated to write when the local stack starts on a table an earlier run left', async () => {
    const legacy = newApiToken();
    const tokenHash = hashToken(legacy);
    await table.db.send(
      new PutCommand({ TableName: table.tableName, Item: { ...keyOf.token(tokenHash), entity: 'TOKEN', ownerId: 'own_legacy', createdAt: 1_700_000_000 } }),
    );
    expect(await table.stores.tokens.findToken(tokenHash)).toMatchObject({ scope: 'read' });

    const stack = await startLocalStack({
      port: await freePort(),
      dynamodbEndpoint: table.endpoint,
      tableName: table.tableName,
      stateFile: join(dir, 'stack.json'),
    });
    try {
      expect(await table.stores.tokens.findToken(tokenHash)).toEqual({ ownerId: 'own_legacy', tokenId: tokenIdOf(tokenHash), scope: 'write' });
      const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.token(tokenHash), ConsistentRead: true }));
      expect(Item).toMatchObject({ scope: 'write', tokenId: tokenIdOf(tokenHash) });
    } finally {
      await stack.stop();
    }
  });
});
