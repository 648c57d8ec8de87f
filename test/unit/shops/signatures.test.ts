import { describe, expect, it } from 'vitest';
import { isSignedByShop, SHOP_SIGNATURE_TOLERANCE_SECONDS, shopSignatureHeaders } from '#domain/shops/signatures';

/**
 * Each shop's signature as its page documents it (lambdas/domain/shops/signatures.ts cites them). None of the four
 * pages publishes a whole (secret, body, signature) example, so the vectors below were computed apart from this code,
 * with Python's `hmac` module, from the documented recipe: SellAuth and Sell.app HMAC-SHA256 of the raw body, Sellix
 * HMAC-SHA512 of it, Stripe HMAC-SHA256 of `<t>.<raw body>`.
 */
const SECRET = 'whsec_test_secret_value';
const BODY = Buffer.from('{"event":"INVOICE.ITEM.DELIVER-DYNAMIC","id":10042,"email":"john.doe@example.com","item":{"id":1,"product_id":77,"quantity":2}}');
const SHA256 = '3d8d8b3c8fa9239c78b270b0e9522b25c8be65d4f84c933183eec7db75b2410a';
const SHA512 = '81a792cf52a7927ce84ba402bd472851e1ed14875095338c5a8d827c54392fc65e580233438fb1916ec4473aa303fba1a7b033be918dcd7f8b102e422b8d561c';
const STRIPE_T = 1_700_000_000;
const STRIPE_V1 = '6de1c715a1c678098100e1b9ca29f256d50558420de185dacdb914907056a7af';

describe('shop signatures', () => {
  it('SellAuth: X-Signature is HMAC-SHA256 of the raw body, with a fresh X-Timestamp', () => {
    const now = 1_769_945_465;
    expect(isSignedByShop('sellauth', SECRET, { 'x-signature': SHA256, 'x-timestamp': String(now) }, BODY, now)).toBe(true);
    expect(isSignedByShop('sellauth', SECRET, { 'x-signature': SHA256.toUpperCase(), 'x-timestamp': String(now) }, BODY, now)).toBe(true);
    // Stale, missing or malformed timestamps are refused although the signature holds.
    expect(isSignedByShop('sellauth', SECRET, { 'x-signature': SHA256, 'x-timestamp': String(now - SHOP_SIGNATURE_TOLERANCE_SECONDS - 1) }, BODY, now)).toBe(
      false,
    );
    expect(isSignedByShop('sellauth', SECRET, { 'x-signature': SHA256 }, BODY, now)).toBe(false);
    expect(isSignedByShop('sellauth', SECRET, { 'x-signature': SHA256, 'x-timestamp': '1e9' }, BODY, now)).toBe(false);
  });

  it('Sell.app: the `signature` header is HMAC-SHA256 of the raw body', () => {
    expect(isSignedByShop('sellapp', SECRET, { signature: SHA256 }, BODY, 0)).toBe(true);
    expect(isSignedByShop('sellapp', 'another-secret', { signature: SHA256 }, BODY, 0)).toBe(false);
  });

  it('Sellix: X-Sellix-Signature is HMAC-SHA512 of the raw body; an SHA-256 one is refused', () => {
    expect(isSignedByShop('sellix', SECRET, { 'x-sellix-signature': SHA512 }, BODY, 0)).toBe(true);
    expect(isSignedByShop('sellix', SECRET, { 'x-sellix-signature': SHA256 }, BODY, 0)).toBe(false);
  });

  it('Stripe: any v1 of Stripe-Signature over `<t>.<body>` within the tolerance', () => {
    const header = `t=${STRIPE_T},v1=${'0'.repeat(64)},v1=${STRIPE_V1},v0=ignored`;
    expect(isSignedByShop('stripe', SECRET, { 'stripe-signature': header }, BODY, STRIPE_T + 10)).toBe(true);
    expect(isSignedByShop('stripe', SECRET, { 'stripe-signature': header }, BODY, STRIPE_T + SHOP_SIGNATURE_TOLERANCE_SECONDS + 1)).toBe(false);
    expect(isSignedByShop('stripe', SECRET, { 'stripe-signature': `t=${STRIPE_T + 1},v1=${STRIPE_V1}` }, BODY, STRIPE_T)).toBe(false);
    expect(isSignedByShop('stripe', SECRET, { 'stripe-signature': `v1=${STRIPE_V1}` }, BODY, STRIPE_T)).toBe(false);
  });

  it('one changed byte of the body, or a missing or odd header, fails every provider', () => {
    const changed = Buffer.from(BODY);
    changed[10] = (changed[10] ?? 0) ^ 1;
    for (const provider of ['sellauth', 'sellapp', 'sellix', 'stripe'] as const) {
      const headers = Object.fromEntries(
        Object.entries(shopSignatureHeaders(provider, SECRET, BODY.toString(), STRIPE_T)).map(([name, value]) => [name.toLowerCase(), value]),
      );
      expect(isSignedByShop(provider, SECRET, headers, BODY, STRIPE_T)).toBe(true);
      expect(isSignedByShop(provider, SECRET, headers, changed, STRIPE_T)).toBe(false);
      expect(isSignedByShop(provider, SECRET, {}, BODY, STRIPE_T)).toBe(false);
      const odd = Object.fromEntries(Object.keys(headers).map((name) => [name, name === 'x-timestamp' ? String(STRIPE_T) : 'zz']));
      expect(isSignedByShop(provider, SECRET, odd, BODY, STRIPE_T)).toBe(false);
    }
  });

  it('the simulator signs exactly as the pinned vectors', () => {
    expect(shopSignatureHeaders('sellauth', SECRET, BODY.toString(), STRIPE_T)['X-Signature']).toBe(SHA256);
    expect(shopSignatureHeaders('sellix', SECRET, BODY.toString(), STRIPE_T)['X-Sellix-Signature']).toBe(SHA512);
    expect(shopSignatureHeaders('stripe', SECRET, BODY.toString(), STRIPE_T)['Stripe-Signature']).toBe(`t=${STRIPE_T},v1=${STRIPE_V1}`);
  });
});
