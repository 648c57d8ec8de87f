import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { receiveShopRequest, type ShopDeps } from '#domain/shops/receive';
import { type HttpApiHandler, onHttpApi } from './http-api';
import { type Internal, type JsonEvent, jsonErrors, lowercaseHeaders, MAX_BODY_BYTES, requestIdsInLogs } from './middlewares';
import { jsonResponse, SECURITY_HEADERS } from './responses';

export interface ShopReceiverDeps extends ShopDeps {
  now: () => number;
  logger: Logger;
}

/**
 * `POST /v1/shops/{connection_id}` (DESIGN.md, "Shops deliver keys by themselves"): the raw bytes as the shop sent
 * them go to the domain (lambdas/domain/shops/receive.ts), which checks the connection's signature before reading
 * anything else. The body is never logged; a body over the limit is refused before any read.
 */
export function createShopReceiverHandler(deps: ShopReceiverDeps): HttpApiHandler {
  const handler = middy<JsonEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(requestIdsInLogs(deps.logger))
    .use(jsonErrors(deps.logger))
    .use(lowercaseHeaders())
    .handler(async (event) => {
      const raw = typeof event.body === 'string' ? event.body : '';
      const body = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
      if (body.length > MAX_BODY_BYTES) return jsonResponse(413, { error: `The body is over ${MAX_BODY_BYTES} bytes` });
      const answer = await receiveShopRequest(deps, {
        connectionId: event.pathParameters?.connection_id ?? '',
        headers: event.headers,
        body,
        now: deps.now(),
        requestId: event.requestContext.requestId,
      });
      if ('json' in answer) return jsonResponse(answer.status, answer.json);
      // SellAuth and Sell.app show this text to the buyer as the order's delivery: the keys, one a line.
      return { statusCode: answer.status, headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' }, body: answer.text };
    });
  return onHttpApi(handler);
}
