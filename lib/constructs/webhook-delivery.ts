import { Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { WEBHOOK_DISABLE_ATTRIBUTES, WEBHOOK_STATE_ATTRIBUTES } from '#adapters/delivery-store';
import { STREAM_FILTER_PATTERN } from '#adapters/stream-events';
import { DELIVERY_QUEUE, DELIVERY_TIMEOUT_SECONDS, FANOUT_STREAM } from '#domain/webhooks/delivery-settings';
import { DEFAULT_DISCORD_API_BASE } from '#domain/webhooks/discord-webhook-url';
import { acknowledgeQueueFailures, deadLetterQueue, depthAlarm, secureQueue } from './queues';
import { ServiceFunction } from './service-function';
import { grantItems } from './table-access';

export interface WebhookDeliveryProps {
  /** The service table; it must have a stream (NEW_AND_OLD_IMAGES). */
  table: dynamodb.ITableV2 | dynamodb.ITable;
  /** Where posts go; Discord's API unless a test stack points it elsewhere. */
  discordApiBase?: string;
}

/**
 * Webhook notifications: the table's stream → fan-out Lambda → SQS (one message per event and webhook) →
 * delivery Lambda → Discord. Delivery is at least once and posts once: the delivery id is claimed in the table
 * before each post. What never gets through lands in a dead-letter queue with an alarm on its depth:
 * - `deadLetterQueue`: deliveries that ran out of receives (failures; a 429 sends a delayed copy and spends
 *   none), that Discord refused (4xx other than 404/429) or kept rate limiting for a day;
 * - `fanoutFailureQueue`: stream batches the fan-out could not process after its retries (the on-failure
 *   destination receives the batch's shard and sequence numbers, not the records).
 * The stack's Monitoring points these alarms, like every alarm of the stack, at its alarm topic.
 */
export class WebhookDelivery extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly fanoutFailureQueue: sqs.Queue;
  readonly fanoutFunction: ServiceFunction;
  readonly deliveryFunction: ServiceFunction;
  readonly alarms: cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);
    const { table } = props;

    this.deadLetterQueue = deadLetterQueue(this, 'DeadLetterQueue');
    this.fanoutFailureQueue = deadLetterQueue(this, 'FanoutFailureQueue');
    this.queue = secureQueue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(DELIVERY_QUEUE.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: DELIVERY_QUEUE.maxReceiveCount },
    });

    this.fanoutFunction = new ServiceFunction(this, 'FanoutFunction', {
      invokedBy: 'event source',
      entry: 'functions/webhook-fanout.ts',
      description: 'Webhook fan-out: table stream event -> one SQS message per subscribed, enabled webhook',
      timeout: Duration.seconds(FANOUT_STREAM.timeoutSeconds),
      environment: { TABLE_NAME: table.tableName, QUEUE_URL: this.queue.queueUrl },
    });
    // Reads webhook configs (Query) and the project's name (GetItem), both in PROJECT# partitions only.
    grantItems(this.fanoutFunction, table, ['dynamodb:GetItem', 'dynamodb:Query'], ['project']);
    this.queue.grantSendMessages(this.fanoutFunction);
    this.fanoutFunction.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: lambda.StartingPosition.LATEST,
        batchSize: FANOUT_STREAM.batchSize,
        filters: [lambda.FilterCriteria.filter(STREAM_FILTER_PATTERN)],
        bisectBatchOnError: true,
        retryAttempts: FANOUT_STREAM.retryAttempts,
        maxRecordAge: Duration.seconds(FANOUT_STREAM.maxRecordAgeSeconds),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.fanoutFailureQueue),
      }),
    );

    this.deliveryFunction = new ServiceFunction(this, 'DeliveryFunction', {
      invokedBy: 'event source',
      entry: 'functions/webhook-delivery.ts',
      description: 'Webhook delivery: SQS message -> Discord embed, posted once per delivery id',
      timeout: Duration.seconds(DELIVERY_TIMEOUT_SECONDS),
      environment: {
        TABLE_NAME: table.tableName,
        QUEUE_URL: this.queue.queueUrl,
        DEAD_LETTER_QUEUE_URL: this.deadLetterQueue.queueUrl,
        CLAIM_STALE_AFTER_SECONDS: String(DELIVERY_QUEUE.visibilityTimeoutSeconds),
        DISCORD_API_BASE: props.discordApiBase ?? DEFAULT_DISCORD_API_BASE,
      },
    });
    // Webhook configs: read whether one is still enabled, and disable one Discord no longer knows.
    // Named attributes only, so it cannot change a project's owner or plan, or anything else of a project item.
    grantItems(this.deliveryFunction, table, ['dynamodb:GetItem'], ['project'], { attributes: WEBHOOK_STATE_ATTRIBUTES });
    grantItems(this.deliveryFunction, table, ['dynamodb:UpdateItem'], ['project'], { attributes: WEBHOOK_DISABLE_ATTRIBUTES, returnValues: ['NONE'] });
    // Delivery claims: put (claim) and update (sent, released), in DELIVERY# partitions only.
    grantItems(this.deliveryFunction, table, ['dynamodb:PutItem', 'dynamodb:UpdateItem'], ['deliveryClaim']);
    // Deliveries Discord refuses go to the DLQ at once instead of through the receive count.
    this.deadLetterQueue.grantSendMessages(this.deliveryFunction);
    // A 429 is answered with a delayed copy on the same queue, so Discord's rate limits spend no receive.
    this.queue.grantSendMessages(this.deliveryFunction);
    // The event source grants receive, delete and ChangeMessageVisibility (the backoff of failed posts).
    acknowledgeQueueFailures(this.deliveryFunction);
    this.deliveryFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: DELIVERY_QUEUE.batchSize,
        reportBatchItemFailures: true,
        // Discord limits each webhook to a few posts a second; more parallel batches only buy 429s.
        maxConcurrency: 5,
      }),
    );

    // A table encrypted with a customer key: the fan-out reads it, the delivery also writes it.
    table.encryptionKey?.grantDecrypt(this.fanoutFunction);
    table.encryptionKey?.grantEncryptDecrypt(this.deliveryFunction);

    this.alarms = [
      depthAlarm(this, 'DeadLetterAlarm', this.deadLetterQueue, 'Webhook deliveries that never got through are waiting in the DLQ.'),
      depthAlarm(this, 'FanoutFailureAlarm', this.fanoutFailureQueue, 'Table stream batches the webhook fan-out gave up on.'),
    ];
  }
}
