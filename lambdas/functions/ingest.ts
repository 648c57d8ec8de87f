import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { type IngestResult, ingestTelemetry } from '#domain/analytics/ingest';
import type { TelemetryStore } from '#domain/ports';
import { awsLogger, awsStores, clock, lazyHandler } from '#runtime/aws';
import { IngestRequestSchema } from '#schemas/telemetry';

/** What the analytics handlers are built from. */
export interface AnalyticsDeps {
  store: TelemetryStore;
  now: () => number;
  logger: Logger;
}

/** Rejections written to the log per batch; the caller gets all of them in the result. */
export const LOGGED_REJECTIONS = 10;

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

export const awsAnalyticsDeps = (): AnalyticsDeps => ({ store: awsStores().telemetry, now: clock, logger: awsLogger('analytics') });

export const handler = lazyHandler(() => createIngestHandler(awsAnalyticsDeps()));
