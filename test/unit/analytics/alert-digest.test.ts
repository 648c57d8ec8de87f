import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { ALERTS_PER_HOUR, admittedOf } from '#domain/analytics/alert-budget';
import type { AlertHour, AnalyticsEvent } from '#domain/analytics/model';
import type { TelemetryStore } from '#domain/ports';
import { createAlertDigestHandler } from '#functions/alert-digest';
import { nextDigestRun } from '#local/alert-digest-timer';

const at = (iso: string) => Date.parse(iso) / 1000;
const NOW = at('2023-11-14T22:13:20Z');

describe('admittedOf', () => {
  it('admits what fits under the limit after the claims before this one, and never a negative count', () => {
    expect(admittedOf(2, 2, ALERTS_PER_HOUR)).toBe(2);
    expect(admittedOf(4, 2, ALERTS_PER_HOUR)).toBe(1);
    expect(admittedOf(9, 5, ALERTS_PER_HOUR)).toBe(0);
    // Concurrent claims take disjoint ranges of the counter, so together they admit exactly the limit.
    expect([2, 4, 6].map((total) => admittedOf(total, 2, ALERTS_PER_HOUR)).reduce((a, b) => a + b)).toBe(ALERTS_PER_HOUR);
  });
});

describe('alert digest handler', () => {
  const hour: AlertHour = {
    projectId: 'prj_a',
    name: 'new_executor',
    hourStart: at('2023-11-14T21:00:00Z'),
    claimed: 40,
    held: 37,
    untracked: 12,
    firstAt: NOW - 3000,
    lastAt: NOW - 1000,
    sample: [{ executor: 'Wave', firstSeenAt: NOW - 3000, previouslySeenAt: null }],
  };

  it("digests the hour before the schedule's own time, once per project and kind, with what was posted, held and not tracked", async () => {
    const asked: number[] = [];
    const written: AnalyticsEvent[] = [];
    const store = {
      heldAlerts: async (hourStart: number) => {
        asked.push(hourStart);
        return [hour];
      },
      putEvent: async (event: AnalyticsEvent) => {
        written.push(event);
        return true;
      },
    } as Pick<TelemetryStore, 'heldAlerts' | 'putEvent'> as TelemetryStore;
    const handler = createAlertDigestHandler({ store, now: () => NOW, logger: new Logger({ serviceName: 'test', logLevel: 'SILENT' }) });
    const result = await handler({ time: '2023-11-14T22:02:00Z' });
    expect(asked).toEqual([hour.hourStart]);
    expect(result).toEqual({
      hourStart: hour.hourStart,
      events: [{ name: 'new_executor', projectId: 'prj_a', dedupKey: 'digest#2023-11-14T21', summarizes: 49 }],
    });
    expect(written).toEqual([
      {
        name: 'new_executor',
        projectId: 'prj_a',
        dedupKey: 'digest#2023-11-14T21',
        occurredAt: at('2023-11-14T22:00:00Z'),
        data: { hour: '2023-11-14T21', posted: ALERTS_PER_HOUR, held: 37, untracked: 12, firstAt: NOW - 3000, lastAt: NOW - 1000, sample: hour.sample },
      },
    ]);
  });
});

describe('nextDigestRun', () => {
  it('is :02 of the same hour before it, and of the next hour from :02 on', () => {
    expect(nextDigestRun(at('2023-11-14T22:01:59Z'))).toBe(at('2023-11-14T22:02:00Z'));
    expect(nextDigestRun(at('2023-11-14T22:02:00Z'))).toBe(at('2023-11-14T23:02:00Z'));
    expect(nextDigestRun(at('2023-11-14T23:59:59Z'))).toBe(at('2023-11-15T00:02:00Z'));
  });
});
