import { type DailyDetectionResult, runDailyDetection } from '#domain/analytics/daily';
import type { TelemetryStore } from '#domain/ports';
import { DAY_SECONDS, utcDate } from '#domain/time';

/** Seconds after 00:00 UTC the detector runs, as the AWS schedule does (cron 5 0 * * ? *). */
const DAILY_RUN_OFFSET_SECONDS = 5 * 60;

export interface DailyDetectorTimerOptions {
  store: TelemetryStore;
  onResult?: (result: DailyDetectionResult) => void;
  onError?: (error: unknown) => void;
  /** Wall clock in milliseconds; tests pass a fake one. */
  nowMs?: () => number;
}

export interface DailyDetectorTimer {
  /** Unix seconds of the next run. */
  readonly nextRunAt: number;
  /** No further runs; resolves once a run in progress has finished, so the table can be shut down after. */
  stop(): Promise<void>;
}

/** The first 00:05 UTC strictly after `now` (Unix seconds). */
export function nextDailyRun(now: number): number {
  const today = now - (now % DAY_SECONDS) + DAILY_RUN_OFFSET_SECONDS;
  return today > now ? today : today + DAY_SECONDS;
}

/**
 * The local stand-in for the EventBridge schedule: runs the daily detector shortly after each UTC midnight
 * for as long as the local stack runs. Like the Lambda, a run judges the day before the day it was scheduled
 * on, even if the timer fires late. The timer does not keep the process alive by itself.
 */
export function startDailyDetectorTimer(options: DailyDetectorTimerOptions): DailyDetectorTimer {
  const nowMs = options.nowMs ?? Date.now;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let nextRunAt = 0;

  const schedule = () => {
    const now = nowMs();
    nextRunAt = nextDailyRun(Math.floor(now / 1000));
    timer = setTimeout(fire, nextRunAt * 1000 - now);
    timer.unref();
  };

  const fire = () => {
    const today = utcDate(nextRunAt);
    running = runDailyDetection(options.store, today, Math.floor(nowMs() / 1000))
      .then(
        (result) => options.onResult?.(result),
        (error: unknown) => options.onError?.(error),
      )
      .finally(() => {
        if (!stopped) schedule();
      });
  };

  schedule();
  return {
    get nextRunAt() {
      return nextRunAt;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
