import type { Logger } from '@aws-lambda-powertools/logger';
import type { TelemetryStore } from '#domain/ports';
import { awsLogger, awsStores, clock } from './aws';

/** What the analytics functions (the ingests, the daily detectors, the alert digest) are built from. */
export interface AnalyticsDeps {
  store: TelemetryStore;
  now: () => number;
  logger: Logger;
}

/** Rejections written to the log per batch; the caller gets all of them in the result. */
export const LOGGED_REJECTIONS = 10;

export const awsAnalyticsDeps = (): AnalyticsDeps => ({ store: awsStores().telemetry, now: clock, logger: awsLogger('analytics') });
