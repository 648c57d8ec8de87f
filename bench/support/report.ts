import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A bound a figure must meet: `value <op> limit`. */
export interface Target {
  op: '<=' | '<' | '>=';
  limit: number;
}

/** One line of the results table: a figure, its unit and, when it has one, its target. */
export interface Row {
  benchmark: string;
  metric: string;
  value: number;
  unit: string;
  target?: Target;
  /** Absent for figures that have no target (context, comparisons). */
  pass?: boolean;
  note?: string;
}

export interface BenchResult {
  rows: Row[];
  /** Raw samples and settings, kept in the JSON so a figure can be checked later. */
  details: Record<string, unknown>;
}

export function row(benchmark: string, metric: string, value: number, unit: string, extra: { target?: Target; note?: string } = {}): Row {
  const pass = extra.target ? meets(value, extra.target) : undefined;
  return { benchmark, metric, value, unit, ...extra, ...(pass === undefined ? {} : { pass }) };
}

function meets(value: number, target: Target): boolean {
  if (!Number.isFinite(value)) return false;
  if (target.op === '<=') return value <= target.limit;
  if (target.op === '<') return value < target.limit;
  return value >= target.limit;
}

const formatNumber = (value: number) => (Number.isInteger(value) ? value.toLocaleString('en-US') : value.toLocaleString('en-US', { maximumFractionDigits: 2 }));

/** The results as a plain-text table, one row per figure. */
export function formatTable(rows: readonly Row[]): string {
  const header = ['Benchmark', 'Metric', 'Value', 'Target', 'Result'];
  const lines = rows.map((r) => [
    r.benchmark,
    r.metric,
    `${formatNumber(r.value)} ${r.unit}`.trim(),
    r.target ? `${r.target.op} ${formatNumber(r.target.limit)} ${r.unit}`.trim() : '',
    r.pass === undefined ? '' : r.pass ? 'pass' : 'MISS',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) =>
    cells
      .map((c, i) => (i === 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join(' | ')
      .trimEnd();
  const notes = rows.filter((r) => r.note).map((r) => `  ${r.benchmark} / ${r.metric}: ${r.note}`);
  return [format(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...lines.map(format), ...(notes.length ? ['', 'Notes:', ...notes] : [])].join('\n');
}

export async function writeJson(path: string, data: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  // Written whole then renamed, so an interrupted run never leaves half a file behind.
  const tmp = `${path}.tmp`;
  // Samples in microseconds say nothing more than in tenths of a millisecond, and triple the file.
  const rounded = (_key: string, value: unknown) => (typeof value === 'number' && !Number.isInteger(value) ? Number(value.toFixed(2)) : value);
  await writeFile(tmp, `${JSON.stringify(data, rounded, 2)}\n`);
  await rename(tmp, path);
}
