import type { SQSEvent } from 'aws-lambda';
import { type IngestResult, ingestTelemetry } from '#domain/analytics/ingest';
import { type AnalyticsDeps, awsAnalyticsDeps, LOGGED_REJECTIONS } from '#runtime/analytics';
import { lazyHandler } from '#runtime/aws';
import { IngestRequestSchema } from '#schemas/telemetry';

/**
 * Telemetry from the queue the loader check writes to: a batch of messages, each `{"records": [...]}`, folded into
 * one ingest (one counter update per project and day, one window per key and hour...), so a busy minute of checks
 * costs requests per aggregate, not per check. A message that is not a batch is logged and dropped (a retry would
 * read it the same); a failing ingest fails the batch, which the queue brings back and in the end sets aside in its
 * dead-letter queue. Ingest is at least once: a batch retried after a partial failure counts its executions again
 * in the daily counters, but not in the stats, which count each message once.
 */
export function createIngestQueueHandler({ store, now, logger }: AnalyticsDeps) {
  return async (event: SQSEvent): Promise<IngestResult> => {
    const records: unknown[] = [];
    // A message is the delivery unit: SQS may redeliver it in another batch, and its stats count once.
    const units: string[] = [];
    for (const message of event.Records) {
      const batch = IngestRequestSchema.safeParse(parseJson(message.body));
      if (batch.success) {
        records.push(...batch.data.records);
        units.push(...batch.data.records.map(() => `queue:${message.messageId}`));
      } else logger.error('Telemetry message is not a batch; dropped', { messageId: message.messageId, problem: batch.error.issues[0]?.message });
    }
    const result = await ingestTelemetry(store, records, now(), units);
    logger.info('Telemetry ingested from the queue', {
      messages: event.Records.length,
      accepted: result.accepted,
      rejected: result.rejected,
      rejections: result.rejections.slice(0, LOGGED_REJECTIONS),
      events: result.events,
    });
    return result;
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const handler = lazyHandler(() => createIngestQueueHandler(awsAnalyticsDeps()));
