import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { InFlightMessages, MessageSender, OutgoingMessage } from '#domain/webhooks/ports';

/**
 * The AWS side of the queue ports: SQS. A message's `groupId` becomes its MessageGroupId, which on a standard queue
 * makes it a fair queue: a tenant (here a project) with a backlog is served after tenants without one.
 */
export class SqsMessageSender implements MessageSender {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async sendBatch(messages: OutgoingMessage[]): Promise<string[]> {
    const { Failed = [] } = await this.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: messages.map((message) => ({ Id: message.id, MessageBody: message.body, MessageGroupId: message.groupId })),
      }),
    );
    return Failed.map((failure) => failure.Id ?? '');
  }
}

export class SqsInFlightMessages implements InFlightMessages {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
    private readonly deadLetterQueueUrl: string,
  ) {}

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
  }

  async sendDelayed(message: Omit<OutgoingMessage, 'id'>, delaySeconds: number): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: message.body, MessageGroupId: message.groupId, DelaySeconds: delaySeconds }),
    );
  }

  async deadLetter(body: string, reason: string): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.deadLetterQueueUrl,
        MessageBody: body,
        MessageAttributes: { reason: { DataType: 'String', StringValue: reason } },
      }),
    );
  }
}
