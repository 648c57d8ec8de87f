import { Logger } from '@aws-lambda-powertools/logger';
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { SqsMessageSender } from '#adapters/sqs-queue';
import type { DeliveryMessage } from '#domain/webhooks/delivery-message';
import { createFanoutHandler } from '#functions/webhook-fanout';
import { captureLogs, discordUrl, keyAbuseItem, streamEvent, streamRecord, versionItem, WEBHOOK_TOKEN } from '#test-support/event-fixtures';
import { MemoryStores } from '#test-support/memory-stores';

/**
 * The fan-out on the in-memory stores (held to DynamoDeliveryStore by test/integration/store-contract/), and on the
 * SQS client the deployed function sends with, mocked: what is pinned here is what the handler reads and queues.
 */

const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries';

interface Hook {
  id: string;
  url?: string;
  events: string;
  enabled?: 0 | 1;
}

let store: MemoryStores;
/** The store's reads, as the handler makes them. */
let webhooksOf: MockInstance<MemoryStores['webhooksOf']>;
let projectName: MockInstance<MemoryStores['projectName']>;

function givenProject(projectId: string, name: string, hooks: Hook[]) {
  store.addProject({ id: projectId, ownerId: 'own_fanout', name });
  store.addWebhooks(
    projectId,
    ...hooks.map((hook) => ({
      id: hook.id,
      url: hook.url ?? discordUrl(hook.id.replace(/\D/g, '') || '1'),
      events: hook.events,
      enabled: hook.enabled ?? 1,
      created_at: 1_700_000_000,
      updated_at: 1_700_000_000,
    })),
  );
}

const sentEntries = (): SendMessageBatchRequestEntry[] => sqs.commandCalls(SendMessageBatchCommand).flatMap((call) => call.args[0].input.Entries ?? []);
const sentMessages = (): DeliveryMessage[] => sentEntries().map((entry) => JSON.parse(entry.MessageBody ?? '') as DeliveryMessage);

let logs: ReturnType<typeof captureLogs>;
let fanout: ReturnType<typeof createFanoutHandler>;

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
  logs = captureLogs();
  store = new MemoryStores();
  webhooksOf = vi.spyOn(store, 'webhooksOf');
  projectName = vi.spyOn(store, 'projectName');
  const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
  fanout = createFanoutHandler({
    store,
    queue: new SqsMessageSender(new SQSClient({ region: 'us-east-1', credentials }), QUEUE),
    logger: new Logger({ serviceName: 'fanout-test' }),
    resendDelayMs: 0,
  });
});

afterEach(() => logs.restore());

describe('fan-out of a version upload', () => {
  it('queues one message per enabled webhook subscribed to version_deployed, with everything the embed needs and no webhook URL', async () => {
    givenProject('prj_a', 'Aimbot', [
      { id: 'whk_1', events: '["version_deployed","key_abuse"]' },
      { id: 'whk_2', events: '["version_deployed"]', enabled: 0 },
      { id: 'whk_3', events: '["key_abuse"]' },
      { id: 'whk_4', events: '["version_deployed"]' },
    ]);
    const record = streamRecord('INSERT', versionItem('prj_a'), { eventID: 'e-1' });

    expect(await fanout(streamEvent(record))).toEqual({ batchItemFailures: [] });

    expect(sentMessages()).toEqual([
      {
        deliveryId: 'e-1:whk_1',
        webhook: { id: 'whk_1' },
        project: { id: 'prj_a', name: 'Aimbot' },
        event: {
          name: 'version_deployed',
          projectId: 'prj_a',
          occurredAt: 1_700_000_000,
          data: { versionId: 'ver_prj_a_3', versionNumber: 3, sizeBytes: 12_595, notes: 'Fixes the loader' },
        },
      },
      expect.objectContaining({ deliveryId: 'e-1:whk_4', webhook: { id: 'whk_4' } }),
    ]);
    expect(
      sentEntries()
        .map((entry) => entry.MessageBody)
        .join('\n'),
    ).not.toContain(WEBHOOK_TOKEN);
    // The project is the message group: on a fair queue another project's flood does not hold this one back.
    expect(sentEntries().map((entry) => entry.MessageGroupId)).toEqual(['prj_a', 'prj_a']);
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.QueueUrl).toBe(QUEUE);
  });

  it('routes an analytics event item by its name', async () => {
    givenProject('prj_a', 'Aimbot', [
      { id: 'whk_1', events: '["version_deployed"]' },
      { id: 'whk_3', events: '["key_abuse"]' },
    ]);
    await fanout(streamEvent(streamRecord('INSERT', keyAbuseItem('prj_a'), { eventID: 'e-9' })));
    expect(sentMessages().map((message) => [message.deliveryId, message.event.name])).toEqual([['e-9:whk_3', 'key_abuse']]);
  });

  it("never sends an event to another project's webhooks", async () => {
    givenProject('prj_a', 'A', [{ id: 'whk_a1', events: '["version_deployed"]' }]);
    givenProject('prj_b', 'B', [
      { id: 'whk_b1', events: '["version_deployed"]' },
      { id: 'whk_b2', events: '["version_deployed"]' },
    ]);
    await fanout(streamEvent(streamRecord('INSERT', versionItem('prj_a')), streamRecord('INSERT', versionItem('prj_b'))));

    const byProject = sentMessages().map((message) => [message.event.projectId, message.project.name, message.webhook.id]);
    expect(byProject).toEqual([
      ['prj_a', 'A', 'whk_a1'],
      ['prj_b', 'B', 'whk_b1'],
      ['prj_b', 'B', 'whk_b2'],
    ]);
    expect(webhooksOf.mock.calls).toEqual([['prj_a'], ['prj_b']]);
  });

  it('skips a webhook whose events string is not a JSON array, logging it without its token', async () => {
    givenProject('prj_a', 'A', [
      { id: 'whk_bad1', events: 'version_deployed' },
      { id: 'whk_bad2', events: '{"version_deployed":true}' },
      { id: 'whk_ok', events: '["version_deployed"]' },
    ]);
    expect(await fanout(streamEvent(streamRecord('INSERT', versionItem('prj_a'))))).toEqual({ batchItemFailures: [] });

    expect(sentMessages().map((message) => message.webhook.id)).toEqual(['whk_ok']);
    const warnings = logs.entries().filter((entry) => entry.level === 'WARN');
    expect(warnings.map((entry) => entry.webhookId)).toEqual(['whk_bad1', 'whk_bad2']);
    expect(logs.text()).not.toContain(WEBHOOK_TOKEN);
  });

  it('reads nothing more and sends nothing when no webhook is subscribed', async () => {
    givenProject('prj_a', 'A', [{ id: 'whk_1', events: '["clone_detected"]' }]);
    await fanout(streamEvent(streamRecord('INSERT', versionItem('prj_a'))));
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
    expect(projectName).not.toHaveBeenCalled();
  });

  it('ignores records outside the filter without reading the table', async () => {
    await fanout(streamEvent(streamRecord('MODIFY', versionItem('prj_a')), streamRecord('INSERT', { pk: 'DELIVERY#x', sk: 'DELIVERY', entity: 'DELIVERY' })));
    expect(webhooksOf).not.toHaveBeenCalled();
    expect(projectName).not.toHaveBeenCalled();
    expect(sqs.calls()).toHaveLength(0);
  });

  it('skips and logs an event item whose data is malformed, without failing the batch', async () => {
    const broken = { ...keyAbuseItem('prj_a'), data: { keyId: 'key_1' } };
    expect(await fanout(streamEvent(streamRecord('INSERT', broken, { eventID: 'e-bad' })))).toEqual({ batchItemFailures: [] });
    expect(logs.entries().find((entry) => entry.level === 'ERROR')).toMatchObject({ eventID: 'e-bad' });
    expect(sqs.calls()).toHaveLength(0);
  });
});

describe('queueing', () => {
  it('sends in batches of at most 10', async () => {
    givenProject(
      'prj_a',
      'A',
      Array.from({ length: 23 }, (_, i) => ({ id: `whk_${i + 1}`, events: '["version_deployed"]' })),
    );
    await fanout(streamEvent(streamRecord('INSERT', versionItem('prj_a'))));
    expect(sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input.Entries?.length)).toEqual([10, 10, 3]);
    expect(new Set(sentMessages().map((message) => message.deliveryId)).size).toBe(23);
  });

  it('sends again the entries SQS refused, and only those', async () => {
    givenProject('prj_a', 'A', [
      { id: 'whk_1', events: '["version_deployed"]' },
      { id: 'whk_2', events: '["version_deployed"]' },
    ]);
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({ Successful: [{ Id: 'm0', MessageId: '1', MD5OfMessageBody: 'x' }], Failed: [{ Id: 'm1', Code: 'InternalError', SenderFault: false }] })
      .resolves({ Successful: [], Failed: [] });

    expect(await fanout(streamEvent(streamRecord('INSERT', versionItem('prj_a'))))).toEqual({ batchItemFailures: [] });
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input.Entries?.map((entry) => entry.Id));
    expect(calls).toEqual([['m0', 'm1'], ['m1']]);
  });

  it('reports only the record whose messages could not be queued, so the others are not retried for it', async () => {
    givenProject('prj_a', 'A', [{ id: 'whk_a', events: '["version_deployed"]' }]);
    givenProject('prj_b', 'B', [{ id: 'whk_b', events: '["version_deployed"]' }]);
    givenProject('prj_c', 'C', [{ id: 'whk_c', events: '["version_deployed"]' }]);
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: SendMessageBatchRequestEntry[] }) => ({
      Successful: [],
      Failed: input.Entries.filter((entry) => entry.MessageBody?.includes('whk_b')).map((entry) => ({
        Id: entry.Id,
        Code: 'InternalError',
        SenderFault: false,
      })),
    }));
    const records = [
      streamRecord('INSERT', versionItem('prj_a'), { sequenceNumber: '1' }),
      streamRecord('INSERT', versionItem('prj_b'), { sequenceNumber: '2' }),
      streamRecord('INSERT', versionItem('prj_c'), { sequenceNumber: '3' }),
    ];

    expect(await fanout(streamEvent(...records))).toEqual({ batchItemFailures: [{ itemIdentifier: '2' }] });
    expect(sentMessages().filter((message) => message.webhook.id === 'whk_c')).toHaveLength(1);
  });

  it('reports a record failed when the table cannot be read', async () => {
    webhooksOf.mockRejectedValue(new Error('ProvisionedThroughputExceededException'));
    const record = streamRecord('INSERT', versionItem('prj_a'), { sequenceNumber: '77' });
    expect(await fanout(streamEvent(record))).toEqual({ batchItemFailures: [{ itemIdentifier: '77' }] });
  });
});
