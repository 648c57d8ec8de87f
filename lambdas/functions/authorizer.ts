import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import type { TokenStore } from '#domain/ports';
import { hashToken, limitsToContext, parseBearer } from '#domain/tokens';
import { awsLogger, awsStores, lazyHandler } from '#runtime/aws';

/** API Gateway turns exactly this error message into its UNAUTHORIZED (401) gateway response. */
export const UNAUTHORIZED = 'Unauthorized';

export interface AuthorizerDeps {
  tokens: TokenStore;
  logger: Logger;
}

/**
 * Bearer token → owner, token id and scope. The token is hashed at once and only the hash is looked up, passed
 * on and used as the usage-plan API key (apiKeySource AUTHORIZER), so the raw token is never stored, logged or
 * forwarded. The policy allows the whole API whatever the scope; each handler enforces the scope its route needs
 * (the scope travels in the context), so one cached answer still serves every route.
 */
export function createAuthorizer({ tokens, logger }: AuthorizerDeps) {
  return async (event: Pick<APIGatewayTokenAuthorizerEvent, 'authorizationToken' | 'methodArn'>): Promise<APIGatewayAuthorizerResult> => {
    const token = parseBearer(event.authorizationToken);
    if (!token) throw new Error(UNAUTHORIZED);
    const tokenHash = hashToken(token);
    const grant = await tokens.findToken(tokenHash);
    if (!grant) {
      logger.info('Unknown API token', { tokenHashPrefix: tokenHash.slice(0, 8) });
      throw new Error(UNAUTHORIZED);
    }
    const { ownerId, tokenId, scope } = grant;
    // A token's limits travel in the context like its scope, and each handler enforces them.
    return {
      principalId: ownerId,
      // The whole API, not just this method: API Gateway caches the policy per token for all routes.
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApiArn(event.methodArn) }],
      },
      context: { ownerId, tokenHash, tokenId, scope, ...limitsToContext(grant) },
      usageIdentifierKey: tokenHash,
    };
  };
}

/** arn:aws:execute-api:region:account:apiId/stage/METHOD/path → arn:aws:execute-api:region:account:apiId/stage/* */
export function wholeApiArn(methodArn: string): string {
  const [prefix = '', stage = '*'] = methodArn.split('/');
  return `${prefix}/${stage}/*`;
}

export const handler = lazyHandler(() => createAuthorizer({ tokens: awsStores().tokens, logger: awsLogger('developer-api-authorizer') }));
