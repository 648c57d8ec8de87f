import { timingSafeEqual } from 'node:crypto';

/**
 * The front door's proof of origin, in one place for every side that sends or checks it: the distribution
 * (lib/constructs/front-door.ts) adds ORIGIN_VERIFY_HEADER with the secret to each request it sends the loader
 * origin, the local front door does the same, and the loader believes the viewer address CloudFront forwards only
 * on a request that carries it.
 */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';

/**
 * The values a request through the front door may carry: the secret, and during a rotation the one before it, which
 * CloudFront still sends until its new configuration has reached every edge location (docs/operations.md, "Rotating
 * the origin secret").
 */
export interface OriginSecrets {
  current: string;
  previous?: string;
}

/** The secret as Secrets Manager holds it: `{"current": "...", "previous": "..."}`, `previous` only while rotating. */
export function originSecretsOf(secretString: string): OriginSecrets {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    throw new Error('The origin secret is not JSON: store {"current": "<value>"} (and "previous" while rotating)');
  }
  const { current, previous } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof current !== 'string' || current.length < 16) throw new Error('The origin secret has no "current" value of at least 16 characters');
  if (previous !== undefined && (typeof previous !== 'string' || previous.length < 16)) {
    throw new Error('The origin secret\'s "previous" value, when present, must be at least 16 characters');
  }
  return previous === undefined ? { current } : { current, previous };
}

/** Whether a request's headers (names lowercase) carry one of the accepted values, compared in constant time. */
export function cameThroughFrontDoor(headers: Readonly<Record<string, string | undefined>>, secrets: OriginSecrets): boolean {
  const proof = headers[ORIGIN_VERIFY_HEADER];
  if (proof === undefined) return false;
  // Both compared, whatever the first gives, so the time taken says nothing of which matched.
  const matches = [secrets.current, secrets.previous].map((secret) => secret !== undefined && sameSecret(proof, secret));
  return matches.includes(true);
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
