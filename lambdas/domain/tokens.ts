import { createHash, randomBytes } from 'node:crypto';

/** Tokens are long random strings; only their SHA-256 is ever stored or logged. */
export function newApiToken(): string {
  return `sdt_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** RFC 6750 `Bearer <token68>`; the scheme is case-insensitive. Longer tokens than ours are refused unread. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]{1,512}=*)$/i;

/** The token from an `Authorization` header value, or undefined when it is missing or malformed. */
export function parseBearer(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header.trim())?.[1] : undefined;
}
