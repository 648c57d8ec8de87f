import type { Context } from 'aws-lambda';
import { type IngestResult, ingestTelemetry } from '#domain/analytics/ingest';
import { type AnalyticsDeps, awsAnalyticsDeps, LOGGED_REJECTIONS } from '#runtime/analytics';
import { lazyHandler } from '#runtime/aws';
import { IngestRequestSchema } from '#schemas/telemetry';

/**
 * Telemetry ingest, invoked directly by the loader side (no HTTP) with `{ "records": [...] }`. Bad records are
 * counted and explained in the result; only an envelope that is not a batch at all fails the invocation.
 */
export function createIngestHandler({ store, now, logger }: AnalyticsDeps) {
  return async (event: unknown, context?: Pick<Context, 'awsRequestId'>): Promise<IngestResult> => {
    const request = IngestRequestSchema.safeParse(event);
    if (!request.success) throw new Error(`Invalid ingest request: ${request.error.issues.map((issue) => issue.message).join('; ')}`);
    // Lambda retries an asynchronous invocation with the same request id: the stats count its records once.
    const result = await ingestTelemetry(store, request.data.records, now(), context ? `invoke:${context.awsRequestId}` : undefined);
    logger.info('Telemetry ingested', {
      accepted: result.accepted,
      rejected: result.rejected,
      rejections: result.rejections.slice(0, LOGGED_REJECTIONS),
      events: result.events,
    });
    return result;
  };
}

export const handler = lazyHandler(() => createIngestHandler(awsAnalyticsDeps()));
