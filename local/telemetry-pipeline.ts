import { Logger } from '@aws-lambda-powertools/logger';
import { createIngestQueueHandler } from '#analytics/ingest-queue-handler';
import { QueueTelemetrySink, TELEMETRY_QUEUE } from '#analytics/telemetry-queue';
import { unixSeconds } from '#domain/model';
import type { TelemetrySink, TelemetryStore } from '#domain/ports';
import { type DeadLetter, InProcessQueue } from './in-process-queue';

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
 * The loader check's telemetry path of the deployed stack, on one machine: the same sink writes to an in-process
 * queue, and the same ingest handler the telemetry queue's event source runs consumes it in batches.
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
