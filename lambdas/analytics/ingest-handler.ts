import { type AnalyticsDeps, analyticsDepsFromEnv } from './handler-deps';
import { type IngestResult, ingestTelemetry } from './ingest';
import { IngestRequestSchema } from './telemetry';

/** Rejections written to the log per batch; the caller gets all of them in the result. */
const LOGGED_REJECTIONS = 10;

/**
 * Telemetry ingest, invoked directly by the loader side (no HTTP) with `{ "records": [...] }`. Bad records are
 * counted and explained in the result; only an envelope that is not a batch at all fails the invocation.
 */
export function createIngestHandler(deps: () => AnalyticsDeps = analyticsDepsFromEnv) {
  return async (event: unknown): Promise<IngestResult> => {
    const { store, now, logger } = deps();
    const request = IngestRequestSchema.safeParse(event);
    if (!request.success) throw new Error(`Invalid ingest request: ${request.error.issues.map((issue) => issue.message).join('; ')}`);
    const result = await ingestTelemetry(store, request.data.records, now());
    logger.info('Telemetry ingested', {
      accepted: result.accepted,
      rejected: result.rejected,
      rejections: result.rejections.slice(0, LOGGED_REJECTIONS),
      events: result.events,
    });
    return result;
  };
}

export const handler = createIngestHandler();
