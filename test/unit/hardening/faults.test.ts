import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient, InternalServerError, ProvisionedThroughputExceededException, ThrottlingException } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SQSClient, SQSServiceException } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context, DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDeliveryStore } from '#adapters/delivery-store';
import { SqsMessageSender } from '#adapters/sqs-queue';
import type { DeliveryMessage } from '#domain/webhooks/delivery-message';
import { handler as listKeysHandler } from '#functions/list-keys';
import { handler as listVersionsHandler } from '#functions/list-versions';
import { handler as listWebhooksHandler } from '#functions/list-webhooks';
import { handler as revokeBulkHandler } from '#functions/revoke-bulk';
import { handler as revokeKeyHandler } from '#functions/revoke-key';
import { handler as rollbackHandler } from '#functions/rollback';
import { createFanoutHandler } from '#functions/webhook-fanout';
import type { HttpApiHandler } from '#http/http-api';
import { ROUTES } from '#http/routes';
import { type EntryName, handleGatewayRequest, type ProxyHandler } from '#local/gateway';
import { CALLER, PROJECT_ID, SECURITY_HEADERS } from '#test-support/api-harness';
import { DYNAMO_FAULTS, type DynamoFaultName } from '#test-support/dynamodb-faults';
import { captureLogs, discordUrl, streamEvent, streamRecord, versionItem } from '#test-support/event-fixtures';
import { apiEvent, lambdaContext, type RouteEntry } from '#test-support/fixtures';
import { reportFigure } from '#test-support/runs';
import { projectItem } from '#test-support/table-items';

/**
 * Failures of what the service depends on, injected with aws-sdk-client-mock: DynamoDB throttling and server
 * errors once the SDK has spent its retries (sdk-retries.test.ts covers the retries themselves), and SQS
 * refusing the fan-out's messages. Each must end in a clean failure that a retry can finish, never in a
 * half-written state or a lost event.
 */

const FAULT_NAMES = Object.keys(DYNAMO_FAULTS) as DynamoFaultName[];
// The deployed handlers and the fan-out's store on the real DynamoDB stores, whose document client is mocked here.
const ddb = mockClient(DynamoDBDocumentClient);
let logs: ReturnType<typeof captureLogs>;
beforeEach(() => {
  // The deployed handlers' stores read their table's name from the Lambda's settings.
  process.env.TABLE_NAME = 'developer-api-test';
  ddb.reset();
  logs = captureLogs();
});
afterEach(() => logs.restore());

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const ENDPOINTS: { entry: RouteEntry; handler: Handler; body?: unknown; failing: 'rate' | 'project' | 'own' }[] = [];
for (const failing of ['rate', 'project', 'own'] as const) {
  ENDPOINTS.push(
    { entry: 'list-keys', handler: listKeysHandler, failing },
    { entry: 'revoke-key', handler: revokeKeyHandler, body: { key_id: 'key_1' }, failing },
    { entry: 'revoke-bulk', handler: revokeBulkHandler, body: { watermark: '0123456789abcdef' }, failing },
    { entry: 'list-versions', handler: listVersionsHandler, failing },
    { entry: 'rollback', handler: rollbackHandler, body: { version_id: 'ver_1' }, failing },
    { entry: 'list-webhooks', handler: listWebhooksHandler, failing },
  );
}

const thrown = {
  ProvisionedThroughputExceededException: () =>
    new ProvisionedThroughputExceededException({ message: DYNAMO_FAULTS.ProvisionedThroughputExceededException.message, $metadata: { httpStatusCode: 400 } }),
  ThrottlingException: () => new ThrottlingException({ message: DYNAMO_FAULTS.ThrottlingException.message, $metadata: { httpStatusCode: 400 } }),
  InternalServerError: () => new InternalServerError({ message: DYNAMO_FAULTS.InternalServerError.message, $metadata: { httpStatusCode: 500 } }),
} satisfies Record<DynamoFaultName, () => Error>;

describe('DynamoDB faults the SDK has given up on, at each step of each endpoint', () => {
  it('answers every endpoint, failing at the rate window, the project read or its own call, with a clean 500 and request_id', async () => {
    let cases = 0;
    for (const fault of FAULT_NAMES) {
      for (const endpoint of ENDPOINTS) {
        ddb.reset();
        ddb.on(UpdateCommand).resolves({ Attributes: { requests: 1 } });
        ddb.on(GetCommand).resolves({ Item: projectItem() });
        ddb.on(QueryCommand).resolves({ Items: [] });
        ddb.on(TransactWriteCommand).resolves({});
        if (endpoint.failing === 'rate') ddb.on(UpdateCommand, { Key: { pk: `RATE#${CALLER.tokenHash}` } }, false).rejects(thrown[fault]());
        if (endpoint.failing === 'project') ddb.on(GetCommand).rejects(thrown[fault]());
        if (endpoint.failing === 'own') {
          // What each endpoint does after the project read: a transaction (the change with its audit entry), or a query.
          if (endpoint.entry === 'revoke-key' || endpoint.entry === 'rollback') ddb.on(TransactWriteCommand).rejects(thrown[fault]());
          else ddb.on(QueryCommand).rejects(thrown[fault]());
        }
        const requestId = `req-${fault}-${endpoint.entry}-${endpoint.failing}`;
        const result = await endpoint.handler(apiEvent(endpoint.entry, { projectId: PROJECT_ID, body: endpoint.body }), lambdaContext(requestId));
        const label = `${fault} at ${endpoint.failing} of ${endpoint.entry}`;
        expect(result.statusCode, label).toBe(500);
        expect(JSON.parse(result.body), label).toEqual({ error: 'Internal error', request_id: requestId });
        expect(result.headers, label).toMatchObject(SECURITY_HEADERS);
        cases += 1;
      }
    }
    // The failure is in the log, named, with the request id, for whoever answers the alarm.
    const errors = logs.entries().filter((entry) => entry.message === 'Unhandled error');
    expect(errors).toHaveLength(cases);
    expect(errors.map((entry) => (entry.error as { name?: string }).name)).toEqual(expect.arrayContaining(FAULT_NAMES));
    reportFigure(`DynamoDB faults past the SDK: ${cases} cases (3 faults x 6 endpoints x 3 steps), all clean 500 with request_id`);
  });
});

const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries';

/** A fan-out on a mocked table (one project, one webhook per record's project) and a mocked SQS. */
function fanoutWithMocks() {
  const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
  return createFanoutHandler({
    store: new DynamoDeliveryStore(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials })), 'table'),
    queue: new SqsMessageSender(new SQSClient({ region: 'us-east-1', credentials }), QUEUE),
    logger: new Logger({ serviceName: 'fanout-faults' }),
    resendDelayMs: 0,
  });
}

function givenWebhooks(...projectIds: string[]) {
  for (const projectId of projectIds) {
    ddb.on(QueryCommand, { ExpressionAttributeValues: { ':pk': `PROJECT#${projectId}`, ':prefix': 'WEBHOOK#' } }).resolves({
      Items: [{ id: `whk_${projectId}`, url: discordUrl('123'), events: '["version_deployed"]', enabled: 1 }],
    });
    ddb.on(GetCommand, { Key: { pk: `PROJECT#${projectId}`, sk: 'PROJECT' } }).resolves({ Item: { name: projectId } });
  }
}

const queuedDeliveryIds = () =>
  sqs
    .commandCalls(SendMessageBatchCommand)
    .flatMap((call) => (call.args[0].input.Entries ?? []).map((entry) => (JSON.parse(entry.MessageBody ?? '') as DeliveryMessage).deliveryId));

/**
 * How Lambda's event-source mapping treats a stream batch with ReportBatchItemFailures: the batch is handed
 * over again from the first failed record, until nothing fails or the retries run out.
 */
async function deliverLikeLambda(
  fanout: ReturnType<typeof createFanoutHandler>,
  records: DynamoDBRecord[],
  retries: number,
): Promise<{ invocations: number; skipped: number }> {
  let pending = records;
  for (let invocation = 1; ; invocation++) {
    const { batchItemFailures } = await fanout(streamEvent(...pending));
    const failed = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
    const first = pending.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
    if (first < 0) return { invocations: invocation, skipped: 0 };
    if (invocation > retries) return { invocations: invocation, skipped: pending.length - first };
    pending = pending.slice(first);
  }
}

describe('SQS SendMessageBatch failing in the fan-out', () => {
  beforeEach(() => {
    sqs.reset();
  });

  it.each([
    [
      'throws RequestThrottled',
      () => new SQSServiceException({ name: 'RequestThrottled', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: 'Request is throttled.' }),
    ],
    [
      'throws a 500 InternalError',
      () => new SQSServiceException({ name: 'InternalError', $fault: 'server', $metadata: { httpStatusCode: 500 }, message: 'internal' }),
    ],
  ])('reports the record failed when SendMessageBatch %s, and the retried record queues its event', async (_, failure) => {
    givenWebhooks('prj_a');
    let calls = 0;
    sqs.on(SendMessageBatchCommand).callsFake(() => {
      calls += 1;
      if (calls === 1) throw failure();
      return { Successful: [], Failed: [] };
    });
    const fanout = fanoutWithMocks();
    const record = streamRecord('INSERT', versionItem('prj_a'), { eventID: 'evt-sqs-1', sequenceNumber: '501' });

    expect(await fanout(streamEvent(record))).toEqual({ batchItemFailures: [{ itemIdentifier: '501' }] });
    expect(await fanout(streamEvent(record))).toEqual({ batchItemFailures: [] });
    // Both calls carried the same delivery id: had the refused one got through after all, delivery would post once.
    expect(queuedDeliveryIds()).toEqual(['evt-sqs-1:whk_prj_a', 'evt-sqs-1:whk_prj_a']);
    expect(calls).toBe(2);
  });

  it('loses no event of a batch when SQS fails for a while: every event is queued once SQS answers again', async () => {
    const projects = Array.from({ length: 12 }, (_, i) => `prj_${i}`);
    givenWebhooks(...projects);
    // SQS refuses the next 8 calls (throwing, or refusing every entry), then recovers; only what it accepted counts as queued.
    const accepted: string[] = [];
    let refusals = 8;
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string; MessageBody: string }[] }) => {
      if (refusals <= 0) {
        accepted.push(...input.Entries.map((entry) => (JSON.parse(entry.MessageBody) as DeliveryMessage).deliveryId));
        return { Successful: input.Entries.map((entry) => ({ Id: entry.Id, MessageId: entry.Id, MD5OfMessageBody: 'x' })), Failed: [] };
      }
      refusals -= 1;
      if (refusals % 2 === 0)
        throw new SQSServiceException({ name: 'InternalError', $fault: 'server', $metadata: { httpStatusCode: 500 }, message: 'internal' });
      return { Successful: [], Failed: input.Entries.map((entry) => ({ Id: entry.Id, Code: 'InternalError', SenderFault: false })) };
    });
    const records = projects.map((projectId, i) =>
      streamRecord('INSERT', versionItem(projectId), { eventID: `evt-batch-${i}`, sequenceNumber: String(700 + i) }),
    );

    const { invocations, skipped } = await deliverLikeLambda(fanoutWithMocks(), records, 5);

    expect(skipped).toBe(0);
    expect([...new Set(accepted)].sort()).toEqual(projects.map((projectId, i) => `evt-batch-${i}:whk_${projectId}`).sort());
    reportFigure(
      `fan-out: 8 SQS failures injected over a 12-event batch, ${invocations} invocations, ${new Set(accepted).size}/12 events queued (${accepted.length - new Set(accepted).size} re-queued copies for the delivery id to absorb), 0 lost`,
    );
  });
});

describe('a table that accepts connections but never answers', () => {
  it("ends a token lookup that hangs as the gateway's JSON 500 after the function timeout, not a request that waits forever", async () => {
    const neverAnswers: ProxyHandler = () => new Promise<never>(() => undefined);
    const neverAnswersLoader: HttpApiHandler = () => new Promise<never>(() => undefined);
    const handlers = Object.fromEntries(ROUTES.map((route) => [route.entry, neverAnswers])) as Record<EntryName, ProxyHandler>;
    const request = {
      method: 'GET',
      target: `/v1/projects/${PROJECT_ID}/keys`,
      rawHeaders: ['Authorization', 'Bearer sdt_x'],
      body: Buffer.alloc(0),
      sourceIp: '127.0.0.1',
    };

    const outcome = await handleGatewayRequest(request, {
      authorizer: () => new Promise<never>(() => undefined),
      handlers,
      loaderHandlers: {
        'loader-validate': neverAnswersLoader,
        'loader-script': neverAnswersLoader,
        'loader-stub': neverAnswersLoader,
        'discord-interactions': neverAnswersLoader,
        'shop-receiver': neverAnswersLoader,
        'free-start': neverAnswersLoader,
        'free-return': neverAnswersLoader,
        'free-postback': neverAnswersLoader,
      },
      handlerTimeoutMs: 50,
      newRequestId: () => 'req-hang',
    });

    expect(outcome.response.status).toBe(500);
    expect(JSON.parse(String(outcome.response.body))).toEqual({ error: 'Internal error', request_id: 'req-hang' });
    expect(outcome.response.headers).toMatchObject(SECURITY_HEADERS);
    expect(String(outcome.failure)).toContain('Task timed out');
  });
});
