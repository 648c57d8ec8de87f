import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Caller } from '#domain/model';

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
    multiValueQueryStringParameters:
      parts.multiValueQueryStringParameters ?? (parts.queryStringParameters ? asLists(parts.queryStringParameters) : null),
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
      identity: {
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
        sourceIp: parts.sourceIp,
        user: null,
        userAgent,
        userArn: null,
      },
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
