import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Each shop's own webhook signature, over the raw bytes of the body, exactly as the shop documents it (DESIGN.md,
 * "Shops deliver keys by themselves"). Nothing of the body is read before its signature holds.
 */

export const SHOP_PROVIDERS = ['sellauth', 'sellapp', 'sellix', 'stripe'] as const;
export type ShopProvider = (typeof SHOP_PROVIDERS)[number];

/**
 * How far a signed timestamp may be from now: Stripe's libraries' default tolerance (5 minutes), used for SellAuth's
 * `X-Timestamp` too. SellAuth's 3 attempts 5 s apart and Stripe's retries are each signed anew, so a retry is fresh.
 */
export const SHOP_SIGNATURE_TOLERANCE_SECONDS = 300;

/** Headers by lower-case name, as the HTTP layer hands them on. */
export type ShopHeaders = Readonly<Record<string, string | undefined>>;

const hmacHex = (algorithm: 'sha256' | 'sha512', secret: string, ...parts: (string | Uint8Array)[]): string => {
  const mac = createHmac(algorithm, Buffer.from(secret, 'utf8'));
  for (const part of parts) mac.update(part);
  return mac.digest('hex');
};

/** Hex digests compared in constant time; a header of another length or not hex is simply unequal. */
function sameHex(expected: string, given: string | undefined): boolean {
  if (given === undefined || given.length !== expected.length || !/^[0-9a-fA-F]+$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(given, 'hex'));
}

const isFresh = (timestamp: number, now: number): boolean => Math.abs(now - timestamp) <= SHOP_SIGNATURE_TOLERANCE_SECONDS;
const unixSecondsOf = (text: string | undefined): number | undefined => (text !== undefined && /^\d{1,12}$/.test(text) ? Number(text) : undefined);

/** Whether the request carries `provider`'s valid, fresh signature of `body` under `secret`. */
export function isSignedByShop(provider: ShopProvider, secret: string, headers: ShopHeaders, body: Uint8Array, now: number): boolean {
  switch (provider) {
    case 'sellauth': {
      // https://docs.sellauth.com/guides/dynamic-delivery and /guides/http-notifications: `X-Signature` is
      // hash_hmac('sha256', <the request body>, <webhook secret>) in hex; `X-Timestamp` is Unix seconds and
      // `Idempotency-Key` names the delivery across its retries. A timestamp out of tolerance is refused as stale.
      const timestamp = unixSecondsOf(headers['x-timestamp']);
      if (timestamp === undefined || !isFresh(timestamp, now)) return false;
      return sameHex(hmacHex('sha256', secret, body), headers['x-signature']);
    }
    case 'sellapp':
      // https://docs.sell.app/docs/setting-up-dynamic-webhook: header `signature`, hash_hmac('sha256',
      // file_get_contents('php://input'), $secret), compared with hash_equals. No timestamp is sent.
      return sameHex(hmacHex('sha256', secret, body), headers.signature);
    case 'sellix':
      // https://docs.sellix.io/api-reference/webhooks: `X-Sellix-Signature`, an HMAC-SHA512 of the request body
      // under the shop's webhook secret, in hex. No timestamp is sent.
      return sameHex(hmacHex('sha512', secret, body), headers['x-sellix-signature']);
    case 'stripe':
      return isStripeSigned(secret, headers['stripe-signature'], body, now);
  }
}

/**
 * https://docs.stripe.com/webhooks#verify-manually: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...][,v0=...]`;
 * the signed payload is `<t>.<raw body>`, HMAC-SHA256 under the endpoint's `whsec_…` secret; any `v1` may match
 * (several during a secret's roll); other schemes are ignored; a `t` outside the tolerance is refused.
 */
function isStripeSigned(secret: string, header: string | undefined, body: Uint8Array, now: number): boolean {
  if (header === undefined || header.length > 2048) return false;
  const pairs = header.split(',').map((part) => {
    const at = part.indexOf('=');
    return at < 0 ? ['', ''] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  });
  const timestampText = pairs.find(([name]) => name === 't')?.[1];
  const timestamp = unixSecondsOf(timestampText);
  if (timestamp === undefined || !isFresh(timestamp, now)) return false;
  const expected = hmacHex('sha256', secret, `${timestampText}.`, body);
  // Every candidate is compared, so the time taken does not say which one matched.
  return pairs.filter(([name]) => name === 'v1').reduce((found, [, value]) => sameHex(expected, value) || found, false);
}

/** The headers `provider` would send for `body` signed at `now` (the local simulator, tests, the bench). */
export function shopSignatureHeaders(provider: ShopProvider, secret: string, body: string, now: number): Record<string, string> {
  switch (provider) {
    case 'sellauth':
      return { 'X-Signature': hmacHex('sha256', secret, body), 'X-Timestamp': String(now) };
    case 'sellapp':
      return { signature: hmacHex('sha256', secret, body) };
    case 'sellix':
      return { 'X-Sellix-Signature': hmacHex('sha512', secret, body) };
    case 'stripe':
      return { 'Stripe-Signature': `t=${now},v1=${hmacHex('sha256', secret, `${now}.`, body)}` };
  }
}
