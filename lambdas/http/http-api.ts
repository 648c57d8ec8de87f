import { isIP } from 'node:net';
import type { APIGatewayEventIdentity, APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ProxyHandler } from './middlewares';
import { cameThroughFrontDoor, type OriginSecrets } from './origin-verify';

/**
 * The loader routes are served by an API Gateway HTTP API (payload format 2.0), the owner API by the REST API. The
 * middlewares and handlers read one event shape, the REST proxy event's; this is the one place a 2.0 event becomes
 * it, so no domain rule and no middleware knows which front door a request came through.
 */

/** A Lambda handler of an HTTP API route, payload format 2.0. A REST proxy result is a valid 2.0 result as it is. */
export type HttpApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResult>;

/** `<address>:<port>` of the viewer, set by CloudFront (an IPv6 address unbracketed, as `2001:db8::1:443`). */
export const VIEWER_ADDRESS_HEADER = 'cloudfront-viewer-address';

/**
 * The client's address: behind the front door every request comes from a CloudFront address, so the buyer's is the
 * one CloudFront forwards, believed only when the request carries the front door's secret (anyone can send the
 * header straight to the HTTP API). Without the secret, or with no front door, the connection's own address.
 */
export function clientAddressOf(event: APIGatewayProxyEventV2, originSecrets: OriginSecrets | undefined): string {
  const { sourceIp } = event.requestContext.http;
  if (!originSecrets || !cameThroughFrontDoor(event.headers, originSecrets)) return sourceIp;
  const viewer = event.headers[VIEWER_ADDRESS_HEADER];
  const address = viewer?.slice(0, Math.max(0, viewer.lastIndexOf(':'))).replace(/^\[(.*)\]$/, '$1');
  return address && isIP(address) ? address : sourceIp;
}

/**
 * The REST proxy event of a 2.0 event: the client's address (clientAddressOf), the headers as
 * the HTTP API passes them (names lowercase, repeats joined by commas), the body as sent (`isBase64Encoded` kept:
 * the body middleware decodes it), the route's path from `routeKey` (`POST /v1/loader/validate`).
 */
export function proxyEventOfHttpApi(event: APIGatewayProxyEventV2, originSecrets?: OriginSecrets): APIGatewayProxyEvent {
  const { http } = event.requestContext;
  const resource = event.routeKey.slice(event.routeKey.indexOf(' ') + 1);
  const headers = { ...event.headers } as Record<string, string>;
  return {
    resource,
    path: event.rawPath,
    httpMethod: http.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: (event.queryStringParameters as Record<string, string> | undefined) ?? null,
    multiValueQueryStringParameters: null,
    pathParameters: (event.pathParameters as Record<string, string> | undefined) ?? null,
    stageVariables: null,
    body: event.body ?? null,
    isBase64Encoded: event.isBase64Encoded,
    requestContext: {
      accountId: event.requestContext.accountId,
      apiId: event.requestContext.apiId,
      authorizer: null,
      domainName: event.requestContext.domainName,
      httpMethod: http.method,
      identity: callerIdentity(clientAddressOf(event, originSecrets), http.userAgent),
      path: http.path,
      protocol: http.protocol,
      requestId: event.requestContext.requestId,
      requestTimeEpoch: event.requestContext.timeEpoch,
      resourceId: event.routeKey,
      resourcePath: resource,
      stage: event.requestContext.stage,
    },
  };
}

/** A REST event's `identity` of a caller API Gateway knows only by address and user agent: no key, user or role. */
export function callerIdentity(sourceIp: string, userAgent: string | null): APIGatewayEventIdentity {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}

/** `handler`, built for REST proxy events, served on an HTTP API route (behind the front door when `originSecrets` are given). */
export const onHttpApi =
  (handler: ProxyHandler, originSecrets?: OriginSecrets): HttpApiHandler =>
  (event, context) =>
    handler(proxyEventOfHttpApi(event, originSecrets), context);
