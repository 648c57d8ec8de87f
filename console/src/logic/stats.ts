import { formatCount } from './format';

/** The stats route's answer (DESIGN.md "Stats"). */
interface StatsBucket {
  t: number;
  total: number;
  counts: Record<string, number>;
}

export interface StatsAnswer {
  granularity: 'hour' | 'day';
  by: 'result' | 'executor' | 'version';
  from: number;
  to: number;
  buckets: StatsBucket[];
}

/** One chart's data: its series (largest first) and, per bucket, each series' count (0 where the answer left it out). */
export interface ChartData {
  series: string[];
  rows: { t: number; total: number; values: number[] }[];
  max: number;
  total: number;
}

export function chartData(answer: Pick<StatsAnswer, 'buckets'>): ChartData {
  const totals = new Map<string, number>();
  for (const bucket of answer.buckets) for (const [name, count] of Object.entries(bucket.counts)) totals.set(name, (totals.get(name) ?? 0) + count);
  const series = [...totals.entries()]
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name]) => name);
  const rows = answer.buckets.map((bucket) => ({ t: bucket.t, total: bucket.total, values: series.map((name) => bucket.counts[name] ?? 0) }));
  return {
    series,
    rows,
    max: rows.reduce((max, row) => Math.max(max, row.total), 0),
    total: rows.reduce((sum, row) => sum + row.total, 0),
  };
}

/** A bucket's start as the chart and its table label it: `14:00` for an hour, `2026-11-26` for a day (UTC). */
export function bucketLabel(t: number, granularity: 'hour' | 'day'): string {
  const iso = new Date(t * 1000).toISOString();
  return granularity === 'hour' ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10);
}

const WHAT: Record<StatsAnswer['by'], string> = {
  result: 'Key checks by result',
  executor: 'Executions by executor',
  version: 'Executions by version',
};

export function chartTitle(by: StatsAnswer['by'], granularity: StatsAnswer['granularity']): string {
  return `${WHAT[by]}, ${granularity === 'hour' ? 'last 24 hours by hour' : 'last 30 days by day'}`;
}

/** The chart's text alternative: what a sighted reader takes from the bars, in one or two sentences. */
export function chartSummary(data: ChartData, by: StatsAnswer['by'], granularity: StatsAnswer['granularity']): string {
  const title = chartTitle(by, granularity);
  if (data.total === 0) return `${title}: none in this period.`;
  const parts = data.series.map((name, index) => `${name} ${formatCount(data.rows.reduce((sum, row) => sum + (row.values[index] ?? 0), 0))}`);
  const busiest = data.rows.reduce((best, row) => (row.total > best.total ? row : best));
  return `${title}: ${formatCount(data.total)} in all (${parts.join(', ')}). Busiest ${granularity} ${bucketLabel(busiest.t, granularity)} UTC with ${formatCount(busiest.total)}.`;
}
