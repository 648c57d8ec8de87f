import { describe, expect, it } from 'vitest';
import { dateTime, kilobytes, maskWebhookSecret, table } from '../../../sdapi/format';

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
