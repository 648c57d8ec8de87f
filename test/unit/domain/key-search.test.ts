import { describe, expect, it } from 'vitest';
import { classifySearch, keyStatus, MAX_NOTE_WORDS, MAX_WORD_LENGTH, mostSelectiveWord, noteMatches, noteWords } from '#domain/key-search';
import { emailSha256 } from '#domain/shops/receipts';
import { csvField } from '#http/console-routes/keys';

describe('console key search', () => {
  it('reads a key id, a watermark, a Discord id, and anything else as note words', () => {
    expect(classifySearch(' key_0123456789abcdef0123 ')).toEqual({ kind: 'key_id', keyId: 'key_0123456789abcdef0123' });
    expect(classifySearch('0123456789abcdef')).toEqual({ kind: 'watermark', watermark: '0123456789abcdef' });
    expect(classifySearch('123456789012345678')).toEqual({ kind: 'discord_id', discordId: '123456789012345678' });
    expect(classifySearch('Alice, premium!')).toEqual({ kind: 'note', words: ['alice', 'premium'] });
    expect(classifySearch('  ;; ')).toBeUndefined();
    // An email is looked up by its hash, the word a shop order's note carries (trimmed and lower-cased first).
    expect(classifySearch(' Buyer@Example.com ')).toEqual({ kind: 'note', words: [emailSha256('buyer@example.com').slice(0, MAX_WORD_LENGTH)] });
    expect(noteMatches(`shop stripe order pi_1 email ${emailSha256('buyer@example.com')}`, [emailSha256('buyer@example.com').slice(0, MAX_WORD_LENGTH)])).toBe(
      true,
    );
  });

  it('cuts a note into distinct lowercase words of any script, bounded in number and length', () => {
    expect(noteWords('Ünïcode Käufer käufer 名前 <img src=x onerror=alert(1)>')).toEqual([
      'ünïcode',
      'käufer',
      '名前',
      'img',
      'src',
      'x',
      'onerror',
      'alert',
      '1',
    ]);
    const many = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    expect(noteWords(many)).toHaveLength(MAX_NOTE_WORDS);
    expect(noteWords('x'.repeat(100))[0]).toHaveLength(MAX_WORD_LENGTH);
  });

  it('matches a note when every searched word starts one of its words', () => {
    expect(noteMatches('Alice Premium buyer', ['prem', 'ali'])).toBe(true);
    expect(noteMatches('Alice Premium buyer', ['prem', 'bob'])).toBe(false);
    expect(noteMatches(null, ['a'])).toBe(false);
    expect(mostSelectiveWord(['ab', 'premium', 'x'])).toBe('premium');
  });

  it('shows revoked before expired, and expired by the clock', () => {
    expect(keyStatus({ revoked: 1, expires_at: 0 }, 10)).toBe('revoked');
    expect(keyStatus({ revoked: 0, expires_at: 10 }, 10)).toBe('expired');
    expect(keyStatus({ revoked: 0, expires_at: 11 }, 10)).toBe('active');
  });

  it('writes CSV fields quoted when needed and never as a spreadsheet formula', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField(null)).toBe('');
    expect(csvField(42)).toBe('42');
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
  });
});
