import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it, type Mock, vi } from 'vitest';
import { GATEWAY_RESPONSES } from '#http/gateway-responses';
import type { HttpApiHandler } from '#http/http-api';
import { LAMBDA_RESPONSE_BYTES, SECURITY_HEADERS } from '#http/responses';
import { ROUTES } from '#http/routes';
import {
  type EntryName,
  fromProxyResult,
  type GatewayDeps,
  handleGatewayRequest,
  headersOf,
  MAX_REQUEST_BODY_BYTES,
  matchRoute,
  type ProxyHandler,
  policyAllows,
  queryOf,
  type RawRequest,
  toProxyEvent,
} from '#local/gateway';

const OWNER = { ownerId: 'own_1', tokenHash: 'a'.repeat(64) };

function request(overrides: Partial<RawRequest> = {}): RawRequest {
  return {
    method: 'GET',
    target: '/v1/projects/prj_1/keys',
    rawHeaders: ['Host', '127.0.0.1:3000', 'Authorization', 'Bearer sdt_x', 'User-Agent', 'curl/8'],
    body: Buffer.alloc(0),
    sourceIp: '127.0.0.1',
    ...overrides,
  };
}

function allow(arn = 'arn:aws:execute-api:local:000000000000:local/local/*'): APIGatewayAuthorizerResult {
  return {
    principalId: OWNER.ownerId,
    policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: arn }] },
    context: OWNER,
  };
}

const okHandler: ProxyHandler = async () => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '{"ok":true}' });

function deps(
  overrides: Partial<GatewayDeps> = {},
  handler: ProxyHandler = okHandler,
): GatewayDeps & { handler: Mock<ProxyHandler>; loaderHandler: Mock<HttpApiHandler> } {
  const spy = vi.fn(handler);
  const handlers = {} as Record<EntryName, ProxyHandler>;
  for (const route of ROUTES) handlers[route.entry] = spy;
  const loaderSpy = vi.fn<HttpApiHandler>(async () => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '{"valid":true}' }));
  const loaderHandlers = {
    'loader-validate': loaderSpy,
    'loader-script': loaderSpy,
    'loader-stub': loaderSpy,
    'discord-interactions': loaderSpy,
    'shop-receiver': loaderSpy,
    'free-start': loaderSpy,
    'free-return': loaderSpy,
    'free-postback': loaderSpy,
  };
  return { authorizer: async () => allow(), handlers, loaderHandlers, newRequestId: () => 'req-1', handler: spy, loaderHandler: loaderSpy, ...overrides };
}

function bodyOf(response: { body: string | Buffer }): unknown {
  return JSON.parse(response.body.toString());
}

function expectGatewayResponse(
  response: { status: number; headers: Record<string, string | string[]>; body: string | Buffer },
  type: keyof typeof GATEWAY_RESPONSES,
) {
  const { status, error } = GATEWAY_RESPONSES[type];
  expect(response.status).toBe(status);
  // As the CDK gateway responses do, server-side failures name the request for the logs.
  expect(bodyOf(response)).toEqual(status !== undefined && status >= 500 ? { error, request_id: 'req-1' } : { error });
  expect(response.headers).toMatchObject(SECURITY_HEADERS);
}

describe('matchRoute', () => {
  it('matches every route of ROUTES by method and path template', () => {
    for (const route of ROUTES) {
      const match = matchRoute(route.method, route.path.replace('{id}', 'prj_abc').replace('{key_id}', 'key_1').replace('{entry_id}', 'bld_1'));
      expect(match?.route).toBe(route);
      expect(match?.pathParameters).toEqual({
        id: 'prj_abc',
        ...(route.path.includes('{key_id}') && { key_id: 'key_1' }),
        ...(route.path.includes('{entry_id}') && { entry_id: 'bld_1' }),
      });
    }
  });

  it('tells keys/revoke from keys/revoke-bulk', () => {
    expect(matchRoute('POST', '/v1/projects/p/keys/revoke')?.route.entry).toBe('revoke-key');
    expect(matchRoute('POST', '/v1/projects/p/keys/revoke-bulk')?.route.entry).toBe('revoke-bulk');
    expect(matchRoute('POST', '/v1/projects/p/keys/reset-hwid')?.route.entry).toBe('reset-hwid');
    expect(matchRoute('GET', '/v1/projects/p/keys/key_1')?.route.entry).toBe('get-key');
  });

  it('URL-decodes the path parameter', () => {
    expect(matchRoute('GET', '/v1/projects/prj%5F1%20x/keys')?.pathParameters).toEqual({ id: 'prj_1 x' });
  });

  it('finds no route for an unknown path, a wrong method, an empty or multi-segment id, or a bad escape', () => {
    expect(matchRoute('GET', '/v1/projects')).toBeUndefined();
    expect(matchRoute('DELETE', '/v1/projects/p/keys')).toBeUndefined();
    expect(matchRoute('PUT', '/v1/projects/p/keys')).toBeUndefined();
    expect(matchRoute('GET', '/v1/projects/p/keys/')).toBeUndefined();
    expect(matchRoute('GET', '/v1/projects//keys')).toBeUndefined();
    expect(matchRoute('GET', '/v1/projects/a/b/keys')).toBeUndefined();
    expect(matchRoute('GET', '/v1/projects/%E0%A4%A/keys')).toBeUndefined();
    expect(matchRoute('GET', '/v2/projects/p/keys')).toBeUndefined();
  });
});

describe('headersOf', () => {
  it('keeps header names in the case they were sent, the last value in headers and all values in multiValueHeaders', () => {
    const { headers, multiValueHeaders } = headersOf(['X-Trace', 'a', 'content-TYPE', 'application/json', 'X-Trace', 'b']);
    expect(headers).toEqual({ 'X-Trace': 'b', 'content-TYPE': 'application/json' });
    expect(multiValueHeaders).toEqual({ 'X-Trace': ['a', 'b'], 'content-TYPE': ['application/json'] });
  });
});

describe('queryOf', () => {
  it('is null in both maps when there is no query string', () => {
    expect(queryOf('')).toEqual({ queryStringParameters: null, multiValueQueryStringParameters: null });
  });

  it('decodes values, keeps a repeated parameter in multiValue and its last value in the single map', () => {
    expect(queryOf('limit=5&tag=a%20b&limit=7&empty')).toEqual({
      queryStringParameters: { limit: '7', tag: 'a b', empty: '' },
      multiValueQueryStringParameters: { limit: ['5', '7'], tag: ['a b'], empty: [''] },
    });
  });
});

describe('client-chosen names', () => {
  it('keeps a header or query parameter named __proto__ as an ordinary key', () => {
    expect(Object.getOwnPropertyNames(headersOf(['__proto__', 'x']).multiValueHeaders)).toEqual(['__proto__']);
    expect(Object.entries(queryOf('__proto__=1&__proto__=2').multiValueQueryStringParameters ?? {})).toEqual([['__proto__', ['1', '2']]]);
  });
});

describe('toProxyEvent', () => {
  const now = new Date('2026-01-02T03:04:05.000Z');

  it('builds the REST proxy event API Gateway sends the route Lambda', () => {
    const raw = request({ target: '/v1/projects/prj%5F1/keys?limit=2&limit=3&offset=4', sourceIp: '10.0.0.9' });
    const match = matchRoute('GET', '/v1/projects/prj%5F1/keys');
    if (!match) throw new Error('route not matched');
    const event: APIGatewayProxyEvent = toProxyEvent({ request: raw, match, authorizerContext: { principalId: 'own_1', ...OWNER }, requestId: 'req-9', now });
    expect(event).toMatchObject({
      resource: '/v1/projects/{id}/keys',
      path: '/v1/projects/prj%5F1/keys',
      httpMethod: 'GET',
      headers: { Host: '127.0.0.1:3000', Authorization: 'Bearer sdt_x', 'User-Agent': 'curl/8' },
      multiValueHeaders: { Host: ['127.0.0.1:3000'], Authorization: ['Bearer sdt_x'], 'User-Agent': ['curl/8'] },
      queryStringParameters: { limit: '3', offset: '4' },
      multiValueQueryStringParameters: { limit: ['2', '3'], offset: ['4'] },
      pathParameters: { id: 'prj_1' },
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: {
        requestId: 'req-9',
        stage: 'local',
        resourcePath: '/v1/projects/{id}/keys',
        httpMethod: 'GET',
        path: '/local/v1/projects/prj%5F1/keys',
        requestTimeEpoch: now.getTime(),
        identity: { sourceIp: '10.0.0.9', userAgent: 'curl/8' },
        authorizer: { principalId: 'own_1', ownerId: 'own_1', tokenHash: OWNER.tokenHash },
      },
    });
  });

  it('passes a body as the UTF-8 string that was sent', () => {
    const raw = request({ method: 'POST', target: '/v1/projects/p/keys/revoke', body: Buffer.from('{"key_id":"ключ"}') });
    const match = matchRoute('POST', '/v1/projects/p/keys/revoke');
    if (!match) throw new Error('route not matched');
    expect(toProxyEvent({ request: raw, match, authorizerContext: {}, requestId: 'r', now }).body).toBe('{"key_id":"ключ"}');
  });
});

describe('policyAllows', () => {
  const arn = 'arn:aws:execute-api:local:000000000000:local/local/GET/v1/projects/p/keys';

  it('allows a request under an Allow statement with a wildcard resource', () => {
    expect(policyAllows(allow(), arn)).toBe(true);
  });

  it('refuses when no Allow statement covers the method ARN, or a Deny does', () => {
    expect(policyAllows(allow('arn:aws:execute-api:local:000000000000:local/local/POST/*'), arn)).toBe(false);
    const denied = allow();
    denied.policyDocument.Statement.push({ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: arn });
    expect(policyAllows(denied, arn)).toBe(false);
  });
});

describe('fromProxyResult', () => {
  it('turns a proxy result into HTTP, merging multi-value headers and decoding a base64 body', () => {
    expect(
      fromProxyResult({ statusCode: 201, headers: { A: '1', B: 2 }, multiValueHeaders: { 'Set-Cookie': ['x=1', 'y=2'] }, body: 'aGk=', isBase64Encoded: true }),
    ).toEqual({ status: 201, headers: { A: '1', B: '2', 'Set-Cookie': ['x=1', 'y=2'] }, body: Buffer.from('hi') });
  });

  it('rejects what API Gateway calls a malformed Lambda proxy response', () => {
    for (const garbage of [
      undefined,
      null,
      'text',
      { body: '{}' },
      { statusCode: '200' },
      { statusCode: 99 },
      { statusCode: 200, body: {} },
      { statusCode: 200, headers: { A: {} } },
    ]) {
      expect(fromProxyResult(garbage)).toBeUndefined();
    }
  });
});

describe('handleGatewayRequest', () => {
  it('answers an unknown route with the 404 gateway response before calling the authorizer', async () => {
    const authorizer = vi.fn(async () => allow());
    const gateway = deps({ authorizer });
    const { response } = await handleGatewayRequest(request({ target: '/v1/nothing' }), gateway);
    expectGatewayResponse(response, 'MISSING_AUTHENTICATION_TOKEN');
    expect(authorizer).not.toHaveBeenCalled();
  });

  it('answers 401 without calling the authorizer when the Authorization header is missing', async () => {
    const authorizer = vi.fn(async () => allow());
    const { response } = await handleGatewayRequest(request({ rawHeaders: ['Host', 'x'] }), deps({ authorizer }));
    expectGatewayResponse(response, 'UNAUTHORIZED');
    expect(authorizer).not.toHaveBeenCalled();
  });

  it('hands the TOKEN authorizer the raw header value and the method ARN, whatever the header case', async () => {
    const authorizer = vi.fn(async (_event: APIGatewayTokenAuthorizerEvent) => allow());
    await handleGatewayRequest(request({ rawHeaders: ['authorization', 'Bearer sdt_lower'] }), deps({ authorizer }));
    expect(authorizer).toHaveBeenCalledWith({
      type: 'TOKEN',
      authorizationToken: 'Bearer sdt_lower',
      methodArn: 'arn:aws:execute-api:local:000000000000:local/local/GET/v1/projects/prj_1/keys',
    });
  });

  it("turns the authorizer's Unauthorized into 401 and any other authorizer failure into 500", async () => {
    const unauthorized = await handleGatewayRequest(request(), deps({ authorizer: async () => Promise.reject(new Error('Unauthorized')) }));
    expectGatewayResponse(unauthorized.response, 'UNAUTHORIZED');
    const broken = await handleGatewayRequest(request(), deps({ authorizer: async () => Promise.reject(new Error('table gone')) }));
    expectGatewayResponse(broken.response, 'AUTHORIZER_FAILURE');
    expect(broken.failure).toEqual(new Error('table gone'));
  });

  it('answers 403 when the policy does not allow the method', async () => {
    const { response } = await handleGatewayRequest(
      request(),
      deps({ authorizer: async () => allow('arn:aws:execute-api:local:000000000000:local/local/POST/*') }),
    );
    expectGatewayResponse(response, 'ACCESS_DENIED');
  });

  it("passes the authorizer context to the handler as strings and returns the handler's response", async () => {
    const gateway = deps({ authorizer: async () => ({ ...allow(), context: { ...OWNER, tier: 3, admin: false } }) });
    const outcome = await handleGatewayRequest(request(), gateway);
    expect(outcome).toEqual({ requestId: 'req-1', response: { status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"ok":true}' } });
    const [event, context] = gateway.handler.mock.calls[0] ?? [];
    expect(event?.requestContext.authorizer).toEqual({ principalId: 'own_1', ...OWNER, tier: '3', admin: 'false' });
    expect(context?.awsRequestId).toBe('req-1');
  });

  it('answers the integration failure (500, as every 5xx of the spec) when the handler throws or returns a malformed result', async () => {
    const throwing = await handleGatewayRequest(
      request(),
      deps({}, async () => Promise.reject(new Error('boom'))),
    );
    expectGatewayResponse(throwing.response, 'INTEGRATION_FAILURE');
    const garbage = await handleGatewayRequest(
      request(),
      deps({}, async () => ({ status: 200 })),
    );
    expectGatewayResponse(garbage.response, 'INTEGRATION_FAILURE');
  });

  it('answers the integration failure (500) when the handler runs past the function timeout', async () => {
    const hanging: ProxyHandler = () => new Promise(() => undefined);
    const { response, failure } = await handleGatewayRequest(request(), deps({ handlerTimeoutMs: 20 }, hanging));
    expectGatewayResponse(response, 'INTEGRATION_FAILURE');
    expect(String(failure)).toContain('timed out');
  });

  it("answers the integration failure (500) for a response past Lambda's 6 MB, counted on its serialized JSON, and passes one at the limit", async () => {
    const loaderRequest = request({ method: 'POST', target: '/v1/loader/script', body: Buffer.from('{}') });
    const result = (body: string) => ({ statusCode: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body });
    const envelope = Buffer.byteLength(JSON.stringify(result('')));
    // Backslashes take two bytes each once serialized: a body of fewer bytes than the limit can still pass it.
    const escaped = '\\'.repeat(Math.floor((LAMBDA_RESPONSE_BYTES - envelope) / 2) + 1);
    expect(Buffer.byteLength(escaped)).toBeLessThan(LAMBDA_RESPONSE_BYTES);
    const tooBig = deps();
    tooBig.loaderHandler.mockImplementation(async () => result(escaped));
    const { response, failure } = await handleGatewayRequest(loaderRequest, tooBig);
    expectGatewayResponse(response, 'INTEGRATION_FAILURE');
    expect(String(failure)).toContain(`exceeded maximum allowed payload size (${LAMBDA_RESPONSE_BYTES} bytes)`);
    const atLimit = deps();
    const plain = 'a'.repeat(LAMBDA_RESPONSE_BYTES - envelope);
    atLimit.loaderHandler.mockImplementation(async () => result(plain));
    const served = await handleGatewayRequest(loaderRequest, atLimit);
    expect(served.response.status).toBe(200);
    expect(served.response.body.length).toBe(plain.length);
  });

  it("answers 413 for a body over API Gateway's 10 MB limit without calling anything", async () => {
    const gateway = deps();
    const { response } = await handleGatewayRequest(
      request({ method: 'POST', target: '/v1/projects/p/keys/revoke', body: Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1) }),
      gateway,
    );
    expectGatewayResponse(response, 'REQUEST_TOO_LARGE');
    expect(gateway.handler).not.toHaveBeenCalled();
  });
});

describe('the loader routes: what their HTTP API (payload format 2.0) hands the function', () => {
  const loaderRequest = (overrides: Partial<RawRequest> = {}): RawRequest => ({
    method: 'POST',
    target: '/v1/loader/script?probe=1',
    rawHeaders: [
      'Content-Type',
      'application/json',
      'X-Forwarded-For',
      '192.0.2.1',
      'X-Forwarded-For',
      '192.0.2.2',
      'If-None-Match',
      '"etag"',
      'Cookie',
      'a=1; b=2',
    ],
    body: Buffer.from('{"key":"sdk_x"}'),
    sourceIp: '198.51.100.9',
    ...overrides,
  });

  it('sends a 2.0 event: route key, client address in requestContext.http, lowercase headers with repeats joined, cookies apart, no authorizer call', async () => {
    const authorizer = vi.fn(async () => allow());
    const d = deps({ authorizer });
    const { response } = await handleGatewayRequest(loaderRequest(), d);
    expect(response.status).toBe(200);
    expect(authorizer).not.toHaveBeenCalled();
    expect(d.handler).not.toHaveBeenCalled();
    const event = d.loaderHandler.mock.calls[0]?.[0];
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /v1/loader/script',
      rawPath: '/v1/loader/script',
      rawQueryString: 'probe=1',
      queryStringParameters: { probe: '1' },
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.1,192.0.2.2', 'if-none-match': '"etag"' },
      cookies: ['a=1', 'b=2'],
      body: '{"key":"sdk_x"}',
      isBase64Encoded: false,
      requestContext: { requestId: 'req-1', http: { method: 'POST', path: '/v1/loader/script', sourceIp: '198.51.100.9' } },
    });
    expect(event?.headers.cookie).toBeUndefined();
  });

  it('base64-encodes a body whose media type is not text, as HTTP APIs do', async () => {
    const d = deps();
    await handleGatewayRequest(loaderRequest({ rawHeaders: ['Content-Type', 'application/octet-stream'], body: Buffer.from('{"a":1}') }), d);
    expect(d.loaderHandler.mock.calls[0]?.[0]).toMatchObject({ body: Buffer.from('{"a":1}').toString('base64'), isBase64Encoded: true });
  });
});
