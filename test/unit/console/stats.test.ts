import { describe, expect, it } from 'vitest';
import { bucketLabel, chartData, chartSummary, chartTitle } from '../../../console/src/logic/stats';

const HOUR = 3600;
const T0 = 1_764_147_600; // 2025-11-26 09:00 UTC

describe('console stats charts', () => {
  it('orders series by their total, largest first, and fills counts a bucket left out with 0', () => {
    const data = chartData({
      buckets: [
        { t: T0, total: 3, counts: { ok: 2, revoked: 1 } },
        { t: T0 + HOUR, total: 0, counts: {} },
        { t: T0 + 2 * HOUR, total: 6, counts: { ok: 1, expired: 5, hwid_locked: 0 } },
      ],
    });
    expect(data.series).toEqual(['expired', 'ok', 'revoked']);
    expect(data.rows.map((row) => row.values)).toEqual([
      [0, 2, 1],
      [0, 0, 0],
      [5, 1, 0],
    ]);
    expect(data.max).toBe(6);
    expect(data.total).toBe(9);
  });

  it('labels hour buckets by UTC hour and day buckets by UTC date', () => {
    expect(bucketLabel(T0, 'hour')).toBe('2025-11-26 09:00');
    expect(bucketLabel(T0, 'day')).toBe('2025-11-26');
  });

  it('says in words what the chart shows: totals by name and the busiest bucket', () => {
    const data = chartData({
      buckets: [
        { t: T0, total: 1200, counts: { Synapse: 1000, Wave: 200 } },
        { t: T0 + HOUR, total: 34, counts: { Synapse: 34 } },
      ],
    });
    expect(chartSummary(data, 'executor', 'hour')).toBe(
      'Executions by executor, last 24 hours by hour: 1,234 in all (Synapse 1,034, Wave 200). Busiest hour 2025-11-26 09:00 UTC with 1,200.',
    );
    expect(chartSummary(chartData({ buckets: [{ t: T0, total: 0, counts: {} }] }), 'result', 'day')).toBe(
      'Key checks by result, last 30 days by day: none in this period.',
    );
    expect(chartTitle('version', 'day')).toBe('Executions by version, last 30 days by day');
  });
});
