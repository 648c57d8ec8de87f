import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Caller } from '#domain/model';
import { callerIdentity } from '#http/http-api';

/**
 * An API Gateway REST proxy event, as API Gateway hands one to a Lambda integration after the authorizer allowed
 * the request. The one builder of them: the local gateway makes its events with it, and so do the tests and the
 * bench, so what the handlers are tested with is what the local stack sends them.
 */
export interface ProxyEventParts {
  method: string;
  /** The route's path template, e.g. `/v1/projects/{id}/keys`. */
  resource: string;
  /** The path as requested (still percent-encoded). */
  path: string;
  pathParameters: Record<string, string> | null;
  /** Header names as sent; `multiValueHeaders` keeps repeats, `headers` the last value of each. */
  headers: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  queryStringParameters: Record<string, string> | null;
  multiValueQueryStringParameters?: Record<string, string[]> | null;
  body: string | null;
  isBase64Encoded?: boolean;
  /** The authorizer's context, values as strings; null for a request no authorizer saw. */
  authorizer: Record<string, string | number | null> | null;
  requestId: string;
  requestTimeEpoch: number;
  sourceIp: string;
  stage: string;
  accountId: string;
  apiId: string;
  domainName?: string;
  resourceId?: string;
}

/** The context the token authorizer (#api/authorizer) answers for `caller`, as API Gateway passes it on. */
export const authorizerContextFor = (caller: Caller): Record<string, string> => ({
  ownerId: caller.ownerId,
  tokenHash: caller.tokenHash,
  tokenId: caller.tokenId,
  scope: caller.scope,
  principalId: caller.ownerId,
});

/** Each name's values as a list, as API Gateway fills the multi-value maps. */
const asLists = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([name, value]) => [name, [value]]));

export function buildProxyEvent(parts: ProxyEventParts): APIGatewayProxyEvent {
  const userAgent = Object.entries(parts.headers).find(([name]) => name.toLowerCase() === 'user-agent')?.[1] ?? null;
  return {
    resource: parts.resource,
    path: parts.path,
    httpMethod: parts.method,
    headers: parts.headers,
    multiValueHeaders: parts.multiValueHeaders ?? asLists(parts.headers),
    queryStringParameters: parts.queryStringParameters,
    multiValueQueryStringParameters: parts.multiValueQueryStringParameters ?? (parts.queryStringParameters ? asLists(parts.queryStringParameters) : null),
    pathParameters: parts.pathParameters,
    stageVariables: null,
    body: parts.body,
    isBase64Encoded: parts.isBase64Encoded ?? false,
    requestContext: {
      accountId: parts.accountId,
      apiId: parts.apiId,
      authorizer: parts.authorizer ? { ...parts.authorizer } : null,
      ...(parts.domainName ? { domainName: parts.domainName } : {}),
      extendedRequestId: parts.requestId,
      httpMethod: parts.method,
      identity: callerIdentity(parts.sourceIp, userAgent),
      path: `/${parts.stage}${parts.path}`,
      protocol: 'HTTP/1.1',
      requestId: parts.requestId,
      requestTimeEpoch: parts.requestTimeEpoch,
      resourceId: parts.resourceId ?? parts.resource,
      resourcePath: parts.resource,
      stage: parts.stage,
    },
  };
}

/** An API Gateway HTTP API event (payload format 2.0), as the loader's HTTP API hands one to its Lambda. */
export interface HttpApiEventParts {
  method: string;
  /** The route's path as the HTTP API routes it, e.g. `/v1/loader/validate`. */
  routePath: string;
  /** The path as requested. */
  rawPath: string;
  rawQueryString: string;
  /** Header names as sent, repeats kept: the HTTP API lowercases names and joins repeats with commas. */
  headerPairs: readonly (readonly [string, string])[];
  body: string | null;
  isBase64Encoded: boolean;
  requestId: string;
  timeEpoch: number;
  sourceIp: string;
  stage: string;
  accountId: string;
  apiId: string;
  domainName: string;
  /** The route's `{name}` segments, decoded (`/v1/loader/stub/{project_id}`); none for a route without any. */
  pathParameters?: Record<string, string>;
}

/**
 * The one builder of 2.0 events: the local gateway makes the loader routes' events with it, and so do the tests and
 * the bench. Cookies are their own field in 2.0, not a header.
 */
export function buildHttpApiEvent(parts: HttpApiEventParts): APIGatewayProxyEventV2 {
  const headers = new Map<string, string>();
  const cookies: string[] = [];
  for (const [name, value] of parts.headerPairs) {
    const lower = name.toLowerCase();
    if (lower === 'cookie')
      cookies.push(
        ...value
          .split(';')
          .map((cookie) => cookie.trim())
          .filter(Boolean),
      );
    else headers.set(lower, headers.has(lower) ? `${headers.get(lower)},${value}` : value);
  }
  const query = new URLSearchParams(parts.rawQueryString);
  const queryStringParameters = new Map<string, string>();
  for (const [name, value] of query) queryStringParameters.set(name, queryStringParameters.has(name) ? `${queryStringParameters.get(name)},${value}` : value);
  return {
    version: '2.0',
    routeKey: `${parts.method} ${parts.routePath}`,
    rawPath: parts.rawPath,
    rawQueryString: parts.rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers: Object.fromEntries(headers),
    ...(queryStringParameters.size > 0 ? { queryStringParameters: Object.fromEntries(queryStringParameters) } : {}),
    ...(parts.pathParameters && Object.keys(parts.pathParameters).length > 0 ? { pathParameters: parts.pathParameters } : {}),
    requestContext: {
      accountId: parts.accountId,
      apiId: parts.apiId,
      domainName: parts.domainName,
      domainPrefix: parts.domainName.split('.')[0] ?? parts.domainName,
      http: { method: parts.method, path: parts.rawPath, protocol: 'HTTP/1.1', sourceIp: parts.sourceIp, userAgent: headers.get('user-agent') ?? '' },
      requestId: parts.requestId,
      routeKey: `${parts.method} ${parts.routePath}`,
      stage: parts.stage,
      time: httpApiTime(parts.timeEpoch),
      timeEpoch: parts.timeEpoch,
    },
    ...(parts.body !== null ? { body: parts.body } : {}),
    isBase64Encoded: parts.isBase64Encoded,
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `requestContext.time` as HTTP APIs write it: `24/Nov/2026:10:22:23 +0000`. */
function httpApiTime(epochMs: number): string {
  const at = new Date(epochMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(at.getUTCDate())}/${MONTHS[at.getUTCMonth()]}/${at.getUTCFullYear()}:${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())} +0000`;
}

/** What a test or the bench says of one loader request; the rest is what the deployed HTTP API fills in. */
export interface LoaderRequestParts {
  route: { method: string; path: string };
  body: string | null;
  headers?: Record<string, string>;
  sourceIp: string;
  requestId: string;
  timeEpoch: number;
}

/** The 2.0 event of a JSON request to a loader route on the HTTP API's default endpoint. */
export function buildLoaderEvent(parts: LoaderRequestParts): APIGatewayProxyEventV2 {
  return buildHttpApiEvent({
    method: parts.route.method,
    routePath: parts.route.path,
    rawPath: parts.route.path,
    rawQueryString: '',
    headerPairs: Object.entries(parts.headers ?? { 'Content-Type': 'application/json' }),
    body: parts.body,
    isBase64Encoded: false,
    requestId: parts.requestId,
    timeEpoch: parts.timeEpoch,
    sourceIp: parts.sourceIp,
    stage: '$default',
    accountId: '123456789012',
    apiId: 'a1b2c3d4e5',
    domainName: 'a1b2c3d4e5.execute-api.us-east-1.amazonaws.com',
  });
}
