import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CHECK_STREAM_FILTER_PATTERN } from '#adapters/check-stream';
import { localDynamoConfig } from '#adapters/client';
import { CHECK_STREAM, QueueTelemetrySink, TELEMETRY_QUEUE } from '#adapters/telemetry-queue';
import type { IngestResult } from '#domain/analytics/ingest';
import { unixSeconds } from '#domain/model';
import type { KeyCheckStore, TelemetrySink, TelemetryStore } from '#domain/ports';
import { createIngestQueueHandler } from '#functions/ingest-queue';
import { createIngestStreamHandler } from '#functions/ingest-stream';
import { type DeadLetter, InProcessQueue } from './in-process-queue';
import { startStreamPoller } from './stream-poller';

export interface TelemetryPipeline {
  /** Where the loader check reports, as the deployed function reports to SQS. */
  sink: TelemetrySink;
  stop(): Promise<void>;
  /** Batches the queue gave up on, as the telemetry DLQ would hold them. */
  deadLetters(): DeadLetter[];
  /** Checks' telemetry queued or being ingested: 0 once everything reported so far is in the table. */
  pending(): number;
}

/**
 * The refused checks' telemetry path of the deployed stack, on one machine: the same sink writes to an in-process
 * queue, and the same ingest handler the telemetry queue's event source runs consumes it in batches. (Counted
 * checks' telemetry rides on the key item's write and comes off the stream: startCheckStreamIngest below.)
 */
export function startTelemetryPipeline(options: { store: TelemetryStore; logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT' }): TelemetryPipeline {
  const logger = new Logger({ serviceName: 'analytics', logLevel: options.logLevel ?? 'WARN' });
  const queue = new InProcessQueue({
    visibilityTimeoutSeconds: TELEMETRY_QUEUE.visibilityTimeoutSeconds,
    maxReceiveCount: TELEMETRY_QUEUE.maxReceiveCount,
    batchSize: TELEMETRY_QUEUE.batchSize,
  });
  const ingest = createIngestQueueHandler({ store: options.store, now: () => unixSeconds(), logger });
  queue.start(async (event) => {
    await ingest(event);
  });
  return {
    sink: new QueueTelemetrySink(queue, new Logger({ serviceName: 'loader-check', logLevel: options.logLevel ?? 'WARN' })),
    stop: () => queue.stop(),
    deadLetters: () => queue.deadLetters(),
    pending: () => queue.depth,
  };
}

export interface CheckStreamIngest {
  /** The key-check store to give the loader handlers: counts the checks whose telemetry the stream now owes. */
  watch(keys: KeyCheckStore): KeyCheckStore;
  /** Counted checks whose telemetry the stream has not ingested yet. */
  pending(): number;
  /** Reads the stream until it is caught up (a test that injects the ingest's time polls by hand: `autoPoll: false`). */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The counted checks' telemetry path of the deployed stack, on one machine: DynamoDB Local's stream → the same
 * ingest stream handler the deployed event-source mapping runs, with its filter, batch size and retries.
 */
export async function startCheckStreamIngest(options: {
  endpoint: string;
  tableName: string;
  store: TelemetryStore;
  now?: () => number;
  autoPoll?: boolean;
  /** How often the stream is read (the poller's default when absent). */
  pollIntervalMs?: number;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  /** Each batch's ingest result, for a test or a bench that counts what arrived. */
  onIngested?: (result: IngestResult, checks: number) => void;
}): Promise<CheckStreamIngest> {
  const clientConfig = localDynamoConfig(options.endpoint);
  const dynamodb = new DynamoDBClient(clientConfig);
  const streams = new DynamoDBStreamsClient(clientConfig);
  const ingest = createIngestStreamHandler({
    store: options.store,
    now: options.now ?? (() => unixSeconds()),
    logger: new Logger({ serviceName: 'analytics', logLevel: options.logLevel ?? 'WARN' }),
  });
  let counted = 0;
  let ingested = 0;
  const poller = await startStreamPoller({
    dynamodb,
    streams,
    tableName: options.tableName,
    filter: CHECK_STREAM_FILTER_PATTERN,
    batchSize: CHECK_STREAM.batchSize,
    retryAttempts: CHECK_STREAM.retryAttempts,
    autoPoll: options.autoPoll,
    pollIntervalMs: options.pollIntervalMs,
    handler: async (event) => {
      const result = await ingest(event);
      ingested += result.checks;
      options.onIngested?.(result.ingested, result.checks);
    },
  });
  return {
    watch: (keys) => ({
      peek: (keyId) => keys.peek(keyId),
      watermarkOf: (keyId) => keys.watermarkOf(keyId),
      async checkAndCount(check) {
        const result = await keys.checkAndCount(check);
        if (result.outcome === 'counted') counted++;
        return result;
      },
    }),
    pending: () => Math.max(0, counted - ingested),
    drain: () => poller.drain(),
    async stop() {
      await poller.stop();
      dynamodb.destroy();
      streams.destroy();
    },
  };
}
