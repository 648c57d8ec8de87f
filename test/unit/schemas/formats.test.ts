import { describe, expect, it } from 'vitest';
import { WATERMARK_PATTERN, watermarkProblem } from '#schemas/formats';

describe('watermark rule (spec §4.3, §8: exactly 16 lowercase hex characters)', () => {
  it.each(['0123456789abcdef', 'ffffffffffffffff', '0000000000000000'])('accepts %s', (value) => {
    expect(watermarkProblem(value)).toBeUndefined();
    expect(WATERMARK_PATTERN.test(value)).toBe(true);
  });

  it('advises dropping the WM_ prefix copied from a leaked dump, and names the value to send', () => {
    expect(watermarkProblem('WM_0123456789abcdef')).toBe(
      'watermark must be the 16 hex characters after the WM_ prefix: drop the prefix and send "0123456789abcdef"',
    );
  });

  it('advises dropping the prefix whatever its case, and lowercases the hex it suggests', () => {
    expect(watermarkProblem('wm_0123456789ABCDEF')).toContain('send "0123456789abcdef"');
    expect(watermarkProblem('WM_0123456789ABCDEF')).toContain('drop the prefix');
  });

  it('advises lowercase for uppercase hex of the right length', () => {
    expect(watermarkProblem('0123456789ABCDEF')).toBe('watermark must be lowercase hex: send "0123456789abcdef"');
  });

  it.each([
    ['', 'got 0 characters'],
    ['a', 'got 1 character'],
    ['0123456789abcde', 'got 15 characters'],
    ['0123456789abcdef0', 'got 17 characters'],
  ])('reports the length of a value of the wrong length (%j)', (value, expected) => {
    const problem = watermarkProblem(value);
    expect(problem).toMatch(/^watermark must be exactly 16 lowercase hex characters/);
    expect(problem).toContain(expected);
    expect(problem).not.toContain('not hex');
  });

  it('says when a 16-character value holds characters that are not hex', () => {
    expect(watermarkProblem('0123456789abcdeg')).toBe(
      'watermark must be exactly 16 lowercase hex characters (0-9, a-f); got 16 characters including characters that are not hex',
    );
  });

  it('refuses the WM_ prefix followed by something that is not a watermark, without suggesting a value', () => {
    const problem = watermarkProblem('WM_0123');
    expect(problem).toMatch(/^watermark must be exactly 16 lowercase hex characters/);
    expect(problem).not.toContain('send');
  });

  it.each([' 0123456789abcdef', '0123456789abcdef\n', '0123456789abcdef '])('refuses surrounding whitespace (%j)', (value) => {
    expect(watermarkProblem(value)).toBeDefined();
  });
});
