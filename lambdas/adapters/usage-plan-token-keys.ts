import type { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { TokenLimitReached } from '#domain/errors';
import { AUTHORIZER_CACHE_SECONDS, SECOND_FLUSH_AFTER_SECONDS } from '#domain/tokens';

/**
 * A token at the gateway. In AWS the usage plan throttles by API key and the authorizer names the token's SHA-256
 * as the key, so each token needs an API key with that value on the usage plan (named by the token's id); and
 * API Gateway caches the authorizer's answers, so a revoke flushes the stage's cache. The local gateway has no
 * usage plan and no cache, so there both are nothing to do.
 */
export interface TokenKeys {
  /** Fails, before the command writes anything, when the gateway cannot be reached or is not the stack's. */
  check(): Promise<void>;
  register(token: { tokenHash: string; tokenId: string }): Promise<void>;
  /** After the table revoked the token: delete its API key and flush the stage's authorizer cache (twice, see SECOND_FLUSH_AFTER_SECONDS). */
  revoke(tokenId: string): Promise<void>;
}

/** The stack outputs a token's API key needs: the usage plan for new tokens' keys, the stage whose cache a revoke flushes. */
export interface GatewayOutputs {
  usagePlanId: string;
  restApiId: string;
  stageName: string;
}

export interface UsagePlanTokenKeysOptions {
  /** The outputs when known already; else `locate` finds them at `check()`. */
  gateway?: GatewayOutputs;
  locate?: () => Promise<GatewayOutputs>;
  /** The error a failure is said with (the admin CLI's CommandError, which it prints as one line and exit code 1). */
  fail: (message: string) => Error;
  sleep?: (ms: number) => Promise<void>;
}

type ApiGatewaySdk = typeof import('@aws-sdk/client-api-gateway');

/**
 * API keys on the deployed usage plan, and the stage's authorizer cache. Each API key is named by its token's id, so a
 * revoke finds it by name (GetApiKeys' `nameQuery` matches a prefix, so the name is compared exactly here). The SDK
 * is loaded on the first call that needs it: a function that seldom creates or revokes a token (the console's) does
 * not load it at its cold start.
 */
export function usagePlanTokenKeys({ gateway: known, locate, fail, sleep = wait }: UsagePlanTokenKeysOptions): TokenKeys & { close(): void } {
  let gateway = known;
  let created: APIGatewayClient | undefined;
  let loaded: Promise<{ sdk: ApiGatewaySdk; client: APIGatewayClient }> | undefined;
  const api = () =>
    (loaded ??= import('@aws-sdk/client-api-gateway').then((sdk) => {
      created = new sdk.APIGatewayClient({});
      return { sdk, client: created };
    }));
  const checked = (): GatewayOutputs => {
    if (!gateway) throw fail('Token keys were not checked before use');
    return gateway;
  };
  return {
    async check() {
      gateway ??= await locate?.();
      const { usagePlanId } = checked();
      const { sdk, client } = await api();
      await client.send(new sdk.GetUsagePlanCommand({ usagePlanId }));
    },
    async register({ tokenHash, tokenId }) {
      const { usagePlanId } = checked();
      const { sdk, client } = await api();
      let key: { id?: string };
      try {
        key = await client.send(
          new sdk.CreateApiKeyCommand({
            name: tokenId,
            description: 'Usage-plan key of a developer API token (value: SHA-256 of the token)',
            value: tokenHash,
            enabled: true,
          }),
        );
      } catch (error) {
        // A 4xx for the console as for the CLI, never its 500: the limit is the caller's to act on.
        if (error instanceof Error && error.name === 'LimitExceededException') throw new TokenLimitReached(apiKeyLimitSentence(oneLine(error)));
        throw error;
      }
      await client.send(new sdk.CreateUsagePlanKeyCommand({ usagePlanId, keyId: key.id, keyType: 'API_KEY' }));
    },
    async revoke(tokenId) {
      const { restApiId, stageName } = checked();
      const { sdk, client } = await api();
      const deleted = await failureOf(async () => {
        for (const id of await apiKeyIdsNamed(sdk, client, tokenId)) await client.send(new sdk.DeleteApiKeyCommand({ apiKey: id }));
      });
      // Even when the key could not be deleted: the flush is what stops the token at once.
      const flush = () => failureOf(() => client.send(new sdk.FlushStageAuthorizersCacheCommand({ restApiId, stageName })));
      let flushed = await flush();
      if (!flushed) {
        // An authorizer run that read the token before the revoke may cache its answer after the first flush.
        await sleep(SECOND_FLUSH_AFTER_SECONDS * 1000);
        flushed = await flush();
      }
      const keyLeft = `deleting its API key (named ${tokenId}) failed (${deleted}); delete it by hand, without the token it lets nothing through`;
      if (flushed) {
        throw fail(
          `Token ${tokenId} is revoked in the table, but flushing the authorizer cache of stage ${stageName} failed (${flushed}): it stops working within ${AUTHORIZER_CACHE_SECONDS} s, when the cached answer expires${deleted ? `; and ${keyLeft}` : ''}`,
        );
      }
      if (deleted) throw fail(`Token ${tokenId} is revoked and stopped, but ${keyLeft}`);
    },
    close: () => created?.destroy(),
  };
}

/**
 * API Gateway holds at most 10,000 API keys per account and Region ("Amazon API Gateway quotas",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html), and each token has one.
 */
const API_KEYS_PER_REGION = 10_000;

const apiKeyLimitSentence = (refusal: string) =>
  `API Gateway refused the token's API key (${refusal}): an account holds at most ${API_KEYS_PER_REGION.toLocaleString('en-US')} API keys per Region, one per token of this stack and any key of other APIs in the account. Nothing was written: revoke tokens no one uses (token revoke deletes their keys), or ask AWS to raise "API keys" for the Region (Service Quotas, Amazon API Gateway), then create the token again`;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The failure of `step` in one line, or undefined when it succeeded. */
async function failureOf(step: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await step();
    return undefined;
  } catch (error) {
    return oneLine(error);
  }
}

/** Ids of the API keys named exactly `name`, all pages read. */
async function apiKeyIdsNamed(sdk: ApiGatewaySdk, client: APIGatewayClient, name: string): Promise<string[]> {
  const ids: string[] = [];
  let position: string | undefined;
  do {
    const page = await client.send(new sdk.GetApiKeysCommand({ nameQuery: name, limit: 500, position }));
    ids.push(...(page.items ?? []).filter((key) => key.name === name && key.id).map((key) => key.id as string));
    position = page.position;
  } while (position);
  return ids;
}

/** An error's message in one line (an SDK's may span several), or its name when it has none. */
export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, ' ').trim() || (error instanceof Error ? error.name : 'Unknown error');
}
