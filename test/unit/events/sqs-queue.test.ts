import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsInFlightMessages, SqsMessageSender } from '#adapters/sqs-queue';

const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries';
const DLQ = 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries-dlq';

beforeEach(() => sqs.reset());

describe('SqsMessageSender', () => {
  it('sends one SendMessageBatch and returns the ids SQS refused', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [{ Id: 'm1', Code: 'InternalError', SenderFault: false }] });
    const failed = await new SqsMessageSender(new SQSClient({}), QUEUE).sendBatch([
      { id: 'm0', body: 'a' },
      { id: 'm1', body: 'b' },
    ]);
    expect(failed).toEqual(['m1']);
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE,
      Entries: [
        { Id: 'm0', MessageBody: 'a' },
        { Id: 'm1', MessageBody: 'b' },
      ],
    });
  });

  it("sends each message in its tenant's group (MessageGroupId): a fair queue on a standard queue", async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await new SqsMessageSender(new SQSClient({}), QUEUE).sendBatch([
      { id: 'm0', body: 'a', groupId: 'prj_a' },
      { id: 'm1', body: 'b', groupId: 'prj_b' },
    ]);
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries).toEqual([
      { Id: 'm0', MessageBody: 'a', MessageGroupId: 'prj_a' },
      { Id: 'm1', MessageBody: 'b', MessageGroupId: 'prj_b' },
    ]);
  });
});

describe('SqsInFlightMessages', () => {
  it('changes a message visibility by receipt handle on the delivery queue', async () => {
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    await new SqsInFlightMessages(new SQSClient({}), QUEUE, DLQ).changeVisibility('rh-1', 3);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input).toEqual({ QueueUrl: QUEUE, ReceiptHandle: 'rh-1', VisibilityTimeout: 3 });
  });

  it('sends a delayed copy to the delivery queue itself, in its tenant group', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'x' });
    await new SqsInFlightMessages(new SQSClient({}), QUEUE, DLQ).sendDelayed({ body: '{"a":1}', groupId: 'prj_1' }, 30);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE,
      MessageBody: '{"a":1}',
      MessageGroupId: 'prj_1',
      DelaySeconds: 30,
    });
  });

  it('dead-letters a message by sending it to the DLQ with its reason', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'x' });
    await new SqsInFlightMessages(new SQSClient({}), QUEUE, DLQ).deadLetter('{"a":1}', 'Discord answered 400');
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: DLQ,
      MessageBody: '{"a":1}',
      MessageAttributes: { reason: { DataType: 'String', StringValue: 'Discord answered 400' } },
    });
  });
});
