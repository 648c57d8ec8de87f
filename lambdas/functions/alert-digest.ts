import type { ScheduledEvent } from 'aws-lambda';
import { type AlertDigestResult, runAlertDigest } from '#domain/analytics/alert-digest';
import { type AnalyticsDeps, awsAnalyticsDeps } from '#runtime/analytics';
import { lazyHandler } from '#runtime/aws';

/**
 * The hourly alert digest, run by an EventBridge schedule shortly after each hour. The hour comes from the
 * schedule's own `time`, so a late or retried invocation still digests the hour its schedule meant.
 */
export function createAlertDigestHandler({ store, now, logger }: AnalyticsDeps) {
  return async (event: Partial<Pick<ScheduledEvent, 'time'>>): Promise<AlertDigestResult> => {
    const scheduled = event.time === undefined ? Number.NaN : Math.floor(Date.parse(event.time) / 1000);
    const result = await runAlertDigest(store, Number.isFinite(scheduled) ? scheduled : now(), now());
    logger.info('Alert digest done', { ...result });
    return result;
  };
}

export const handler = lazyHandler(() => createAlertDigestHandler(awsAnalyticsDeps()));
