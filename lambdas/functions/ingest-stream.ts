import { createHash } from 'node:crypto';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { readCheckRecord } from '#adapters/check-stream';
import { CHECK_RECORD_UNREADABLE } from '#adapters/telemetry-queue';
import { type IngestResult, ingestTelemetry } from '#domain/analytics/ingest';
import { checkTelemetry } from '#domain/key-check';
import { type AnalyticsDeps, awsAnalyticsDeps, LOGGED_REJECTIONS } from '#runtime/analytics';
import { lazyHandler } from '#runtime/aws';

/**
 * Telemetry of counted checks from the table's stream (lambdas/adapters/check-stream.ts): a batch of key items'
 * MODIFY records, folded into one ingest like a batch from the refusals' queue. A record that cannot be read is
 * logged and counted (a retry would read it the same); a failing ingest throws, so the event-source mapping
 * retries the batch, halves it on each error until the failing record stands alone, and sends what still fails to
 * its on-failure queue, which an alarm watches. Nothing waits on this: the check answered when its write returned.
 * The mapping retries a failed batch whole (no bisecting), so the batch is one delivery unit for the stats: a retry
 * after its counters moved moves them no further.
 */
export function createIngestStreamHandler({ store, now, logger }: AnalyticsDeps) {
  return async (event: DynamoDBStreamEvent): Promise<{ ingested: IngestResult; checks: number }> => {
    const records = [];
    let checks = 0;
    for (const record of event.Records) {
      const reading = readCheckRecord(record);
      if (reading.kind === 'invalid') logger.error(CHECK_RECORD_UNREADABLE, { eventID: record.eventID, problem: reading.problem });
      if (reading.kind !== 'counted') continue;
      checks++;
      records.push(...checkTelemetry(reading.report, reading.keyId, 'KEY_VALID', reading.at));
    }
    const ingested = await ingestTelemetry(store, records, now(), streamBatchId(event));
    logger.info('Telemetry ingested from the stream', {
      streamRecords: event.Records.length,
      checks,
      accepted: ingested.accepted,
      rejected: ingested.rejected,
      rejections: ingested.rejections.slice(0, LOGGED_REJECTIONS),
      events: ingested.events,
    });
    return { ingested, checks };
  };
}

/** A stream batch's id: its records' event ids, which a retry of the same batch hands over again. */
export const streamBatchId = (event: DynamoDBStreamEvent): string =>
  `stream:${createHash('sha256')
    .update(event.Records.map((record) => record.eventID ?? '').join('\n'))
    .digest('hex')}`;

export const handler = lazyHandler(() => createIngestStreamHandler(awsAnalyticsDeps()));
