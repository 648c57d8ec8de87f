import { describe, expect, it } from 'vitest';
import { dateTime, kilobytes, maskWebhookSecret, STATS_NAME_COLUMNS, statsTable, table } from '../../../sdapi/format';

describe('format', () => {
  it('aligns columns on the widest cell without trailing spaces', () => {
    expect(
      table(
        ['ID', 'NAME'],
        [
          ['a', 'x'],
          ['long-id', ''],
        ],
      ),
    ).toBe('ID       NAME\na        x\nlong-id\n');
  });

  it('shows Unix seconds as UTC minutes and sizes as KB with one decimal', () => {
    expect(dateTime(1_763_788_800)).toBe('2025-11-22 05:20Z');
    expect(kilobytes(48_213)).toBe('47.1 KB');
  });

  it('masks the secret part of a Discord webhook URL and leaves other URLs alone', () => {
    expect(maskWebhookSecret('https://discord.com/api/webhooks/1311223344556677889/Zx9-token')).toBe(
      'https://discord.com/api/webhooks/1311223344556677889/****',
    );
    expect(maskWebhookSecret('https://example.test/hook')).toBe('https://example.test/hook');
  });
});

describe('statsTable', () => {
  const HOUR = 1_700_000_000 - (1_700_000_000 % 3600);

  it('shows a row a bucket with every result as a column, and what the window counted', () => {
    const text = statsTable({
      granularity: 'hour',
      by: 'result',
      from: HOUR,
      to: HOUR + 7200,
      buckets: [
        { t: HOUR, total: 4, counts: { ok: 3, revoked: 1, expired: 0, hwid_locked: 0, over_limit: 0 } },
        { t: HOUR + 3600, total: 0, counts: { ok: 0, revoked: 0, expired: 0, hwid_locked: 0, over_limit: 0 } },
      ],
    });
    expect(text.split('\n')).toEqual([
      'HOUR (UTC)         TOTAL  ok  revoked  expired  hwid_locked  over_limit',
      '2023-11-14 22:00Z  4      3   1        0        0            0',
      '2023-11-14 23:00Z  0      0   0        0        0            0',
      '4 checks by result, 2023-11-14 22:00Z to 2023-11-15 00:00Z.',
      '',
    ]);
  });

  it(`keeps the window's largest names as columns (${STATS_NAME_COLUMNS} at most) and adds the rest to (other); a name a terminal would act on shows as U+FFFD`, () => {
    const counts = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [i === 0 ? 'Evil\u202Eexe.txt' : `Exec ${i}`, 10 - i]));
    const text = statsTable({ granularity: 'day', by: 'executor', from: HOUR, to: HOUR + 60, buckets: [{ t: HOUR - 79_200, total: 52, counts }] });
    const [header, row] = text.split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['DAY (UTC)', 'TOTAL', 'Evil\uFFFDexe.txt', 'Exec 1', 'Exec 2', 'Exec 3', 'Exec 4', '(other)']);
    // 10 + 9 + 8 + 7 + 6 shown; Exec 5, 6 and 7 (5 + 4 + 3) in (other).
    expect(row?.split(/\s{2,}/)).toEqual(['2023-11-14', '52', '10', '9', '8', '7', '6', '12']);
    expect(text).not.toContain('\u202E');
  });
});
