import { describe, expect, it } from 'vitest';
import { parseTerms } from '#domain/shops/terms';

describe('TERMS grammar', () => {
  it('reads a duration and the optional machines, uses and keys per unit', () => {
    expect(parseTerms('30d')).toEqual({ duration: 30 * 86_400, maxFingerprints: null, maxUses: null, keysPerUnit: 1 });
    expect(parseTerms('lifetime,machines=1,uses=50,keys=3')).toEqual({ duration: 'lifetime', maxFingerprints: 1, maxUses: 50, keysPerUnit: 3 });
    expect(parseTerms('3600,keys=2')).toEqual({ duration: 3600, maxFingerprints: null, maxUses: null, keysPerUnit: 2 });
  });

  it('names what is wrong', () => {
    expect(parseTerms('2w')).toMatch(/"2w" is no duration/);
    expect(parseTerms('59')).toMatch(/no duration/);
    expect(parseTerms('30d,machines=11')).toBe('machines must be from 1 to 10');
    expect(parseTerms('30d,keys=0')).toBe('keys must be from 1 to 100');
    expect(parseTerms('30d,colour=red')).toMatch(/"colour=red" is no option/);
    expect(parseTerms('30d,uses=1,uses=2')).toBe('uses is given twice');
  });
});
