import type { Logger } from '@aws-lambda-powertools/logger';
import type { TelemetrySink } from '#domain/ports';
import type { MessageSender } from '#domain/webhooks/ports';
import type { ExecutionRecord, ValidationRecord } from '#schemas/telemetry';

/** The ingest function's timeout: a batch of 100 checks' records is a few dozen requests at bounded parallelism. */
export const INGEST_TIMEOUT_SECONDS = 60;

/** Numbers the CDK stack and the local stack share, so the local queue behaves like the deployed one. */
export const TELEMETRY_QUEUE = {
  /** Checks folded into one ingest: the more, the fewer writes per check (one counter update per project and day). */
  batchSize: 100,
  /** How long the event source gathers a batch: telemetry may wait seconds, the detectors judge hours and days. */
  maxBatchingWindowSeconds: 5,
  /** Six times the ingest function's timeout, as AWS advises for a Lambda-consumed queue. */
  visibilityTimeoutSeconds: 6 * INGEST_TIMEOUT_SECONDS,
  /** Receives before a batch that keeps failing is set aside in the dead-letter queue (and its alarm). */
  maxReceiveCount: 5,
} as const;

/**
 * The ingest of counted checks from the table's stream (lambdas/functions/ingest-stream.ts): numbers the CDK
 * stack's event-source mapping and the local stream poller share.
 */
export const CHECK_STREAM = {
  /** Stream records per ingest: like the queue's, the more, the fewer aggregate writes per check. */
  batchSize: 1_000,
  maxBatchingWindowSeconds: 5,
  /** Retries of a failing batch (bisected on each error) before its records go to the on-failure queue and its alarm. */
  retryAttempts: 5,
  /** Within MAX_RECORD_AGE_SECONDS' bound on what ingest accepts, and the stream's own 24 hours. */
  maxRecordAgeSeconds: 6 * 3600,
} as const;

/** The log line (and CloudWatch metric filter) that counts counted checks' stream records ingest could not read. */
export const CHECK_RECORD_UNREADABLE = 'Check stream record unreadable; skipped';

/** The log line (and CloudWatch metric filter) that counts checks whose telemetry could not be queued. */
export const TELEMETRY_NOT_QUEUED = 'Telemetry not queued';

/**
 * A refused check's telemetry onto the ingest queue (a counted check's rides on its write to the key item and comes
 * off the table's stream): one message per refusal, `{"records": [...]}` as the ingest function takes it. Ingest (aggregates, detectors) runs off the answer's path. A send the SDK could not get through
 * after its retries does not fail the check, whose answer is right either way: it is logged and counted.
 */
export class QueueTelemetrySink implements TelemetrySink {
  constructor(
    private readonly queue: MessageSender,
    private readonly logger: Logger,
  ) {}

  async report(records: readonly (ValidationRecord | ExecutionRecord)[]): Promise<void> {
    // The project is the tenant: on a fair queue one project's flood of checks does not hold up another's telemetry.
    const message = { id: 'check', body: JSON.stringify({ records }), groupId: records[0]?.projectId };
    try {
      const refused = await this.queue.sendBatch([message]);
      if (refused.length === 0) return;
    } catch (error) {
      this.logger.error(TELEMETRY_NOT_QUEUED, { records: records.length, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      return;
    }
    this.logger.error(TELEMETRY_NOT_QUEUED, { records: records.length, error: 'refused by the queue' });
  }
}
