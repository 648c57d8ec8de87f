import { createHash, randomBytes } from 'node:crypto';

/**
 * A key's raw value: what the buyer types into the loader. 192 random bits behind a prefix that says what it is
 * (`sdk_`, like tokens' `sdt_`), so a secret scanner or a person recognises one in a paste. Only its SHA-256 is
 * stored; the raw value exists once, in the answer of the dashboard's `keys issue`.
 */
export function newKeyValue(): string {
  return `sdk_${randomBytes(24).toString('base64url')}`;
}

export function hashKeyValue(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * A key's id is the first 80 bits of its value's hash. The check then reaches the key's item in one request
 * (no lookup item, no index read that could lag behind a revoke); the item's full hash is what the check
 * compares, and 80 bits of a SHA-256 tell nothing of a 192-bit value.
 */
export const keyIdOf = (keyHash: string): string => `key_${keyHash.slice(0, 20)}`;
