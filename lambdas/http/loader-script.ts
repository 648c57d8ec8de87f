import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { deliverScript, type ScriptDelivery, type ScriptDeliveryDeps } from '#domain/scripts';
import type { LoaderScriptRefused } from '#schemas/loader';
import type { HttpApiHandler } from './http-api';
import { loaderHandler } from './loader-chain';
import type { OriginSecrets } from './origin-verify';
import { jsonResponse, SECURITY_HEADERS } from './responses';

export interface ScriptHandlerDeps extends ScriptDeliveryDeps {
  now: () => number;
  logger: Logger;
  /** The front door's origin secrets (origin-verify.ts); absent where there is none. */
  originSecrets?: OriginSecrets;
}

/**
 * Script bodies a container keeps, by bytes: twenty 5 MiB scripts or hundreds of typical ones, well inside the
 * function's 512 MB beside the runtime and one request's stamped copy.
 */
export const SCRIPT_CACHE_BYTES = 100 * 1024 * 1024;

/** The lowercase hex SHA-256 of the stamped body, on a 200 and on a 304 (examples/roblox-loader.luau checks its kept copy). */
const SCRIPT_SHA256_HEADER = 'X-Script-SHA256';

/** The 404 of a valid key whose project has no version yet: nothing to run, no use counted. */
export const NO_VERSION_YET = 'This script has no version yet: the publisher has not uploaded one';

/**
 * `POST /v1/loader/script`, public: the same body and check as `/v1/loader/validate`; a valid key gets the current
 * version's script stamped with its watermark (or 304 when `If-None-Match` names it), a refused key a 403 whose
 * `error` is a sentence for the buyer. Malformed is a 400 naming the field, a limit passed a 429. The body is
 * never logged: nothing here logs, and the error middleware logs the error, not the response.
 */
export function createScriptHandler(deps: ScriptHandlerDeps): HttpApiHandler {
  return loaderHandler(
    deps.logger,
    async (request, event) =>
      scriptResponse(await deliverScript(deps, request, event.requestContext.identity.sourceIp, deps.now(), event.headers['if-none-match'])),
    deps.originSecrets,
  );
}

/** The HTTP answer of each outcome (DESIGN.md, "Script delivery"). */
export function scriptResponse(delivery: ScriptDelivery): APIGatewayProxyResult {
  switch (delivery.outcome) {
    case 'served':
    case 'not_modified': {
      const headers = {
        ...SECURITY_HEADERS,
        'Content-Type': 'text/plain; charset=utf-8',
        'Cache-Control': 'private, no-store',
        ETag: delivery.etag,
        'X-Version-Id': delivery.script.versionId,
        'X-Version-Number': String(delivery.script.versionNumber),
        // On a 304 too: the loader runs a copy it kept only when the copy still hashes to this.
        [SCRIPT_SHA256_HEADER]: delivery.sha256,
      };
      return delivery.outcome === 'served' ? { statusCode: 200, headers, body: delivery.body } : { statusCode: 304, headers, body: '' };
    }
    case 'refused': {
      const refusal: LoaderScriptRefused = { error: delivery.sentence, valid: false, code: delivery.code };
      return jsonResponse(403, refusal);
    }
    case 'no_version':
      return jsonResponse(404, { error: NO_VERSION_YET });
  }
}
