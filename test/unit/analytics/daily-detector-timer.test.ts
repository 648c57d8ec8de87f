import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TelemetryStore } from '#domain/ports';
import { nextDailyRun, startDailyDetectorTimer } from '#local/daily-detector-timer';

const at = (iso: string) => Date.parse(iso) / 1000;

/** A store whose days all had no executions; records which days the detector asked about. */
function emptyStore(asked: string[]): TelemetryStore {
  const store: Pick<TelemetryStore, 'executionsOn'> = {
    executionsOn: async (date) => {
      asked.push(date);
      return new Map();
    },
  };
  return store as TelemetryStore;
}

describe('nextDailyRun', () => {
  it('is 00:05 UTC of the same day before it, and of the next day from 00:05 on', () => {
    expect(nextDailyRun(at('2023-11-14T00:04:59Z'))).toBe(at('2023-11-14T00:05:00Z'));
    expect(nextDailyRun(at('2023-11-14T00:05:00Z'))).toBe(at('2023-11-15T00:05:00Z'));
    expect(nextDailyRun(at('2023-11-14T22:13:20Z'))).toBe(at('2023-11-15T00:05:00Z'));
  });
});

describe('startDailyDetectorTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2023-11-14T22:13:20Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('runs the detector at 00:05 UTC for the day that just ended, then again the next day', async () => {
    const asked: string[] = [];
    const results: string[] = [];
    const timer = startDailyDetectorTimer({ store: emptyStore(asked), onResult: (result) => results.push(result.date) });
    expect(timer.nextRunAt).toBe(at('2023-11-15T00:05:00Z'));

    await vi.advanceTimersByTimeAsync(Date.parse('2023-11-15T00:04:59Z') - Date.now());
    expect(results).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(results).toEqual(['2023-11-14']);
    expect(asked.sort()).toEqual(['2023-11-13', '2023-11-14']);
    expect(timer.nextRunAt).toBe(at('2023-11-16T00:05:00Z'));

    await vi.advanceTimersByTimeAsync(24 * 3600 * 1000);
    expect(results).toEqual(['2023-11-14', '2023-11-15']);
    await timer.stop();
  });

  it('reports a failed run and keeps the schedule', async () => {
    const errors: unknown[] = [];
    const failing: Pick<TelemetryStore, 'executionsOn'> = { executionsOn: async () => Promise.reject(new Error('table down')) };
    const timer = startDailyDetectorTimer({ store: failing as TelemetryStore, onError: (error) => errors.push(error) });
    await vi.advanceTimersByTimeAsync(Date.parse('2023-11-15T00:05:00Z') - Date.now());
    expect(errors).toEqual([new Error('table down')]);
    expect(timer.nextRunAt).toBe(at('2023-11-16T00:05:00Z'));
    await timer.stop();
  });

  it('runs nothing after stop', async () => {
    const asked: string[] = [];
    const timer = startDailyDetectorTimer({ store: emptyStore(asked) });
    await timer.stop();
    await vi.advanceTimersByTimeAsync(3 * 24 * 3600 * 1000);
    expect(asked).toEqual([]);
  });
});
