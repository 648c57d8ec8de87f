import { randomUUID } from 'node:crypto';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { GATEWAY_RESPONSE_HEADERS, GATEWAY_RESPONSES, type GatewayResponseType } from '#http/gateway-responses';
import type { HttpApiHandler } from '#http/http-api';
import { pathMatcher } from '#http/path-template';
import type { PublicRoute } from '#http/public-routes';
import { LAMBDA_RESPONSE_BYTES, SECURITY_HEADERS } from '#http/responses';
import { ALL_ROUTES, type AnyRoute, API_FUNCTION_TIMEOUT_SECONDS, needsToken, type Route, timeoutSecondsOf } from '#http/routes';
import { buildHttpApiEvent, buildProxyEvent } from './proxy-event';

/**
 * What API Gateway does between the client and the handlers, for the local server: route matching, for the owner
 * API's routes what the REST API does (TOKEN authorizer, REST proxy event), for the loader's routes what their HTTP
 * API does (payload format 2.0 event), the handler's result back to HTTP, and the gateway's own responses in the
 * API's `{"error": "..."}` shape.
 * Everything here works on plain values; server.ts does the socket I/O.
 */

/** API Gateway's own payload limit; the handlers' much smaller body limit stays in the handlers. */
export const MAX_REQUEST_BODY_BYTES = 10 * 1024 * 1024;

const LOCAL_STAGE = 'local';
const LOCAL_ACCOUNT = '000000000000';
const LOCAL_API_ID = 'local';
const LOCAL_REGION = 'local';

/** A request as it came off the socket: header names in the case they were sent, repeats kept. */
export interface RawRequest {
  method: string;
  /** Request target as sent: path plus optional `?query`. */
  target: string;
  /** Node's `IncomingMessage.rawHeaders`: name, value, name, value, ... */
  rawHeaders: readonly string[];
  body: Buffer;
  sourceIp: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string | Buffer;
}

export interface RouteMatch {
  route: AnyRoute;
  pathParameters: Record<string, string>;
}

export type EntryName = AnyRoute['entry'];
export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<unknown>;
type TokenAuthorizer = (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

export interface GatewayDeps {
  authorizer: TokenAuthorizer;
  /** The owner API's routes, behind the REST API. */
  handlers: Readonly<Record<Route['entry'], ProxyHandler>>;
  /** The loader's routes, behind their HTTP API. */
  loaderHandlers: Readonly<Record<PublicRoute['entry'], HttpApiHandler>>;
  newRequestId?: () => string;
  now?: () => Date;
  handlerTimeoutMs?: number;
}

/**
 * A response API Gateway makes itself, with the body and headers the CDK gateway responses set
 * (lib/constructs/json-gateway-responses.ts): server-side failures also carry the request id.
 */
export function gatewayResponse(type: GatewayResponseType, requestId: string, status?: number): HttpResponse {
  const { error, status: typeStatus } = GATEWAY_RESPONSES[type];
  const code = status ?? typeStatus ?? (type === 'DEFAULT_4XX' ? 400 : 500);
  return {
    status: code,
    headers: { ...SECURITY_HEADERS, ...GATEWAY_RESPONSE_HEADERS[type] },
    body: JSON.stringify(code >= 500 ? { error, request_id: requestId } : { error }),
  };
}

const matchAnyRoute = pathMatcher<AnyRoute>(ALL_ROUTES);

/**
 * The route for a method and a raw (still percent-encoded) path, with the path parameters decoded.
 * Undefined for an unknown path or method: API Gateway answers those before any authorizer runs.
 */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  const match = matchAnyRoute(method, path);
  return match && { route: match.route, pathParameters: match.params };
}

export function splitTarget(target: string): { path: string; query: string } {
  const at = target.indexOf('?');
  return at === -1 ? { path: target, query: '' } : { path: target.slice(0, at), query: target.slice(at + 1) };
}

/**
 * Collects name/value pairs into the last value and all values per name. Maps, then Object.fromEntries,
 * so a client-chosen name such as `__proto__` stays an ordinary key.
 */
function collect(pairs: Iterable<[string, string]>): { last: Record<string, string>; all: Record<string, string[]> } {
  const all = new Map<string, string[]>();
  for (const [name, value] of pairs) all.set(name, [...(all.get(name) ?? []), value]);
  return {
    last: Object.fromEntries([...all].map(([name, values]) => [name, values.at(-1) ?? ''])),
    all: Object.fromEntries(all),
  };
}

function* headerPairs(rawHeaders: readonly string[]): Iterable<[string, string]> {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) yield [rawHeaders[i] ?? '', rawHeaders[i + 1] ?? ''];
}

/** Header names keep the case they were sent in; `headers` holds the last of repeated values, as API Gateway does. */
export function headersOf(rawHeaders: readonly string[]): { headers: Record<string, string>; multiValueHeaders: Record<string, string[]> } {
  const { last, all } = collect(headerPairs(rawHeaders));
  return { headers: last, multiValueHeaders: all };
}

/** Decoded query parameters, or nulls when there are none, as API Gateway sends them. */
export function queryOf(query: string): {
  queryStringParameters: Record<string, string> | null;
  multiValueQueryStringParameters: Record<string, string[]> | null;
} {
  const { last, all } = collect(new URLSearchParams(query));
  if (Object.keys(last).length === 0) return { queryStringParameters: null, multiValueQueryStringParameters: null };
  return { queryStringParameters: last, multiValueQueryStringParameters: all };
}

/** The last value of a header, whatever the case of its name. */
function headerValue(rawHeaders: readonly string[], name: string): string | undefined {
  let found: string | undefined;
  for (const [header, value] of headerPairs(rawHeaders)) if (header.toLowerCase() === name) found = value;
  return found;
}

function methodArn(method: string, path: string): string {
  return `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${LOCAL_API_ID}/${LOCAL_STAGE}/${method}${path}`;
}

/** The authorizer's context as API Gateway hands it to the integration: values as strings, plus principalId. */
function authorizerContextOf(result: APIGatewayAuthorizerResult): Record<string, string | null> {
  const context: Record<string, string | null> = { principalId: result.principalId };
  for (const [name, value] of Object.entries(result.context ?? {})) {
    if (value !== undefined) context[name] = value === null ? null : String(value);
  }
  return context;
}

/** Whether the authorizer's policy lets the caller invoke `arn`: an explicit Deny wins over any Allow. */
export function policyAllows(result: APIGatewayAuthorizerResult, arn: string): boolean {
  const statements = result.policyDocument?.Statement ?? [];
  const matching = (effect: string) =>
    statements.some((statement) => {
      if (statement.Effect !== effect) return false;
      const actions = 'Action' in statement ? [statement.Action].flat() : [];
      if (!actions.some((action) => wildcardMatch(action, 'execute-api:Invoke'))) return false;
      const resources = 'Resource' in statement ? [statement.Resource ?? []].flat() : [];
      return resources.some((resource) => wildcardMatch(resource, arn));
    });
  return !matching('Deny') && matching('Allow');
}

function wildcardMatch(pattern: string, value: string): boolean {
  const regex = new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^$(){}|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return regex.test(value);
}

export interface ProxyEventInput {
  request: RawRequest;
  match: RouteMatch;
  /** Null for a route without the authorizer (the loader's key check). */
  authorizerContext: Record<string, string | null> | null;
  requestId: string;
  now: Date;
}

/** The REST proxy event API Gateway would send the route's Lambda for this request. */
export function toProxyEvent({ request, match, authorizerContext, requestId, now }: ProxyEventInput): APIGatewayProxyEvent {
  const { path, query } = splitTarget(request.target);
  const { headers, multiValueHeaders } = headersOf(request.rawHeaders);
  return buildProxyEvent({
    method: request.method,
    resource: match.route.path,
    path,
    pathParameters: match.pathParameters,
    headers,
    multiValueHeaders,
    ...queryOf(query),
    body: request.body.length > 0 ? request.body.toString('utf8') : null,
    authorizer: authorizerContext,
    requestId,
    requestTimeEpoch: now.getTime(),
    sourceIp: request.sourceIp,
    stage: LOCAL_STAGE,
    accountId: LOCAL_ACCOUNT,
    apiId: LOCAL_API_ID,
    domainName: headerValue(request.rawHeaders, 'host') ?? '127.0.0.1',
    resourceId: match.route.entry,
  });
}

/**
 * Media types an HTTP API passes as text; any other body (none named included) reaches the function base64-encoded
 * with `isBase64Encoded` set.
 */
const TEXT_MEDIA_TYPE = /^(?:text\/[\w.+-]+|application\/(?:[\w.+-]+\+)?(?:json|xml|javascript)|application\/x-www-form-urlencoded)$/;

/** The payload format 2.0 event the loader's HTTP API would send its Lambda for this request. */
function toHttpApiEvent({ request, match, requestId, now }: Omit<ProxyEventInput, 'authorizerContext'>): APIGatewayProxyEventV2 {
  const { path, query } = splitTarget(request.target);
  const mediaType = (headerValue(request.rawHeaders, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const text = TEXT_MEDIA_TYPE.test(mediaType);
  return buildHttpApiEvent({
    method: request.method,
    routePath: match.route.path,
    rawPath: path,
    rawQueryString: query,
    headerPairs: [...headerPairs(request.rawHeaders)],
    body: request.body.length > 0 ? request.body.toString(text ? 'utf8' : 'base64') : null,
    isBase64Encoded: request.body.length > 0 && !text,
    requestId,
    timeEpoch: now.getTime(),
    sourceIp: request.sourceIp,
    stage: '$default',
    accountId: LOCAL_ACCOUNT,
    apiId: LOCAL_API_ID,
    domainName: headerValue(request.rawHeaders, 'host') ?? '127.0.0.1',
    pathParameters: match.pathParameters,
  });
}

/** The parts of a Lambda context the handlers and their middlewares read. */
export function lambdaContext(functionName: string, requestId: string, timeoutMs: number, startedAt: number): Context {
  const failure = () => {
    throw new Error('Callback-style completion is not supported by the local gateway');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${requestId}`,
    getRemainingTimeInMillis: () => Math.max(0, startedAt + timeoutMs - Date.now()),
    done: failure,
    fail: failure,
    succeed: failure,
  };
}

/**
 * A Lambda proxy result as API Gateway turns it into HTTP, or undefined when it is malformed (API Gateway answers
 * those with its integration failure): statusCode a valid integer, body a string if present, header values scalars.
 */
export function fromProxyResult(result: unknown): HttpResponse | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const { statusCode, body, headers, multiValueHeaders, isBase64Encoded } = result as Record<string, unknown>;
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) return undefined;
  if (body !== undefined && body !== null && typeof body !== 'string') return undefined;
  if (isBase64Encoded !== undefined && typeof isBase64Encoded !== 'boolean') return undefined;
  const out: Record<string, string | string[]> = {};
  if (headers !== undefined && headers !== null) {
    if (typeof headers !== 'object') return undefined;
    for (const [name, value] of Object.entries(headers)) {
      if (!isScalar(value)) return undefined;
      out[name] = String(value);
    }
  }
  if (multiValueHeaders !== undefined && multiValueHeaders !== null) {
    if (typeof multiValueHeaders !== 'object') return undefined;
    for (const [name, values] of Object.entries(multiValueHeaders)) {
      if (!Array.isArray(values) || !values.every(isScalar)) return undefined;
      out[name] = values.map(String);
    }
  }
  const text = typeof body === 'string' ? body : '';
  return { status: statusCode, headers: out, body: isBase64Encoded ? Buffer.from(text, 'base64') : text };
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** Settles with a function's outcome, or rejects when it runs past the function timeout, as Lambda would. */
async function withFunctionTimeout<T>(invocation: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Task timed out after ${timeoutMs / 1000} seconds`)), timeoutMs);
  });
  try {
    return await Promise.race([invocation, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface GatewayOutcome {
  response: HttpResponse;
  requestId: string;
  /** The handler's failure or the authorizer's, for the server's log; API Gateway shows the client none of it. */
  failure?: unknown;
}

/**
 * One request through the gateway, in API Gateway's order: payload size, route, Authorization header,
 * authorizer and its policy, then the route's handler and the check of its result.
 */
export async function handleGatewayRequest(request: RawRequest, deps: GatewayDeps): Promise<GatewayOutcome> {
  const requestId = (deps.newRequestId ?? randomUUID)();
  const now = (deps.now ?? (() => new Date()))();
  if (request.body.length > MAX_REQUEST_BODY_BYTES) return { requestId, response: gatewayResponse('REQUEST_TOO_LARGE', requestId) };

  const { path } = splitTarget(request.target);
  const match = matchRoute(request.method, path);
  if (!match) return { requestId, response: gatewayResponse('MISSING_AUTHENTICATION_TOKEN', requestId) };

  const { route } = match;
  let invoke: (context: Context) => Promise<unknown>;
  if (needsToken(route)) {
    const authorized = await authorize(request, path, deps);
    if ('response' in authorized) return { requestId, ...authorized, response: authorized.response(requestId) };
    const event = toProxyEvent({ request, match, authorizerContext: authorized.context, requestId, now });
    invoke = (context) => deps.handlers[route.entry](event, context);
  } else {
    // The loader's routes have their own HTTP API: no authorizer, a 2.0 event.
    const event = toHttpApiEvent({ request, match, requestId, now });
    invoke = (context) => deps.loaderHandlers[route.entry](event, context);
  }
  // Past the deployed function's timeout Lambda fails the call.
  const timeoutMs = deps.handlerTimeoutMs ?? timeoutSecondsOf(route) * 1000;
  const context = lambdaContext(route.entry, requestId, timeoutMs, Date.now());
  let result: unknown;
  try {
    result = await withFunctionTimeout(invoke(context), timeoutMs);
  } catch (error) {
    return { requestId, response: gatewayResponse('INTEGRATION_FAILURE', requestId), failure: error };
  }
  // Lambda refuses a response past its limit before API Gateway sees it, so the local stack cannot serve one either.
  const size = Buffer.byteLength(JSON.stringify(result) ?? '', 'utf8');
  if (size > LAMBDA_RESPONSE_BYTES) {
    const failure = new Error(
      `Function.ResponseSizeTooLarge: response payload size (${size} bytes) exceeded maximum allowed payload size (${LAMBDA_RESPONSE_BYTES} bytes)`,
    );
    return { requestId, response: gatewayResponse('INTEGRATION_FAILURE', requestId), failure };
  }
  const response = fromProxyResult(result);
  if (!response) return { requestId, response: gatewayResponse('INTEGRATION_FAILURE', requestId), failure: new Error('Malformed Lambda proxy response') };
  return { requestId, response };
}

/**
 * API Gateway's TOKEN authorizer step: the Authorization header, the authorizer (within its function timeout) and
 * its policy. Either the context the integration gets, or the gateway's own answer.
 */
async function authorize(
  request: RawRequest,
  path: string,
  deps: GatewayDeps,
): Promise<{ context: Record<string, string | null> } | { response: (requestId: string) => HttpResponse; failure?: unknown }> {
  // A TOKEN authorizer is not called without its identity source; API Gateway answers 401 itself.
  const authorization = headerValue(request.rawHeaders, 'authorization');
  if (!authorization) return { response: (id) => gatewayResponse('UNAUTHORIZED', id) };
  const arn = methodArn(request.method, path);
  let authorized: APIGatewayAuthorizerResult;
  try {
    // The authorizer is a Lambda with the default API function timeout: a token lookup that never answers
    // (a database that hangs) ends as API Gateway's 500, not as a request that waits forever.
    const authorizerTimeoutMs = deps.handlerTimeoutMs ?? API_FUNCTION_TIMEOUT_SECONDS * 1000;
    authorized = await withFunctionTimeout(deps.authorizer({ type: 'TOKEN', authorizationToken: authorization, methodArn: arn }), authorizerTimeoutMs);
  } catch (error) {
    if (error instanceof Error && error.message === 'Unauthorized') return { response: (id) => gatewayResponse('UNAUTHORIZED', id) };
    return { response: (id) => gatewayResponse('AUTHORIZER_FAILURE', id), failure: error };
  }
  if (!authorized || typeof authorized.principalId !== 'string' || !authorized.policyDocument) {
    return { response: (id) => gatewayResponse('AUTHORIZER_CONFIGURATION_ERROR', id), failure: new Error('Authorizer returned no policy') };
  }
  if (!policyAllows(authorized, arn)) return { response: (id) => gatewayResponse('ACCESS_DENIED', id) };
  return { context: authorizerContextOf(authorized) };
}
