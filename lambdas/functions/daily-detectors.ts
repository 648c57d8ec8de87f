import type { ScheduledEvent } from 'aws-lambda';
import { type DailyDetectionResult, runDailyDetection } from '#domain/analytics/daily';
import { dayStart, utcDate } from '#domain/time';
import { type AnalyticsDeps, awsAnalyticsDeps } from '#runtime/analytics';
import { lazyHandler } from '#runtime/aws';

/**
 * The daily detector, run by an EventBridge schedule shortly after 00:00 UTC. The day comes from the schedule's
 * own `time`, so a late or retried invocation still judges the day its schedule meant.
 */
export function createDailyHandler({ store, now, logger }: AnalyticsDeps) {
  return async (event: Partial<Pick<ScheduledEvent, 'time'>>): Promise<DailyDetectionResult> => {
    const scheduled = event.time?.slice(0, 10);
    const today = scheduled !== undefined && dayStart(scheduled) !== undefined ? scheduled : utcDate(now());
    const result = await runDailyDetection(store, today, now());
    logger.info('Daily detection done', { ...result });
    return result;
  };
}

export const handler = lazyHandler(() => createDailyHandler(awsAnalyticsDeps()));
