import type { Logger } from '@aws-lambda-powertools/logger';
import { checkKey, type KeyCheckDeps, validateAnswer } from '#domain/key-check';
import type { HttpApiHandler } from './http-api';
import { loaderHandler } from './loader-chain';
import type { OriginSecrets } from './origin-verify';
import { jsonResponse } from './responses';

export interface LoaderDeps extends KeyCheckDeps {
  now: () => number;
  logger: Logger;
  /** The front door's origin secrets (origin-verify.ts); absent where there is none. */
  originSecrets?: OriginSecrets;
}

/**
 * `POST /v1/loader/validate`, public: the buyer's loader sends its key and gets 200 with whether it may run,
 * whatever the key's state; a malformed request is a 400 naming the field, a limit passed a 429 with
 * `Retry-After`. No bearer token, so never a 401.
 */
export function createValidateHandler(deps: LoaderDeps): HttpApiHandler {
  return loaderHandler(
    deps.logger,
    async (request, event) => jsonResponse(200, validateAnswer(await checkKey(deps, request, event.requestContext.identity.sourceIp, deps.now()))),
    deps.originSecrets,
  );
}
