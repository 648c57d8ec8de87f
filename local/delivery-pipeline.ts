import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { DynamoDeliveryStore } from '#adapters/delivery-store';
import { DELIVERY_QUEUE } from '#domain/webhooks/delivery-settings';
import { createDeliveryHandler } from '#functions/webhook-delivery';
import { createFanoutHandler } from '#functions/webhook-fanout';
import { type DeadLetter, InProcessQueue } from './in-process-queue';
import { startStreamPoller } from './stream-poller';

/**
 * The webhook path of the deployed stack, on one machine: DynamoDB Local's stream → the fan-out handler →
 * an in-process queue → the delivery handler → `discordApiBase` (the local Discord stand-in). The handlers
 * are the deployed ones, built with `createFanoutHandler`/`createDeliveryHandler` around local adapters.
 */

export interface DeliveryPipelineOptions {
  /** DynamoDB Local's endpoint. */
  endpoint: string;
  tableName: string;
  /** e.g. `http://127.0.0.1:3000/_local/discord`. */
  discordApiBase: string;
  /** How often the stream is read (default 250 ms). */
  pollIntervalMs?: number;
  /** Handler log lines at this level and above reach stdout (default WARN: problems only). */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
}

export interface DeliveryPipeline {
  stop(): Promise<void>;
  /** Messages the queue gave up on, as the DLQ would hold them. */
  deadLetters(): DeadLetter[];
}

/**
 * Retries come back after 1 s, 2 s, 4 s... instead of AWS's 10 s, 20 s, 40 s..., so a local failure shows its
 * retries while someone watches; the rest of the queue's behaviour is AWS's.
 */
const LOCAL_RETRY_BASE_SECONDS = 1;

/** Resolves once the stream is being read: every version uploaded after that reaches the stand-in. */
export async function startDeliveryPipeline(options: DeliveryPipelineOptions): Promise<DeliveryPipeline> {
  const clientConfig = localDynamoConfig(options.endpoint);
  const store = new DynamoDeliveryStore(createDocumentClient(clientConfig), options.tableName);
  const queue = new InProcessQueue({
    visibilityTimeoutSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
    maxReceiveCount: DELIVERY_QUEUE.maxReceiveCount,
    batchSize: DELIVERY_QUEUE.batchSize,
  });
  const logLevel = options.logLevel ?? 'WARN';
  const fanout = createFanoutHandler({ store, queue, logger: new Logger({ serviceName: 'webhook-fanout', logLevel }) });
  const deliver = createDeliveryHandler({
    store,
    inFlight: queue,
    logger: new Logger({ serviceName: 'webhook-delivery', logLevel }),
    discordApiBase: options.discordApiBase,
    claimStaleAfterSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
    retryBaseSeconds: LOCAL_RETRY_BASE_SECONDS,
  });

  const dynamodb = new DynamoDBClient(clientConfig);
  const streams = new DynamoDBStreamsClient(clientConfig);
  const poller = await startStreamPoller({
    dynamodb,
    streams,
    tableName: options.tableName,
    handler: (event) => fanout(event),
    pollIntervalMs: options.pollIntervalMs,
  });
  queue.start((event) => deliver(event));

  return {
    async stop() {
      await poller.stop();
      await queue.stop();
      dynamodb.destroy();
      streams.destroy();
    },
    deadLetters: () => queue.deadLetters(),
  };
}
