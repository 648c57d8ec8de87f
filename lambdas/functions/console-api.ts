import { createS3Client, S3ScriptStore } from '#adapters/script-store';
import { S3UploadStaging } from '#adapters/upload-staging';
import { usagePlanTokenKeys } from '#dashboard/context';
import { consoleStoresOf, createConsoleHandler } from '#http/console-api';
import { awsApiDeps, awsStores, lazyHandler, settings } from '#runtime/aws';

/**
 * The publisher console's API (`/console/api/*`, lambdas/http/console-api.ts): one function behind the console's
 * origin, payload format 2.0 as a function URL or an HTTP API sends it. Tokens created in the console get their
 * API key on the usage plan, and a revoke flushes the authorizer cache, exactly as the dashboard's token commands.
 */
export const handler = lazyHandler(() => {
  const s3 = createS3Client();
  const tokenKeys = usagePlanTokenKeys(
    {
      kind: 'aws',
      tableName: settings.tableName(),
      stackName: '',
      gateway: { usagePlanId: settings.usagePlanId(), restApiId: settings.restApiId(), stageName: settings.stageName() },
    },
    async () => ({}),
  );
  return createConsoleHandler({
    ...awsApiDeps(),
    stores: consoleStoresOf(awsStores()),
    scripts: new S3ScriptStore(s3, settings.scriptBucket()),
    staging: new S3UploadStaging(s3, settings.scriptBucket()),
    tokenKeys,
    discordApiBase: settings.discordApiBase(),
    loaderBaseUrl: settings.loaderBaseUrl(),
    consoleOrigin: settings.consoleOrigin(),
    originSecret: settings.originSecret(),
  });
});
