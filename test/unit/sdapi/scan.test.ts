import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_DISTINCT_MALFORMED, MAX_REPORTED_CHARS, type MarkerScan, markerProblem, WatermarkScanner } from '../../../sdapi/scan';

const bytes = (text: string) => Buffer.from(text, 'latin1');

function scanChunks(chunks: string[]): MarkerScan {
  const scanner = new WatermarkScanner();
  for (const chunk of chunks) scanner.push(bytes(chunk));
  return scanner.finish();
}

const scanText = (text: string) => scanChunks([text]);

/** The rule, stated plainly over the whole text at once: every `WM_` and the letters and digits after it. */
function referenceScan(text: string): { watermarks: Map<string, number>; malformed: Map<string, number> } {
  const watermarks = new Map<string, number>();
  const malformed = new Map<string, number>();
  for (let at = text.indexOf('WM_'); at !== -1; at = text.indexOf('WM_', at + 1)) {
    const run = /^[A-Za-z0-9]*/.exec(text.slice(at + 3))![0];
    if (/^[0-9a-f]{16}$/.test(run)) watermarks.set(run, (watermarks.get(run) ?? 0) + 1);
    else {
      const marker = `WM_${run.slice(0, MAX_REPORTED_CHARS)}${run.length > MAX_REPORTED_CHARS ? '…' : ''}`;
      malformed.set(marker, (malformed.get(marker) ?? 0) + 1);
    }
  }
  return { watermarks, malformed };
}

const malformedCounts = (scan: MarkerScan) => new Map(scan.malformed.map((m) => [m.marker, m.occurrences]));

describe('WatermarkScanner', () => {
  it('finds WM_ + 16 lowercase hex markers and counts each watermark', () => {
    const scan = scanText('local a = "WM_3f9a1c7e5b2d8046" -- WM_b41e07d93ac2f865\nprint("WM_3f9a1c7e5b2d8046")');
    expect([...scan.watermarks]).toEqual([
      ['3f9a1c7e5b2d8046', 2],
      ['b41e07d93ac2f865', 1],
    ]);
    expect(scan.malformed).toEqual([]);
  });

  it('reports uppercase, short, long and non-hex markers without turning them into watermarks', () => {
    const scan = scanText('WM_3F9A1C7E5B2D8046 WM_3f9a1c7e WM_3f9a1c7e5b2d80461 WM_3f9a1c7e5b2d804g WM_ WM_3F9a1c7e5b2d8046');
    expect(scan.watermarks.size).toBe(0);
    expect(scan.malformed).toEqual([
      { marker: 'WM_3F9A1C7E5B2D8046', occurrences: 1, problem: 'uppercase hex; a watermark is lowercase' },
      { marker: 'WM_3f9a1c7e', occurrences: 1, problem: '8 hex characters, a watermark has 16' },
      { marker: 'WM_3f9a1c7e5b2d80461', occurrences: 1, problem: '17 hex characters, a watermark has 16' },
      { marker: 'WM_3f9a1c7e5b2d804g', occurrences: 1, problem: '16 characters, not all hex' },
      { marker: 'WM_', occurrences: 1, problem: 'nothing after WM_' },
      { marker: 'WM_3F9a1c7e5b2d8046', occurrences: 1, problem: 'uppercase hex; a watermark is lowercase' },
    ]);
  });

  it('does not take a lowercase wm_ prefix or a watermark without its prefix', () => {
    const scan = scanText('wm_3f9a1c7e5b2d8046 3f9a1c7e5b2d8046 W M_3f9a1c7e5b2d8046');
    expect(scan.watermarks.size).toBe(0);
    expect(scan.malformed).toEqual([]);
  });

  it('ends a marker at the first character that is not a letter or digit, and sees a WM_ right after another', () => {
    const scan = scanText('xWM_3f9a1c7e5b2d8046_v2 WM_WM_b41e07d93ac2f865');
    expect([...scan.watermarks.keys()]).toEqual(['3f9a1c7e5b2d8046', 'b41e07d93ac2f865']);
    expect(malformedCounts(scan)).toEqual(new Map([['WM_WM', 1]]));
  });

  it('finds a marker split across chunks at every possible point', () => {
    const text = '--[[ header ]] local k="WM_3f9a1c7e5b2d8046" ';
    for (let first = 0; first <= text.length; first++) {
      for (let second = first; second <= text.length; second += 3) {
        const scan = scanChunks([text.slice(0, first), text.slice(first, second), text.slice(second)]);
        expect([...scan.watermarks], `split at ${first}/${second}`).toEqual([['3f9a1c7e5b2d8046', 1]]);
      }
    }
  });

  it('finds a marker that ends exactly at the end of the dump', () => {
    expect([...scanChunks(['WM_3f9a1c7e', '5b2d8046']).watermarks]).toEqual([['3f9a1c7e5b2d8046', 1]]);
    expect(scanChunks(['WM_3f9a1c7e']).malformed).toEqual([{ marker: 'WM_3f9a1c7e', occurrences: 1, problem: '8 hex characters, a watermark has 16' }]);
  });

  it('agrees with the plain whole-text rule however the dump is cut into chunks', () => {
    const piece = fc.constantFrom(
      'WM_',
      'W',
      'M',
      '_',
      'WM',
      'M_',
      '3f9a1c7e5b2d8046',
      'b41e07d93ac2f865',
      'ABCDEF',
      'a',
      '0',
      ' ',
      '"',
      '\n',
      'WM_3f9a1c7e5b2d8046',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 }), (pieces, cuts) => {
        const text = pieces.join('');
        const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((start, i) => text.slice(start, [...points, text.length][i]));
        const scan = scanChunks(chunks);
        const expected = referenceScan(text);
        expect(scan.watermarks).toEqual(expected.watermarks);
        expect(malformedCounts(scan)).toEqual(expected.malformed);
        expect(scan.bytes).toBe(text.length);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps only the start of a very long run after WM_', () => {
    const scan = scanChunks(['WM_', 'A'.repeat(1_000_000), 'B'.repeat(1_000_000), ' WM_', '0'.repeat(100), 'z end']);
    expect(scan.malformed).toEqual([
      { marker: `WM_${'A'.repeat(MAX_REPORTED_CHARS)}…`, occurrences: 1, problem: '2000000 hex characters, a watermark has 16' },
      { marker: `WM_${'0'.repeat(MAX_REPORTED_CHARS)}…`, occurrences: 1, problem: '101 characters, not all hex' },
    ]);
  });

  it('lists at most MAX_DISTINCT_MALFORMED distinct malformed markers and counts the rest', () => {
    const text = Array.from({ length: MAX_DISTINCT_MALFORMED + 25 }, (_, i) => `WM_${i.toString(16)} `).join('');
    const scan = scanText(text);
    expect(scan.malformed).toHaveLength(MAX_DISTINCT_MALFORMED);
    expect(scan.malformedNotListed).toBe(25);
  });
});

describe('markerProblem', () => {
  it('names the problem without proposing a corrected watermark', () => {
    expect(markerProblem(16, true)).toBe('uppercase hex; a watermark is lowercase');
    expect(markerProblem(3, true)).toBe('3 hex characters, a watermark has 16');
    expect(markerProblem(1, false)).toBe('1 character, not all hex');
  });
});
