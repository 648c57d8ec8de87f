import { UNSAFE_TEXT_CHARACTERS_GLOBAL } from '#schemas/formats';
import type { IssuedKey, Key, KeyDetail, Version, Webhook } from '#schemas/resources';
import type { StatsResponse } from '#schemas/responses';

/** Plain aligned columns: readable in a terminal, and `grep`/`awk` still work on them. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Unix seconds as `2025-11-22 05:20Z`: minutes are enough to read, UTC so everyone sees the same. */
export function dateTime(unixSeconds: number): string {
  return `${new Date(unixSeconds * 1000).toISOString().slice(0, 16).replace('T', ' ')}Z`;
}

/** Sizes as the `version_deployed` notification shows them: kilobytes with one decimal. */
export function kilobytes(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function clip(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

export function keysTable(keys: Key[]): string {
  if (keys.length === 0) return 'No keys.\n';
  return table(
    ['ID', 'WATERMARK', 'TIER', 'STATUS', 'USES', 'ISSUED', 'EXPIRES'],
    keys.map((key) => [
      key.id,
      key.watermark,
      key.tier,
      key.revoked === 1 ? 'revoked' : 'active',
      `${key.current_uses}/${key.max_uses ?? '∞'}`,
      dateTime(key.issued_at),
      dateTime(key.expires_at),
    ]),
  );
}

/** Issued keys with their raw values: the one time they are shown. */
export function issuedKeysTable(keys: IssuedKey[]): string {
  return table(
    ['ID', 'KEY', 'WATERMARK', 'EXPIRES'],
    keys.map((key) => [key.id, key.key, key.watermark, dateTime(key.expires_at)]),
  );
}

/** One key in detail, a field a line, then the machines it is bound to. */
export function keyDetailText(key: KeyDetail): string {
  const lines: [string, string][] = [
    ['ID', key.id],
    ['Status', key.revoked === 1 ? 'revoked' : key.ban !== null ? 'banned' : 'active'],
    ['Watermark', key.watermark],
    ['Tier', key.tier],
    ['Uses', `${key.current_uses}/${key.max_uses ?? '∞'}`],
    ['Issued', dateTime(key.issued_at)],
    ['Expires', dateTime(key.expires_at)],
    ['Last check', key.last_check_at === null ? 'never' : dateTime(key.last_check_at)],
    ['Note', key.note ?? ''],
    ['Discord id', key.discord_id ?? ''],
    ['Machines', key.max_fingerprints === null ? 'not bound' : `${key.fingerprints.length}/${key.max_fingerprints} bound`],
    ['Ban', key.ban === null ? '' : `${key.ban.reason} (${key.ban.until === null ? 'until unbanned' : `until ${dateTime(key.ban.until)}`})`],
  ];
  const width = Math.max(...lines.map(([label]) => label.length));
  const text = lines.map(([label, value]) => `${`${label}:`.padEnd(width + 1)}  ${value}`.trimEnd()).join('\n');
  const machines =
    key.fingerprints.length === 0
      ? ''
      : `\n${table(
          ['FINGERPRINT', 'BOUND'],
          key.fingerprints.map((bound) => [bound.fingerprint, dateTime(bound.bound_at)]),
        )}`;
  return `${text}\n${machines}`;
}

export function versionsTable(versions: Version[], currentVersionId: string | null): string {
  if (versions.length === 0) return 'No versions.\n';
  return table(
    ['', 'ID', 'VERSION', 'UPLOADED', 'SIZE', 'NOTES'],
    versions.map((version) => [
      version.id === currentVersionId ? '*' : '',
      version.id,
      `v${version.version_number}`,
      dateTime(version.uploaded_at),
      kilobytes(version.size_bytes),
      clip(version.notes, 60),
    ]),
  );
}

export function webhooksTable(webhooks: Webhook[]): string {
  if (webhooks.length === 0) return 'No webhooks.\n';
  return table(
    ['ID', 'STATUS', 'EVENTS', 'URL', 'UPDATED'],
    webhooks.map((webhook) => [
      webhook.id,
      webhook.enabled === 1 ? 'enabled' : 'disabled',
      eventList(webhook.events),
      maskWebhookSecret(webhook.url),
      dateTime(webhook.updated_at),
    ]),
  );
}

/** `events` is a JSON array encoded as a string (spec §2.3); shown as a list, or as sent if it is not one. */
function eventList(events: string): string {
  try {
    const parsed: unknown = JSON.parse(events);
    if (Array.isArray(parsed)) return parsed.join(',') || '(none)';
  } catch {
    // Shown as sent below.
  }
  return events;
}

/**
 * A Discord webhook URL ends in the secret that lets anyone post to the channel; a table on a screen
 * does not need it (`--json` gives the API's answer unchanged).
 */
export function maskWebhookSecret(url: string): string {
  return url.replace(/(\/webhooks\/[^/]+\/)[^/?#]+/, '$1****');
}

/** Name columns a stats table shows at most; the window's smaller names are added to the last column. */
export const STATS_NAME_COLUMNS = 6;
const OTHER_COLUMN = '(other)';

/**
 * The stats answer as a table: a row a bucket (UTC), TOTAL, then a column a name. By result every result has its
 * column; by executor or version the window's largest names do and the rest are summed under (other). Names are
 * buyers' text: anything a terminal would act on is shown as U+FFFD.
 */
export function statsTable(stats: StatsResponse): string {
  const totals = new Map<string, number>();
  for (const bucket of stats.buckets) for (const [name, n] of Object.entries(bucket.counts)) totals.set(name, (totals.get(name) ?? 0) + n);
  const ranked = [...totals].sort(([a, m], [b, n]) => n - m || a.localeCompare(b)).map(([name]) => name);
  const names = stats.by === 'result' ? [...totals.keys()] : ranked.filter((name) => name !== OTHER_COLUMN);
  const shown = stats.by === 'result' || names.length <= STATS_NAME_COLUMNS ? names : names.slice(0, STATS_NAME_COLUMNS - 1);
  const folded = stats.by !== 'result' && (shown.length < names.length || totals.has(OTHER_COLUMN));
  const columns = [...shown, ...(folded ? [OTHER_COLUMN] : [])];
  const when = (t: number) => (stats.granularity === 'day' ? dateTime(t).slice(0, 10) : dateTime(t));
  const rows = stats.buckets.map((bucket) => {
    const own = shown.map((name) => bucket.counts[name] ?? 0);
    const rest = bucket.total - own.reduce((sum, n) => sum + n, 0);
    return [when(bucket.t), String(bucket.total), ...own.map(String), ...(folded ? [String(rest)] : [])];
  });
  const headers = [
    stats.granularity === 'day' ? 'DAY (UTC)' : 'HOUR (UTC)',
    'TOTAL',
    ...columns.map((name) => name.replace(UNSAFE_TEXT_CHARACTERS_GLOBAL, '\uFFFD')),
  ];
  const total = stats.buckets.reduce((sum, bucket) => sum + bucket.total, 0);
  const what = stats.by === 'result' ? plural(total, 'check') : plural(total, 'execution');
  return `${table(headers, rows)}${what} by ${stats.by}, ${dateTime(stats.from)} to ${dateTime(stats.to)}.\n`;
}
