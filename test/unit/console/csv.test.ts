import { describe, expect, it } from 'vitest';
import { csvField, issuedKeysCsv, issuedKeysText } from '../../../console/src/logic/csv';

const KEYS = [
  { id: 'key_1', key: 'sdk_aaa', watermark: '0badc0ffee15dead', expires_at: 1_800_000_000 },
  { id: 'key_2', key: 'sdk_bbb', watermark: '0badc0ffee15dead', expires_at: 1_800_000_000 },
];

describe('console CSV of issued keys', () => {
  it('writes a header and one line per key, with CRLF line ends', () => {
    expect(issuedKeysCsv(KEYS)).toBe(
      'id,key,watermark,expires_at\r\nkey_1,sdk_aaa,0badc0ffee15dead,1800000000\r\nkey_2,sdk_bbb,0badc0ffee15dead,1800000000\r\n',
    );
  });

  it('quotes fields with commas, quotes or line breaks, doubling the quotes', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
  });

  it('keeps a spreadsheet from running a field as a formula', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('@a')).toBe("'@a");
  });

  it('copies the raw keys one a line', () => {
    expect(issuedKeysText(KEYS)).toBe('sdk_aaa\nsdk_bbb');
  });
});
