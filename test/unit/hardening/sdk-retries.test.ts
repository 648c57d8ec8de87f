import { Logger } from '@aws-lambda-powertools/logger';
import { InternalServerError } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoProjectStore } from '#adapters/project-store';
import { createStores } from '#adapters/stores';
import { createApiHandler } from '#http/api-handler';
import { listKeysRoute } from '#http/owner-routes/list-keys';
import { memoryKeySecret } from '#local/key-secret';
import { NOW, PROJECT_ID, SECURITY_HEADERS } from '#test-support/api-harness';
import { DYNAMO_FAULTS, type DynamoFaultName, faultyDocumentClient } from '#test-support/dynamodb-faults';
import { captureLogs } from '#test-support/event-fixtures';
import { apiEvent, lambdaContext } from '#test-support/fixtures';
import { reportFigure } from '#test-support/runs';
import { projectItem } from '#test-support/table-items';

/**
 * DynamoDB throttling and server errors injected below the SDK (in the client's transport, no network), so the
 * product's own client settings and the SDK's retry strategy are what act: a fault that clears within
 * maxAttempts must end in a success, one that outlasts it in a clean 500.
 */

const FAULT_NAMES = Object.keys(DYNAMO_FAULTS) as DynamoFaultName[];
let logs: ReturnType<typeof captureLogs>;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.restore());

/** What the scripted table answers when a call is let through: the rate window counts 1, the project exists, no keys. */
function tableAnswer(operation: string): unknown {
  if (operation === 'UpdateItem') return { Attributes: { requests: { N: '1' } } };
  if (operation === 'GetItem') return { Item: marshall(projectItem(), { removeUndefinedValues: true }) };
  if (operation === 'Query') return { Items: [], Count: 0 };
  return {};
}

/** The list-keys endpoint on stores whose client has the injected transport. */
function listKeysOn(db: DynamoDBDocumentClient) {
  return createApiHandler(listKeysRoute, {
    stores: createStores(db, 'faults-table'),
    keySecret: memoryKeySecret(),
    now: () => NOW,
    logger: new Logger({ serviceName: 'faults-test' }),
  });
}

describe('DynamoDB faults below the SDK, with the client configured as the product configures it', () => {
  it.each(FAULT_NAMES)('retries a %s that clears within maxAttempts, and the read succeeds', async (fault) => {
    // The first attempt fails, the second gets through (throttling backs off a second or more per retry).
    const client = faultyDocumentClient({ fault: (_, call) => (call < 1 ? fault : undefined), answer: tableAnswer });
    const project = await new DynamoProjectStore(client.db, 'faults-table').getProject(PROJECT_ID);
    client.destroy();
    expect(project?.id).toBe(PROJECT_ID);
    expect(client.calls.map((call) => call.injected)).toEqual([fault, undefined]);
  });

  it('gives up after exactly the 5 attempts the product configures when InternalServerError persists', async () => {
    const client = faultyDocumentClient({ fault: () => 'InternalServerError', answer: tableAnswer });
    await expect(new DynamoProjectStore(client.db, 'faults-table').getProject(PROJECT_ID)).rejects.toBeInstanceOf(InternalServerError);
    client.destroy();
    expect(client.calls).toHaveLength(5);
  });

  it.each(FAULT_NAMES)('answers 200 when every call of a request (rate window, project, keys) first meets a %s', async (fault) => {
    const seen = new Set<string>();
    // Each operation fails on its first attempt only.
    const client = faultyDocumentClient({
      fault: (operation) => {
        if (seen.has(operation)) return undefined;
        seen.add(operation);
        return fault;
      },
      answer: tableAnswer,
    });
    const result = await listKeysOn(client.db)(apiEvent('list-keys', { projectId: PROJECT_ID }), lambdaContext());
    client.destroy();
    expect(result.statusCode).toBe(200);
    expect(client.calls.map((call) => call.operation)).toEqual(['UpdateItem', 'UpdateItem', 'GetItem', 'GetItem', 'Query', 'Query']);
    reportFigure(`SDK retry: ${fault} injected on 3 of 6 attempts of one request, request answered 200`);
  });

  it('answers a clean 500 {"error":"Internal error","request_id"} once InternalServerError outlasts the retries', async () => {
    const client = faultyDocumentClient({ fault: (operation) => (operation === 'Query' ? 'InternalServerError' : undefined), answer: tableAnswer });
    const result = await listKeysOn(client.db)(apiEvent('list-keys', { projectId: PROJECT_ID }), lambdaContext('req-faults-1'));
    client.destroy();
    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body)).toEqual({ error: 'Internal error', request_id: 'req-faults-1' });
    expect(result.headers).toMatchObject(SECURITY_HEADERS);
    expect(client.calls.filter((call) => call.operation === 'Query')).toHaveLength(5);
  });
});
