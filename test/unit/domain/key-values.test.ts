import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashKeyValue, keyIdOf, newKeyValue } from '#domain/key-values';

describe('raw key values (issue 13: shown once, stored as SHA-256)', () => {
  it('carry the recognisable sdk_ prefix and 192 random bits in base64url', () => {
    const value = newKeyValue();
    expect(value).toMatch(/^sdk_[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(value.slice('sdk_'.length), 'base64url')).toHaveLength(24);
  });

  it('never repeat: 10,000 values are 10,000 different values', () => {
    const values = new Set(Array.from({ length: 10_000 }, newKeyValue));
    expect(values.size).toBe(10_000);
  });

  it('vary in every random position, so none of the 192 bits is fixed', () => {
    const values = Array.from({ length: 2_000 }, () => Buffer.from(newKeyValue().slice(4), 'base64url'));
    const bitsSeenBoth = Array.from({ length: 192 }, (_, bit) => {
      const ones = values.filter((bytes) => ((bytes[bit >> 3] ?? 0) >> (7 - (bit & 7))) & 1).length;
      return ones > 0 && ones < values.length;
    });
    expect(bitsSeenBoth.every(Boolean)).toBe(true);
  });

  it('are stored as the lowercase hex SHA-256 of the value as typed (UTF-8)', () => {
    expect(hashKeyValue('sdk_example')).toBe(createHash('sha256').update('sdk_example', 'utf8').digest('hex'));
    expect(hashKeyValue('sdk_ünïcode')).toBe(createHash('sha256').update(Buffer.from('sdk_ünïcode', 'utf8')).digest('hex'));
    expect(hashKeyValue('sdk_example')).toMatch(/^[0-9a-f]{64}$/);
  });

  it("name their key by the first 80 bits of the hash, so a check reaches the key's item with the value alone", () => {
    const hash = hashKeyValue('sdk_example');
    expect(keyIdOf(hash)).toBe(`key_${hash.slice(0, 20)}`);
    expect(keyIdOf(hash)).toMatch(/^key_[0-9a-f]{20}$/);
  });
});
