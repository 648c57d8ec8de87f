import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { AddressTally } from '#domain/address-tally';
import { RefusalMemory } from '#domain/refusal-memory';
import { proxyEventOfHttpApi } from '#http/http-api';
import { createValidateHandler } from '#http/loader-validate';
import { LOADER_ROUTE, mappedPathOf, publicRouteOf, SCRIPT_ROUTE } from '#http/routes';
import { buildHttpApiEvent } from '#local/proxy-event';
import { invoke, NOW } from '#test-support/api-harness';
import { MemoryKeyCheckStore, MemoryStores } from '#test-support/memory-stores';

const PROJECT = 'prj_front';

const httpApiEvent = (overrides: Partial<Parameters<typeof buildHttpApiEvent>[0]> = {}) =>
  buildHttpApiEvent({
    method: 'POST',
    routePath: LOADER_ROUTE.path,
    rawPath: LOADER_ROUTE.path,
    rawQueryString: '',
    headerPairs: [['Content-Type', 'application/json']],
    body: '{}',
    isBase64Encoded: false,
    requestId: 'req-2',
    timeEpoch: NOW * 1000,
    sourceIp: '198.51.100.44',
    stage: '$default',
    accountId: '123456789012',
    apiId: 'httpapi',
    domainName: 'api.example.com',
    ...overrides,
  });

describe('proxyEventOfHttpApi: the 2.0 event as the middlewares read it', () => {
  it('takes the client address from requestContext.http, the route from routeKey and the request id', () => {
    const event = proxyEventOfHttpApi(httpApiEvent({ routePath: mappedPathOf(SCRIPT_ROUTE), rawPath: '/v1/loader/script' }));
    expect(event.requestContext.identity.sourceIp).toBe('198.51.100.44');
    expect(event.resource).toBe('/script');
    expect(event.path).toBe('/v1/loader/script');
    expect(event.httpMethod).toBe('POST');
    expect(event.requestContext.requestId).toBe('req-2');
    expect(event.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('keeps a base64 body and says so, for the body middleware to decode', () => {
    const event = proxyEventOfHttpApi(httpApiEvent({ body: Buffer.from('{"a":1}').toString('base64'), isBase64Encoded: true }));
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body ?? '', 'base64').toString()).toBe('{"a":1}');
  });
});

describe('publicRouteOf: the loader route a route key names, through either URL', () => {
  it.each([
    ['POST /v1/loader/validate', LOADER_ROUTE],
    ['POST /validate', LOADER_ROUTE],
    ['POST /v1/loader/script', SCRIPT_ROUTE],
    ['POST /script', SCRIPT_ROUTE],
    ['GET /v1/loader/script', undefined],
    ['POST /v1/projects/{id}/keys', undefined],
  ])('%s', (routeKey, route) => {
    expect(publicRouteOf(routeKey)).toBe(route);
  });
});

describe('the validate handler on an HTTP API event', () => {
  const handler = () => {
    const keys = new MemoryKeyCheckStore();
    const issued = keys.issue(PROJECT, { expiresAt: NOW + 600 });
    const validate = createValidateHandler({
      keys,
      rateLimits: new MemoryStores(),
      addresses: new AddressTally(),
      refusals: new RefusalMemory(),
      telemetry: { report: async () => undefined },
      now: () => NOW,
      logger: new Logger({ logLevel: 'SILENT' }),
    });
    const body = JSON.stringify({ project_id: PROJECT, key: issued.key, fingerprint: 'a'.repeat(64), executor: 'Wave' });
    return { validate, issued, body };
  };

  it('answers a base64-encoded JSON body (a client that sent no text media type) like a plain one', async () => {
    const { validate, issued, body } = handler();
    const reply = await invoke(
      validate,
      httpApiEvent({ headerPairs: [['Content-Type', 'application/json']], body: Buffer.from(body).toString('base64'), isBase64Encoded: true }),
    );
    expect(reply.body).toMatchObject({ valid: true, key_id: issued.id });
  });

  it('reads headers the HTTP API lowercased: a text/plain body is refused naming the media type', async () => {
    const { validate, body } = handler();
    const reply = await invoke(validate, httpApiEvent({ headerPairs: [['CONTENT-TYPE', 'text/plain']], body }));
    expect(reply.status).toBe(400);
    expect(reply.body.error).toContain('Content-Type text/plain');
  });
});
