import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { unixSeconds } from '#domain/model';
import { type DynamoDbLocal, startDynamoDbLocal } from '#local/dynamodb-local';
import { seedDemo } from '#local/seed';
import type { RequestLogEntry } from '#local/server';
import { type LocalStack, startLocalStack } from '#local/stack';
import { ensureTable } from '#local/table';
import { captureLogs } from '#test-support/event-fixtures';
import { freePort, type RawReply, rawRequest, reportFigure } from '#test-support/hardening';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * The local stack with its DynamoDB Local killed under it and started again on the same port. This test runs
 * its own DynamoDB Local (not the run's shared one) so it can stop it. While the database is down every request
 * must get a JSON 500 from the refused connection itself (not from a function timeout, which is what a hang
 * would end in), and no crash; once it is back (in memory, so empty) and the table is made again, the same
 * server must serve again.
 */

const TABLE_NAME = 'restart-test';

let dynamodbPort: number;
let dynamodb: DynamoDbLocal | undefined;
let stack: LocalStack;
let apiPort: number;
let logs: ReturnType<typeof captureLogs>;
const requestLog: RequestLogEntry[] = [];

beforeAll(async () => {
  dynamodbPort = await freePort();
  dynamodb = await startDynamoDbLocal({ port: dynamodbPort });
  apiPort = await freePort();
  stack = await startLocalStack({
    port: apiPort,
    dynamodbEndpoint: dynamodb.endpoint,
    tableName: TABLE_NAME,
    stateFile: join(tmpdir(), `restart-${process.pid}.json`),
    onRequest: (entry) => requestLog.push(entry),
  });
  // The stream poller reports every failed poll (console.error) while the database is away; kept out of the output.
  logs = captureLogs();
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
}, 120_000);

afterAll(async () => {
  logs?.restore();
  vi.restoreAllMocks();
  await stack?.stop();
  await dynamodb?.stop();
});

async function timed(request: () => Promise<RawReply>): Promise<RawReply & { ms: number }> {
  const started = performance.now();
  const reply = await request();
  return { ...reply, ms: Math.round(performance.now() - started) };
}

const listVersions = (token: string, projectId: string) =>
  timed(() =>
    rawRequest(apiPort, { method: 'GET', target: `/v1/projects/${projectId}/versions`, headers: [['Authorization', `Bearer ${token}`]], timeoutMs: 60_000 }),
  );

const revokeBulk = (token: string, projectId: string) =>
  timed(() =>
    rawRequest(apiPort, {
      method: 'POST',
      target: `/v1/projects/${projectId}/keys/revoke-bulk`,
      headers: [
        ['Authorization', `Bearer ${token}`],
        ['Content-Type', 'application/json'],
      ],
      body: JSON.stringify({ watermark: '0123456789abcdef' }),
      timeoutMs: 60_000,
    }),
  );

/** A JSON 500 whose cause, as the server logged it, is `cause`: the database's own answer, not a function timeout. */
function expectJson500From(reply: RawReply & { ms: number }, cause: RegExp) {
  expect(reply.status).toBe(500);
  expect(reply.json).toEqual({ error: 'Internal error', request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  expect(reply.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  const failure = String(requestLog.find((entry) => entry.requestId === (reply.json as { request_id: string }).request_id)?.failure);
  expect(failure).toMatch(cause);
  expect(failure).not.toContain('Task timed out');
}

describe('DynamoDB Local killed and restarted under the local stack', () => {
  it('answers JSON 500 from the refused connection while the database is down, and serves again once it is back with its table', async () => {
    expect((await listVersions(stack.token, stack.projectId)).status).toBe(200);

    await dynamodb?.stop();
    dynamodb = undefined;
    const whileDown = [];
    for (let i = 0; i < 3; i++) whileDown.push(await listVersions(stack.token, stack.projectId), await revokeBulk(stack.token, stack.projectId));
    for (const reply of whileDown) expectJson500From(reply, /ECONNREFUSED/);

    dynamodb = await startDynamoDbLocal({ port: dynamodbPort });
    // In memory, so the table is gone: still a clean 500.
    const withoutTable = await listVersions(stack.token, stack.projectId);
    expectJson500From(withoutTable, /ResourceNotFoundException|non-existent table/);

    const client = new DynamoDBClient(localDynamoConfig(dynamodb.endpoint));
    const db = createDocumentClient(localDynamoConfig(dynamodb.endpoint));
    try {
      await ensureTable(client, TABLE_NAME);
      // The old token went with the data: refused like any unknown token, by the same running server.
      expect((await listVersions(stack.token, stack.projectId)).status).toBe(401);
      const demo = await seedDemo(createStores(db, TABLE_NAME), new MemoryScriptStore(), unixSeconds());
      const recovered = await listVersions(demo.token, demo.projectId);
      expect(recovered.status).toBe(200);
      expect((recovered.json as { versions: unknown[] }).versions).toHaveLength(3);
      expect((await revokeBulk(demo.token, demo.projectId)).json).toEqual({ ok: true, revoked_count: 0, complete: true });
    } finally {
      client.destroy();
      db.destroy();
    }
    reportFigure(
      `DynamoDB Local killed: ${whileDown.length} requests while down, all JSON 500 in ${Math.min(...whileDown.map((r) => r.ms))}-${Math.max(...whileDown.map((r) => r.ms))} ms; ` +
        `restarted without the table: JSON 500 in ${withoutTable.ms} ms; table recreated and data re-seeded: 200 from the same server`,
    );
  });
});
