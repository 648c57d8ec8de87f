import { describe, expect, it } from 'vitest';
import { COALESCE_ABOVE, groupStorms, summarize } from '#domain/analytics/coalesce';
import { detectNewExecutor } from '#domain/analytics/detectors';
import type { AnalyticsEvent } from '#domain/analytics/model';
import { EVENT_DATA, SUMMARY_SAMPLE_LIMIT } from '#schemas/events';

const NOW = 1_700_000_000;

/** `n` new_executor events of one project, as a batch of never-seen executors fires them. */
const newExecutors = (projectId: string, n: number, from = 0): AnalyticsEvent[] =>
  Array.from(
    { length: n },
    (_, i) => detectNewExecutor({ projectId, executor: `exec-${from + i}`, lastSeenAt: null, sightings: [NOW + from + i] }).events,
  ).flat();

const drop = (projectId: string): AnalyticsEvent => ({
  name: 'execution_drop',
  projectId,
  dedupKey: '2023-11-13',
  occurredAt: NOW,
  data: { date: '2023-11-13', executions: 1, previousExecutions: 10, dropPercent: 90 },
});

describe('groupStorms', () => {
  it(`leaves ${COALESCE_ABOVE} events of one name for one project alone and makes ${COALESCE_ABOVE + 1} a storm`, () => {
    expect(groupStorms(newExecutors('prj_a', COALESCE_ABOVE))).toEqual({ singles: newExecutors('prj_a', COALESCE_ABOVE), storms: [] });
    expect(groupStorms(newExecutors('prj_a', COALESCE_ABOVE + 1))).toEqual({ singles: [], storms: [newExecutors('prj_a', COALESCE_ABOVE + 1)] });
  });

  it('counts per project and per name: many projects with a few each make no storm', () => {
    const events = [...newExecutors('prj_a', 4), ...newExecutors('prj_b', 4), ...newExecutors('prj_c', 20)];
    const { singles, storms } = groupStorms(events);
    expect(singles).toHaveLength(8);
    expect(storms.map((storm) => [storm[0]?.projectId, storm.length])).toEqual([['prj_c', 20]]);
  });

  it('never summarizes execution_drop, which fires once per project and day anyway', () => {
    const drops = Array.from({ length: 10 }, () => drop('prj_a'));
    expect(groupStorms(drops).storms).toEqual([]);
  });
});

describe('summarize', () => {
  it(`stands for every event with their count, first and last time and the first ${SUMMARY_SAMPLE_LIMIT} in time order`, () => {
    const storm = newExecutors('prj_a', 500);
    const summary = summarize([...storm].reverse());
    expect(summary).toMatchObject({ name: 'new_executor', projectId: 'prj_a', occurredAt: NOW });
    expect(summary.data).toEqual({ count: 500, firstAt: NOW, lastAt: NOW + 499, sample: storm.slice(0, SUMMARY_SAMPLE_LIMIT).map((event) => event.data) });
    expect(EVENT_DATA.new_executor.safeParse(summary.data).success).toBe(true);
  });

  it('makes the same dedup key for the same conditions in any order, so a retried storm is written once', () => {
    const storm = newExecutors('prj_a', 12);
    expect(summarize(storm).dedupKey).toBe(summarize([...storm].reverse()).dedupKey);
    expect(summarize(storm).dedupKey).toMatch(/^summary#[0-9a-f]{32}$/);
  });

  it('makes another dedup key for any other set of conditions, so a summary never silences a later storm', () => {
    const keys = new Set([
      summarize(newExecutors('prj_a', 12)).dedupKey,
      summarize(newExecutors('prj_a', 13)).dedupKey,
      summarize(newExecutors('prj_a', 12, 1)).dedupKey,
    ]);
    expect(keys.size).toBe(3);
  });

  it('refuses what it cannot summarize', () => {
    expect(() => summarize([])).toThrow();
    expect(() => summarize([drop('prj_a')])).toThrow();
  });
});
