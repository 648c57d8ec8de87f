import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * A key's raw value: what the buyer types into the loader. 192 random bits behind a prefix that says what it is
 * (`sdk_`, like tokens' `sdt_`), so a secret scanner or a person recognises one in a paste. Only its SHA-256 is
 * stored; the raw value exists once, in the answer of the dashboard's `keys issue`.
 */
export function newKeyValue(): string {
  return `sdk_${randomBytes(24).toString('base64url')}`;
}

/**
 * The raw value of the `index`-th key of a shop's order: the first 192 bits of HMAC-SHA256 under the stack's key
 * secret, over the project, the order id and the index. A repeated order derives the same values again, so none
 * is stored; without the secret, the project, order id and index tell nothing of a value (docs/selling-keys.md).
 */
export function orderKeyValue(secret: Uint8Array, order: OrderKeyRef, index: number): string {
  return `sdk_${orderHmac(secret, 'key', order, index).subarray(0, 24).toString('base64url')}`;
}

/** A fresh watermark of an order's key, derived like its value (another label), so a repeat answers the same one. */
export function orderWatermark(secret: Uint8Array, order: OrderKeyRef, index: number): string {
  return orderHmac(secret, 'watermark', order, index).subarray(0, 8).toString('hex');
}

export interface OrderKeyRef {
  projectId: string;
  orderId: string;
}

/** Each part length-prefixed, so no choice of ids can make two orders' inputs the same bytes. */
function orderHmac(secret: Uint8Array, label: 'key' | 'watermark', order: OrderKeyRef, index: number): Buffer {
  const parts = [label, order.projectId, order.orderId, String(index)];
  return createHmac('sha256', secret)
    .update(parts.map((part) => `${Buffer.byteLength(part)}:${part}`).join('|'))
    .digest();
}

/** The form of every key value this service makes: `sdk_` and 24 random bytes in base64url (32 characters). */
const KEY_VALUE_FORM = /^sdk_[A-Za-z0-9_-]{32}$/;

/** Whether `value` could be a key of this service; one that cannot is KEY_INVALID without looking it up. */
export const hasKeyValueForm = (value: string): boolean => KEY_VALUE_FORM.test(value);

export function hashKeyValue(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * A key's id is the first 80 bits of its value's hash. The check then reaches the key's item in one request
 * (no lookup item, no index read that could lag behind a revoke); the item's full hash is what the check
 * compares, and 80 bits of a SHA-256 tell nothing of a 192-bit value.
 */
export const keyIdOf = (keyHash: string): string => `key_${keyHash.slice(0, 20)}`;
