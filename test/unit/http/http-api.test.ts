import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { AddressTally } from '#domain/address-tally';
import { RefusalMemory } from '#domain/refusal-memory';
import { clientAddressOf, proxyEventOfHttpApi, VIEWER_ADDRESS_HEADER } from '#http/http-api';
import { createValidateHandler } from '#http/loader-validate';
import { ORIGIN_VERIFY_HEADER } from '#http/origin-verify';
import { mappedPathOf, publicRouteOf, SCRIPT_ROUTE, VALIDATE_ROUTE } from '#http/public-routes';
import { buildHttpApiEvent } from '#local/proxy-event';
import { invoke, NOW } from '#test-support/api-harness';
import { MemoryKeyCheckStore, MemoryStores } from '#test-support/memory-stores';

const PROJECT = 'prj_front';

const httpApiEvent = (overrides: Partial<Parameters<typeof buildHttpApiEvent>[0]> = {}) =>
  buildHttpApiEvent({
    method: 'POST',
    routePath: VALIDATE_ROUTE.path,
    rawPath: VALIDATE_ROUTE.path,
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

describe("clientAddressOf: behind the front door, the viewer's address CloudFront forwards, believed only with the origin secret", () => {
  const SECRET = 'front-door-secret-0123456789';
  const EDGE = '130.176.0.1';
  const through = (headerPairs: [string, string][]) => httpApiEvent({ sourceIp: EDGE, headerPairs: [['Content-Type', 'application/json'], ...headerPairs] });

  it.each([
    ['203.0.113.7:52311', '203.0.113.7'],
    ['2001:db8:85a3::8a2e:370:7334:443', '2001:db8:85a3::8a2e:370:7334'],
    ['[2001:db8::1]:443', '2001:db8::1'],
  ])('takes %s, sent with the secret, as the buyer %s', (viewer, address) => {
    const event = through([
      [ORIGIN_VERIFY_HEADER, SECRET],
      [VIEWER_ADDRESS_HEADER, viewer],
    ]);
    expect(clientAddressOf(event, { current: SECRET })).toBe(address);
    expect(proxyEventOfHttpApi(event, { current: SECRET }).requestContext.identity.sourceIp).toBe(address);
  });

  it('keeps the connection address when the secret is missing or wrong: anyone can send the header straight to the HTTP API', () => {
    for (const proof of [[], [[ORIGIN_VERIFY_HEADER, 'guess']], [[ORIGIN_VERIFY_HEADER, `${SECRET}x`]]] as [string, string][][]) {
      expect(clientAddressOf(through([...proof, [VIEWER_ADDRESS_HEADER, '203.0.113.7:1']]), { current: SECRET })).toBe(EDGE);
    }
  });

  it('keeps the connection address without a front door (no secret configured), whatever the request claims', () => {
    const event = through([
      [ORIGIN_VERIFY_HEADER, SECRET],
      [VIEWER_ADDRESS_HEADER, '203.0.113.7:1'],
    ]);
    expect(clientAddressOf(event, undefined)).toBe(EDGE);
    expect(proxyEventOfHttpApi(event).requestContext.identity.sourceIp).toBe(EDGE);
  });

  it('keeps the connection address when the forwarded value is not an address and port', () => {
    for (const viewer of ['', 'not-an-address:1', '203.0.113.7', '999.1.1.1:80']) {
      const event = through([
        [ORIGIN_VERIFY_HEADER, SECRET],
        [VIEWER_ADDRESS_HEADER, viewer],
      ]);
      expect(clientAddressOf(event, { current: SECRET }), viewer).toBe(EDGE);
    }
  });
});

describe('publicRouteOf: the loader route a route key names, through either URL', () => {
  it.each([
    ['POST /v1/loader/validate', VALIDATE_ROUTE],
    ['POST /validate', VALIDATE_ROUTE],
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

  it("counts the buyer's forwarded address, not CloudFront's, toward the per-address limit when the front door vouches for it", async () => {
    const keys = new MemoryKeyCheckStore();
    const issued = keys.issue(PROJECT, { expiresAt: NOW + 600, maxUses: null });
    const addresses = new AddressTally();
    const validate = createValidateHandler({
      keys,
      rateLimits: new MemoryStores(),
      addresses,
      refusals: new RefusalMemory(),
      telemetry: { report: async () => undefined },
      now: () => NOW,
      logger: new Logger({ logLevel: 'SILENT' }),
      originSecrets: { current: 'front-door-secret-of-the-door' },
    });
    const body = JSON.stringify({ project_id: PROJECT, key: issued.key, fingerprint: 'a'.repeat(64), executor: 'Wave' });
    const headerPairs: [string, string][] = [
      ['Content-Type', 'application/json'],
      [ORIGIN_VERIFY_HEADER, 'front-door-secret-of-the-door'],
      [VIEWER_ADDRESS_HEADER, '203.0.113.9:40000'],
    ];
    expect((await invoke(validate, httpApiEvent({ sourceIp: '130.176.0.1', headerPairs, body }))).body).toMatchObject({ valid: true });
    const window = Math.floor(NOW / 60) * 60;
    expect(addresses.countCheck('203.0.113.9', window)?.checks).toBe(2);
    expect(addresses.countCheck('130.176.0.1', window)?.checks).toBe(1);
  });

  it('reads headers the HTTP API lowercased: a text/plain body is refused naming the media type', async () => {
    const { validate, body } = handler();
    const reply = await invoke(validate, httpApiEvent({ headerPairs: [['CONTENT-TYPE', 'text/plain']], body }));
    expect(reply.status).toBe(400);
    expect(reply.body.error).toContain('Content-Type text/plain');
  });
});
