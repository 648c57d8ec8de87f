import { describe, expect, it } from 'vitest';
import { GATEWAY_RESPONSES } from '#http/gateway-responses';

describe("API Gateway's own responses, in the API's error shape (spec §5, §7)", () => {
  it('answers a missing or invalid token with 401 and an error saying how to authenticate', () => {
    expect(GATEWAY_RESPONSES.UNAUTHORIZED.status).toBe(401);
    expect(GATEWAY_RESPONSES.UNAUTHORIZED.error).toContain('Authorization: Bearer');
  });

  it("answers the usage plan's throttling with 429 and the 100 requests per minute message", () => {
    expect(GATEWAY_RESPONSES.THROTTLED).toEqual({ status: 429, error: 'Rate limit exceeded: 100 requests per minute' });
    expect(GATEWAY_RESPONSES.QUOTA_EXCEEDED.status).toBe(429);
  });

  it('gives every response a non-empty error text and never leaks internals in it', () => {
    for (const [type, response] of Object.entries(GATEWAY_RESPONSES)) {
      expect(response.error.length, type).toBeGreaterThan(0);
      expect(response.error, type).not.toMatch(/\$context|Lambda|stack/i);
    }
  });

  it('keeps 4xx and 5xx statuses in their classes', () => {
    expect(GATEWAY_RESPONSES.BAD_REQUEST_BODY.status).toBe(400);
    expect(GATEWAY_RESPONSES.REQUEST_TOO_LARGE.status).toBe(413);
    // The spec's table (§7) has no 415: API Gateway's own media-type refusal is a 400 like every other body error.
    expect(GATEWAY_RESPONSES.UNSUPPORTED_MEDIA_TYPE.status).toBe(400);
    expect(GATEWAY_RESPONSES.AUTHORIZER_FAILURE.status).toBe(500);
  });
});
