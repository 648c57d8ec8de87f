import { DIGEST_DELAY_SECONDS } from '#domain/analytics/alert-budget';
import { type AlertDigestResult, runAlertDigest } from '#domain/analytics/alert-digest';
import type { TelemetryStore } from '#domain/ports';
import { HOUR_SECONDS } from '#domain/time';

export interface AlertDigestTimerOptions {
  store: TelemetryStore;
  onResult?: (result: AlertDigestResult) => void;
  onError?: (error: unknown) => void;
}

/** The first :02 of an hour strictly after `now` (Unix seconds). */
export function nextDigestRun(now: number): number {
  const thisHour = now - (now % HOUR_SECONDS) + DIGEST_DELAY_SECONDS;
  return thisHour > now ? thisHour : thisHour + HOUR_SECONDS;
}

/**
 * The local stand-in for the hourly EventBridge schedule of the alert digest: shortly after each hour, the digest
 * of the hour that ended, as the Lambda runs it. The timer does not keep the process alive by itself.
 */
export function startAlertDigestTimer(options: AlertDigestTimerOptions): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    const nowMs = Date.now();
    const runAt = nextDigestRun(Math.floor(nowMs / 1000));
    timer = setTimeout(
      () => {
        running = runAlertDigest(options.store, runAt, Math.floor(Date.now() / 1000))
          .then(
            (result) => options.onResult?.(result),
            (error: unknown) => options.onError?.(error),
          )
          .finally(() => {
            if (!stopped) schedule();
          });
      },
      runAt * 1000 - nowMs,
    );
    timer.unref();
  };

  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
