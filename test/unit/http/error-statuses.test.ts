import { describe, expect, it } from 'vitest';
import { InvalidInput, KeyNotFound, PlanNotAllowed, ProjectNotFound, RateLimited, ScopeMissing, Unauthenticated, VersionNotFound } from '#domain/errors';
import { ERROR_STATUSES, errorHeadersOf, statusOf } from '#http/error-statuses';
import { rateLimitHeaders } from '#http/rate-limit-headers';

describe('the status of each domain error (spec §7)', () => {
  it.each([
    [new InvalidInput('key_id is required'), 400],
    [new Unauthenticated(), 401],
    [new ScopeMissing('read', { scope: 'write', doing: 'revoking a key' }), 403],
    [new PlanNotAllowed('prj_1', 'pro'), 403],
    [new ProjectNotFound(), 404],
    [new KeyNotFound('key_1'), 404],
    [new VersionNotFound('ver_1'), 404],
    [new RateLimited(23, 'Rate limit exceeded'), 429],
  ])('%s is %i', (error, status) => {
    expect(statusOf(error)).toBe(status);
  });

  it("uses only the statuses of the spec's table", () => {
    for (const { status } of Object.values(ERROR_STATUSES)) expect([400, 401, 403, 404, 429, 500]).toContain(status);
  });

  it('tells a rate-limited caller when to come back, and adds nothing to other failures', () => {
    expect(errorHeadersOf(new RateLimited(23, 'Rate limit exceeded'))).toEqual({ 'Retry-After': '23' });
    expect(errorHeadersOf(new KeyNotFound('key_1'))).toEqual({});
  });
});

describe('rate limit headers (IETF RateLimit fields)', () => {
  it('states the policy and what is left of the window', () => {
    expect(rateLimitHeaders({ remaining: 42, resetSeconds: 17 })).toEqual({
      'RateLimit-Policy': '"per-token";q=100;w=60',
      RateLimit: '"per-token";r=42;t=17',
    });
  });
});
