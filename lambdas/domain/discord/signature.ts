import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { ed25519PublicKeyProblem } from './ed25519-key';

/**
 * Discord's request signature (DESIGN.md, "Buyers help themselves in Discord"): Ed25519 over the
 * `X-Signature-Timestamp` header followed by the raw body, under the application's public key, checked with Node's
 * own crypto before the body is parsed or anything is read of it.
 */

/** A signed request older or newer than this is refused: a captured request cannot be replayed later. */
export const SIGNATURE_MAX_SKEW_SECONDS = 300;

/** An Ed25519 public key as SubjectPublicKeyInfo DER: this fixed prefix (the algorithm, id-Ed25519), then the 32 key bytes. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The form of Discord's application public key, as the developer portal shows it. */
export const DISCORD_PUBLIC_KEY_FORM = /^[0-9a-f]{64}$/;
const SIGNATURE_FORM = /^[0-9a-f]{128}$/;
const TIMESTAMP_FORM = /^[0-9]{1,12}$/;

/**
 * Keys made once per container: a few linked projects' keys, each parsed and checked on its first request. A key
 * of small order or outside the prime-order subgroup (ed25519-key.ts) is kept as null: no signature verifies under
 * it, so a weak key linked before the link refused them opens nothing either.
 */
const publicKeys = new Map<string, KeyObject | null>();
const PUBLIC_KEYS_KEPT = 1000;

function publicKeyOf(hex: string): KeyObject | null {
  let key = publicKeys.get(hex);
  if (key === undefined) {
    const bytes = Buffer.from(hex, 'hex');
    key = ed25519PublicKeyProblem(bytes) ? null : createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, bytes]), format: 'der', type: 'spki' });
    if (publicKeys.size >= PUBLIC_KEYS_KEPT) publicKeys.clear();
    publicKeys.set(hex, key);
  }
  return key;
}

export interface SignedRequest {
  /** `X-Signature-Ed25519`, hex. */
  signature: string | undefined;
  /** `X-Signature-Timestamp`, Unix seconds. */
  timestamp: string | undefined;
  /** The body exactly as it arrived. */
  body: Buffer;
}

/**
 * What is wrong with the signature headers before any key is needed, or undefined: missing, malformed, or a
 * timestamp more than SIGNATURE_MAX_SKEW_SECONDS from `now`.
 */
export function signatureHeadersProblem(request: Pick<SignedRequest, 'signature' | 'timestamp'>, now: number): string | undefined {
  if (request.signature === undefined || request.timestamp === undefined) return 'X-Signature-Ed25519 and X-Signature-Timestamp are required';
  if (!SIGNATURE_FORM.test(request.signature.toLowerCase())) return 'X-Signature-Ed25519 must be 128 hex characters';
  if (!TIMESTAMP_FORM.test(request.timestamp)) return 'X-Signature-Timestamp must be Unix seconds';
  if (Math.abs(Number(request.timestamp) - now) > SIGNATURE_MAX_SKEW_SECONDS)
    return `X-Signature-Timestamp is more than ${SIGNATURE_MAX_SKEW_SECONDS} seconds from now`;
  return undefined;
}

/** Whether the request is signed by `publicKeyHex`; headers of the wrong form (see signatureHeadersProblem) are not. */
export function isSignedBy(publicKeyHex: string, request: SignedRequest): boolean {
  const { signature, timestamp } = request;
  if (signature === undefined || timestamp === undefined || !SIGNATURE_FORM.test(signature.toLowerCase()) || !DISCORD_PUBLIC_KEY_FORM.test(publicKeyHex))
    return false;
  const key = publicKeyOf(publicKeyHex);
  return key !== null && verify(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), request.body]), key, Buffer.from(signature, 'hex'));
}
