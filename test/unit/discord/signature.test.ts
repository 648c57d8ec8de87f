import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSignedBy, SIGNATURE_MAX_SKEW_SECONDS, signatureHeadersProblem } from '#domain/discord/signature';
import { memoryDiscordKeyPair } from '#local/discord-key';

/** Discord's request signature, checked with node:crypto against a key pair made here (DESIGN.md, "Buyers help themselves in Discord"). */

const NOW = 1_800_000_000;
const application = memoryDiscordKeyPair();
const body = '{"type":1}';
const timestamp = String(NOW);
const signed = (key = application, at = timestamp, text = body) => ({ signature: key.signRequest(at, text), timestamp: at, body: Buffer.from(text) });

describe('the Ed25519 signature over the timestamp and the raw body', () => {
  it('accepts a request signed by the linked public key', () => {
    expect(isSignedBy(application.publicKeyHex, signed())).toBe(true);
  });

  it('accepts the signature in uppercase hex too', () => {
    const request = signed();
    expect(isSignedBy(application.publicKeyHex, { ...request, signature: request.signature.toUpperCase() })).toBe(true);
  });

  it('refuses a tampered body', () => {
    expect(isSignedBy(application.publicKeyHex, { ...signed(), body: Buffer.from('{"type":2}') })).toBe(false);
  });

  it('refuses a tampered timestamp: the signature covers it', () => {
    expect(isSignedBy(application.publicKeyHex, { ...signed(), timestamp: String(NOW + 1) })).toBe(false);
  });

  it("refuses a signature made with another application's key", () => {
    expect(isSignedBy(application.publicKeyHex, signed(memoryDiscordKeyPair()))).toBe(false);
  });

  it('refuses signatures of the wrong form and keys that are no curve point, without throwing', () => {
    expect(isSignedBy(application.publicKeyHex, { ...signed(), signature: 'zz'.repeat(64) })).toBe(false);
    expect(isSignedBy(application.publicKeyHex, { ...signed(), signature: undefined })).toBe(false);
    expect(isSignedBy('ff'.repeat(32), signed())).toBe(false);
    expect(isSignedBy('not-a-key', signed())).toBe(false);
  });
});

describe('a public key of small order, linked before the link refused them', () => {
  const IDENTITY = `01${'00'.repeat(31)}`;
  // R = the identity, S = 0: [S]B = R + [k]A holds for every message k when A is the identity.
  const CONSTANT_SIGNATURE = `01${'00'.repeat(63)}`;
  const forged = (text: string) => ({ signature: CONSTANT_SIGNATURE, timestamp, body: Buffer.from(text) });

  it("is a backdoor to node:crypto's verify on its own: one constant signature verifies every message", () => {
    const key = createPublicKey({ key: Buffer.from(`302a300506032b6570032100${IDENTITY}`, 'hex'), format: 'der', type: 'spki' });
    for (const text of [body, '{"type":2,"data":{"name":"resethwid"}}'])
      expect(verify(null, Buffer.from(timestamp + text), key, Buffer.from(CONSTANT_SIGNATURE, 'hex'))).toBe(true);
  });

  it('verifies nothing here: no signature is valid under it', () => {
    expect(isSignedBy(IDENTITY, forged(body))).toBe(false);
    expect(isSignedBy(IDENTITY, forged('{"type":2,"data":{"name":"resethwid"}}'))).toBe(false);
    expect(isSignedBy('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', forged(body))).toBe(false);
  });
});

describe('the headers, before any key is read', () => {
  it('passes a well-formed signature with a timestamp within 300 seconds of now, either way', () => {
    expect(signatureHeadersProblem(signed(), NOW)).toBeUndefined();
    expect(signatureHeadersProblem(signed(application, String(NOW - SIGNATURE_MAX_SKEW_SECONDS)), NOW)).toBeUndefined();
    expect(signatureHeadersProblem(signed(application, String(NOW + SIGNATURE_MAX_SKEW_SECONDS)), NOW)).toBeUndefined();
  });

  it('refuses a stale timestamp and a future one', () => {
    expect(signatureHeadersProblem(signed(application, String(NOW - SIGNATURE_MAX_SKEW_SECONDS - 1)), NOW)).toMatch(/more than 300 seconds/);
    expect(signatureHeadersProblem(signed(application, String(NOW + SIGNATURE_MAX_SKEW_SECONDS + 1)), NOW)).toMatch(/more than 300 seconds/);
  });

  it('refuses missing and malformed headers', () => {
    expect(signatureHeadersProblem({ signature: undefined, timestamp }, NOW)).toMatch(/required/);
    expect(signatureHeadersProblem({ signature: signed().signature, timestamp: undefined }, NOW)).toMatch(/required/);
    expect(signatureHeadersProblem({ signature: 'abc', timestamp }, NOW)).toMatch(/128 hex/);
    expect(signatureHeadersProblem({ signature: signed().signature, timestamp: '1.8e9' }, NOW)).toMatch(/Unix seconds/);
  });
});
