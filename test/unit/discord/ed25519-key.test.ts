import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519PublicKeyProblem } from '#domain/discord/ed25519-key';

/**
 * Which 32 bytes the Discord link takes as an application's public key (DESIGN.md, "Limits that protect every
 * tenant", "Discord link"): RFC 8032's keys and keys Node makes pass; the points of small order, their
 * non-canonical spellings, points outside the prime-order subgroup and bytes of no point are refused.
 */

const problem = (hex: string) => ed25519PublicKeyProblem(Buffer.from(hex, 'hex'));
const FF30 = 'ff'.repeat(30);

/** RFC 8032, 7.1: the public keys of TEST 1, 2, 3, 1024 and SHA(abc). */
const RFC8032_PUBLIC_KEYS = [
  'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
  '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
  'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
  '278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e',
  'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
];

/**
 * The eight points of order dividing 8, as libsodium's `has_small_order` list spells them: each y with both signs
 * of x (x = 0 for y = 1 and y = p - 1, so their sign-bit spellings are non-canonical).
 */
const SMALL_ORDER = [
  ['identity (order 1)', `01${'00'.repeat(31)}`],
  ['identity, x sign set', `01${'00'.repeat(30)}80`],
  ['order 2 (y = p - 1)', `ec${FF30}7f`],
  ['order 2, x sign set', `ec${FF30}ff`],
  ['order 4 (y = 0)', '00'.repeat(32)],
  ['order 4 (y = 0, other x)', `${'00'.repeat(31)}80`],
  ['order 8', '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05'],
  ['order 8, other x', '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85'],
  ['order 8, second y', 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'],
  ['order 8, second y, other x', 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa'],
] as const;

/** y ≥ p: the spellings of y = 0 and y = 1 past p, and the largest 255-bit y, each with either sign bit. */
const NON_CANONICAL = [
  ['y = p (0)', `ed${FF30}7f`],
  ['y = p + 1 (1, the identity)', `ee${FF30}7f`],
  ['y = p, x sign set', `ed${FF30}ff`],
  ['y = 2^255 - 1', `ff${FF30}7f`],
  ['y = 2^255 - 1, x sign set', 'ff'.repeat(32)],
] as const;

describe('an Ed25519 public key of full order', () => {
  it('takes the public keys of RFC 8032 test vectors', () => {
    for (const key of RFC8032_PUBLIC_KEYS) expect(problem(key), key).toBeUndefined();
  });

  it('takes keys node:crypto generates, as Discord makes its applications keys', () => {
    for (let run = 0; run < 20; run += 1) {
      const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
      expect(ed25519PublicKeyProblem(raw), raw.toString('hex')).toBeUndefined();
    }
  });

  it.each(SMALL_ORDER)('refuses the small-order point %s', (_name, key) => {
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(problem(key)).toMatch(/^is (a point of small order|not the canonical encoding)/);
  });

  it('names small order for the canonical encodings of the small-order points', () => {
    for (const [name, key] of SMALL_ORDER.filter(([name]) => !name.includes('x sign set'))) expect(problem(key), name).toMatch(/small order/);
  });

  it.each(NON_CANONICAL)('refuses the non-canonical encoding %s', (_name, key) => {
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(problem(key)).toBe('is not the canonical encoding of a point of Ed25519');
  });

  it('refuses a point of mixed order: an RFC 8032 key plus a point of order 8', () => {
    // Derived outside this code: RFC 8032 TEST 1's key + the order-8 point 26e8…fc05, added and encoded per RFC 8032.
    expect(problem('3b5b475c4b82dd1572799fc546f4c6c03e478c6654aa4c7f945b347ea32af60d')).toMatch(/not in the prime-order subgroup/);
  });

  it('refuses 32 bytes that decode to no point, and a length other than 32', () => {
    expect(problem('ab'.repeat(32))).toBe('is not the canonical encoding of a point of Ed25519');
    expect(problem('d75a98')).toBe('must be 32 bytes');
  });
});
