import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createStores } from '#adapters/stores';
import { createApiHandler, type Endpoint } from '#http/api-handler';
import { revokeBulkRoute } from '#http/owner-routes/revoke-bulk';
import { revokeKeyRoute } from '#http/owner-routes/revoke-key';
import { memoryKeySecret } from '#local/key-secret';
import { type DynamoFaultName, type FaultyClient, faultyDocumentClient } from '#test-support/dynamodb-faults';
import { captureLogs } from '#test-support/event-fixtures';
import { apiEvent, createTestTable, FIXED_NOW, lambdaContext, type SeededOwner, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';
import { HARDENING_RUNS, reportFigure, timeoutFor } from '#test-support/hardening';

/**
 * DynamoDB failing under the revoke endpoints, on DynamoDB Local: the faults are injected in the client's
 * transport, so the product's client settings and the SDK's retries act and every call that gets through is
 * real. A revoke cut off half-way answers a clean 500, and the same call made again finishes the job, with
 * the two calls together accounting for every key exactly once.
 */

let table: TestTable;
let owner: SeededOwner;
let client: FaultyClient;
let logs: ReturnType<typeof captureLogs>;
/** The injection rule the transport asks on every attempt; each test sets its own. */
let fault: (operation: string, body: string) => DynamoFaultName | undefined = () => undefined;

beforeAll(async () => {
  table = await createTestTable('hardening-dynamo-faults');
  owner = await seedOwner(table.stores);
});

afterAll(async () => {
  await table?.drop();
});

// A client per test: the SDK's retry quota is per client, and an outage in one test drains it for the next.
beforeEach(() => {
  logs = captureLogs();
  fault = () => undefined;
  client = faultyDocumentClient({ endpoint: table.endpoint, fault: (operation, _call, body) => fault(operation, body) });
});
afterEach(() => {
  client.destroy();
  logs.restore();
});

/** The route's endpoint on stores whose client is this test's faulty one. */
function onFaultyClient<Query, Body, Result>(endpoint: Endpoint<Query, Body, Result>) {
  let clock = FIXED_NOW;
  return (event: APIGatewayProxyEvent, context: Context) =>
    createApiHandler(endpoint, {
      stores: createStores(client.db, table.tableName),
      keySecret: memoryKeySecret(),
      now: () => (clock += 1),
      logger: new Logger({ serviceName: 'dynamo-faults-test' }),
    })(event, context);
}

const revokeBulkHandler = onFaultyClient(revokeBulkRoute);
const revokeKeyHandler = onFaultyClient(revokeKeyRoute);

const bodyOf = (result: APIGatewayProxyResult) => JSON.parse(result.body) as Record<string, unknown>;

async function revokedCount(projectId: string): Promise<number> {
  const keys = await table.stores.projects.listKeysAfter(projectId, 0, 1_000);
  return keys.filter((key) => key.revoked === 1).length;
}

describe('DynamoDB failing under the revoke endpoints, on DynamoDB Local', () => {
  it(
    'answers a bulk revoke cut off half-way with a clean 500, and the same call again revokes the rest: the counts sum to the total',
    async () => {
      const runs = Math.max(2, Math.ceil(HARDENING_RUNS / 6));
      const summary: string[] = [];
      for (let run = 0; run < runs; run++) {
        const watermark = `${'ab'.repeat(4)}${String(run).padStart(8, '0')}`;
        // Up to 99 keys: one seeding transaction; the cut lands at a different point each run.
        const keyCount = 99 - (run % 5) * 10;
        const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: keyCount, watermark });
        // The outage starts after a number of key writes and lasts until the call has failed.
        const cutAfter = 5 + ((run * 17) % 50);
        let keyWrites = 0;
        fault = (operation, body) => {
          if (operation !== 'UpdateItem' || !body.includes('"KEY#')) return undefined;
          keyWrites += 1;
          return keyWrites > cutAfter ? 'InternalServerError' : undefined;
        };
        const event = () => apiEvent('revoke-bulk', { projectId, caller: owner, body: { watermark } });

        const failed = await revokeBulkHandler(event(), lambdaContext(`req-cut-${run}`));
        const revokedByFailedCall = await revokedCount(projectId);
        expect(failed.statusCode).toBe(500);
        expect(bodyOf(failed)).toEqual({ error: 'Internal error', request_id: `req-cut-${run}` });
        expect(revokedByFailedCall).toBeGreaterThan(0);
        expect(revokedByFailedCall).toBeLessThan(keyCount);
        // The audit trail tells what the failed call did.
        const [cut] = await table.stores.audit.list({ projectId }, 1);
        expect(cut).toMatchObject({ action: 'key.revoke_bulk', status: 'failed', outcome: { revoked_count: revokedByFailedCall } });

        fault = () => undefined;
        const retried = await revokeBulkHandler(event(), lambdaContext());
        expect(retried.statusCode).toBe(200);
        expect(bodyOf(retried)).toEqual({ ok: true, revoked_count: keyCount - revokedByFailedCall, complete: true });
        expect(await revokedCount(projectId)).toBe(keyCount);
        summary.push(`${revokedByFailedCall}+${keyCount - revokedByFailedCall}=${keyCount}`);
      }
      reportFigure(`bulk revoke cut half-way by InternalServerError: ${runs} runs, failed call + retry = total every run (${summary.join(', ')})`);
    },
    timeoutFor(1_000),
  );

  it('answers a single revoke whose write fails with a clean 500, leaves the key active and unaudited, and the retry revokes it with its entry', async () => {
    const { projectId, keys } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 1 });
    const keyId = keys[0]?.id ?? '';
    // The revoke and its audit entry are one transaction.
    fault = (operation, body) => (operation === 'TransactWriteItems' && body.includes(`KEY#${keyId}`) ? 'InternalServerError' : undefined);
    const event = () => apiEvent('revoke-key', { projectId, caller: owner, body: { key_id: keyId } });

    const failed = await revokeKeyHandler(event(), lambdaContext('req-single'));
    expect([failed.statusCode, bodyOf(failed)]).toEqual([500, { error: 'Internal error', request_id: 'req-single' }]);
    expect(await revokedCount(projectId)).toBe(0);
    expect(await table.stores.audit.list({ projectId }, 10)).toEqual([]);

    fault = () => undefined;
    const retried = await revokeKeyHandler(event(), lambdaContext());
    expect([retried.statusCode, bodyOf(retried)]).toEqual([200, { ok: true }]);
    expect(await revokedCount(projectId)).toBe(1);
    expect(await table.stores.audit.list({ projectId }, 10)).toEqual([
      expect.objectContaining({ action: 'key.revoke', target: { key_id: keyId }, outcome: { revoked_count: 1 } }),
    ]);
  });

  it(
    'completes bulk revokes while a fifth of all DynamoDB calls fail with InternalServerError, each call failing at most twice',
    async () => {
      const failuresPerBody = new Map<string, number>();
      let injected = 0;
      fault = (_, body) => {
        const failures = failuresPerBody.get(body) ?? 0;
        if (failures >= 2 || Math.random() >= 0.2) return undefined;
        failuresPerBody.set(body, failures + 1);
        injected += 1;
        return 'InternalServerError';
      };
      const runs = Math.max(2, Math.ceil(HARDENING_RUNS / 6));
      let keysRevoked = 0;
      for (let run = 0; run < runs; run++) {
        const watermark = `cd${String(run).padStart(14, '0')}`;
        const { projectId } = await seedProject(table.stores, { ownerId: owner.ownerId, keys: 40, watermark });
        const result = await revokeBulkHandler(apiEvent('revoke-bulk', { projectId, caller: owner, body: { watermark } }), lambdaContext());
        expect([result.statusCode, bodyOf(result)]).toEqual([200, { ok: true, revoked_count: 40, complete: true }]);
        keysRevoked += 40;
      }
      expect(injected).toBeGreaterThan(0);
      reportFigure(
        `SDK retries on DynamoDB Local: ${injected} InternalServerError injected over ${runs} bulk revokes (${keysRevoked} keys), all answered 200 with every key counted once`,
      );
    },
    timeoutFor(1_000),
  );
});
