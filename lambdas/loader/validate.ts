import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { checkKey, type KeyCheckDeps, validateAnswer } from '#domain/key-check';
import { type Internal, type JsonEvent, jsonBody, jsonErrors, lowercaseHeaders, parse, requestIdsInLogs } from '#http/middlewares';
import { type HttpApiHandler, onHttpApi } from '#http/http-api';
import { jsonResponse } from '#http/responses';
import { LoaderCheckRequest } from '#schemas/loader';

export interface LoaderDeps extends KeyCheckDeps {
  now: () => number;
  logger: Logger;
}

/**
 * `POST /v1/loader/validate`, public: the buyer's loader sends its key and gets 200 with whether it may run,
 * whatever the key's state; a malformed request is a 400 naming the field, a limit passed a 429 with
 * `Retry-After`. No bearer token, so never a 401.
 */
export function createValidateHandler(deps: LoaderDeps): HttpApiHandler {
  const handler = middy<JsonEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(requestIdsInLogs(deps.logger))
    .use(jsonErrors(deps.logger))
    .use(lowercaseHeaders())
    .use(jsonBody())
    .handler(async (event) => {
      const request = parse(LoaderCheckRequest, event.body);
      return jsonResponse(200, validateAnswer(await checkKey(deps, request, event.requestContext.identity.sourceIp, deps.now())));
    });
  return onHttpApi(handler);
}
