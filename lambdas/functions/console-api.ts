import { createS3Client, S3ScriptStore } from '#adapters/script-store';
import { presigningS3Client, S3UploadStaging } from '#adapters/upload-staging';
import { usagePlanTokenKeys } from '#adapters/usage-plan-token-keys';
import { blacklistOf } from '#domain/shops/receive';
import { consoleStoresOf, createConsoleHandler } from '#http/console-api';
import { awsApiDeps, awsStores, lazyHandler, readOriginSecrets, settings } from '#runtime/aws';

/**
 * The publisher console's API (`/console/api/*`, lambdas/http/console-api.ts): one function behind the console's
 * origin, payload format 2.0 as a function URL or an HTTP API sends it. Tokens created in the console get their
 * API key on the usage plan, and a revoke flushes the authorizer cache, exactly as the dashboard's token commands
 * (the same adapter, whose API Gateway client is loaded only when a token is created or revoked).
 */
// At the container's init: none until the stack gives the console function the secret (sign-in then counts the
// viewer's address, not CloudFront's).
const originSecrets = await readOriginSecrets();

export const handler = lazyHandler(() => {
  const s3 = createS3Client();
  const tokenKeys = usagePlanTokenKeys({
    gateway: { usagePlanId: settings.usagePlanId(), restApiId: settings.restApiId(), stageName: settings.stageName() },
    fail: (message) => new Error(message),
  });
  const stores = awsStores();
  return createConsoleHandler({
    ...awsApiDeps(),
    stores: consoleStoresOf(stores),
    scripts: new S3ScriptStore(s3, settings.scriptBucket()),
    staging: new S3UploadStaging(presigningS3Client(), settings.scriptBucket()),
    tokenKeys,
    discordApiBase: settings.discordApiBase(),
    loaderBaseUrl: settings.loaderBaseUrl(),
    consoleOrigin: settings.consoleOrigin(),
    originSecrets,
    isBuyerBlacklisted: blacklistOf(stores.blacklist),
  });
});
