import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { LoaderCheckRequest } from '#schemas/loader';
import { type HttpApiHandler, onHttpApi } from './http-api';
import { type Internal, type JsonEvent, jsonBody, jsonErrors, lowercaseHeaders, parse, requestIdsInLogs } from './middlewares';
import type { OriginSecrets } from './origin-verify';

/**
 * The HTTP contract both loader routes share, in one middy chain: request ids in the logs, every failure JSON
 * `{"error"}` (a 400 naming the field, a 429 with `Retry-After`, never a 401), lowercase headers, the JSON body
 * parsed to the key check's request; then the route's own answer. Served on the HTTP API (payload format 2.0);
 * `originSecrets` are the front door's, under which the client address is the viewer's CloudFront forwards.
 */
export function loaderHandler(
  logger: Logger,
  answer: (request: LoaderCheckRequest, event: JsonEvent) => Promise<APIGatewayProxyResult>,
  originSecrets?: OriginSecrets,
): HttpApiHandler {
  const handler = middy<JsonEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(requestIdsInLogs(logger))
    .use(jsonErrors(logger))
    .use(lowercaseHeaders())
    .use(jsonBody())
    .handler((event) => answer(parse(LoaderCheckRequest, event.body), event));
  return onHttpApi(handler, originSecrets);
}
