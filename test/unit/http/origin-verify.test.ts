import { describe, expect, it } from 'vitest';
import { cameThroughFrontDoor, ORIGIN_VERIFY_HEADER, originSecretsOf } from '#http/origin-verify';

/** The front door's proof of origin: one header, the current secret or during a rotation the previous one. */

const CURRENT = 'current-secret-0123456789abcdef';
const PREVIOUS = 'previous-secret-0123456789abcdef';

describe('cameThroughFrontDoor', () => {
  it('accepts the current value, and the previous one while a rotation reaches every edge location', () => {
    const rotating = { current: CURRENT, previous: PREVIOUS };
    expect(cameThroughFrontDoor({ [ORIGIN_VERIFY_HEADER]: CURRENT }, rotating)).toBe(true);
    expect(cameThroughFrontDoor({ [ORIGIN_VERIFY_HEADER]: PREVIOUS }, rotating)).toBe(true);
  });

  it('refuses the previous value once the rotation is done, a guess, a prefix, an extension and no header', () => {
    const settled = { current: CURRENT };
    for (const proof of [PREVIOUS, 'guess', CURRENT.slice(0, -1), `${CURRENT}x`, '']) {
      expect(cameThroughFrontDoor({ [ORIGIN_VERIFY_HEADER]: proof }, settled), proof).toBe(false);
    }
    expect(cameThroughFrontDoor({}, settled)).toBe(false);
    expect(cameThroughFrontDoor({ 'x-origin-verify-other': CURRENT }, settled)).toBe(false);
  });
});

describe('originSecretsOf: the secret as Secrets Manager holds it', () => {
  it('reads {"current"} and {"current", "previous"}', () => {
    expect(originSecretsOf(JSON.stringify({ current: CURRENT }))).toEqual({ current: CURRENT });
    expect(originSecretsOf(JSON.stringify({ current: CURRENT, previous: PREVIOUS }))).toEqual({ current: CURRENT, previous: PREVIOUS });
  });

  it('refuses what would let a short or missing value through, saying what to store', () => {
    expect(() => originSecretsOf(CURRENT)).toThrow('store {"current": "<value>"}');
    expect(() => originSecretsOf('{}')).toThrow('no "current" value');
    expect(() => originSecretsOf(JSON.stringify({ current: 'short' }))).toThrow('at least 16 characters');
    expect(() => originSecretsOf(JSON.stringify({ current: CURRENT, previous: '' }))).toThrow('"previous" value');
    expect(() => originSecretsOf('null')).toThrow('no "current" value');
  });
});
