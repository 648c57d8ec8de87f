import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createS3Client, S3ScriptStore } from '#adapters/script-store';
import { SqsMessageSender } from '#adapters/sqs-queue';
import { QueueTelemetrySink } from '#adapters/telemetry-queue';
import { AddressTally } from '#domain/address-tally';
import { FullCopyTally } from '#domain/full-copies';
import { RefusalMemory } from '#domain/refusal-memory';
import { ScriptCache } from '#domain/scripts';
import { RefusalTally } from '#domain/unsigned-refusals';
import { createScriptHandler, SCRIPT_CACHE_BYTES } from '#http/loader-script';
import { createStubHandler } from '#http/loader-stub';
import { createValidateHandler } from '#http/loader-validate';
import { publicRouteOf, SCRIPT_ROUTE, STUB_ROUTE } from '#http/public-routes';
import { awsLoaderBaseUrl, awsLogger, awsStores, clock, lazyHandler, readOriginSecrets, settings } from '#runtime/aws';
import { awsSqs } from '#runtime/aws-sqs';
// Bundled as text (SERVICE_BUNDLING's loader): the stub is part of the function, not a file it reads.
import stubSource from '../../examples/roblox-loader.luau';

/**
 * The loader's function: both key-check routes (`/v1/loader/validate` and `/v1/loader/script`) make the same key
 * check, so they share one function and its reserved concurrency, behind their own HTTP API (payload format 2.0),
 * which names the route in the event's `routeKey`. The hosted stub (`GET /v1/loader/stub/{project_id}`), which
 * every buyer's run fetches first, is loader traffic too and is served here.
 */
// At the container's init (cold start), once: the checks that follow compare with what it read.
const originSecrets = await readOriginSecrets();

export const handler = lazyHandler(() => {
  const logger = awsLogger('loader-check');
  const stores = awsStores();
  const deps = {
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: new QueueTelemetrySink(new SqsMessageSender(awsSqs(), settings.telemetryQueueUrl()), logger),
    now: clock,
    logger,
    originSecrets,
  };
  const validate = createValidateHandler(deps);
  const script = createScriptHandler({
    ...deps,
    versions: stores.scriptVersions,
    scripts: new S3ScriptStore(createS3Client(), settings.scriptBucket()),
    cache: new ScriptCache(SCRIPT_CACHE_BYTES),
    fullCopies: new FullCopyTally(),
  });
  const stub = createStubHandler({ ...deps, projects: stores.projects, refusals: new RefusalTally(), stubSource, loaderBaseUrl: awsLoaderBaseUrl });
  return (event: APIGatewayProxyEventV2, context: Context) => {
    const route = publicRouteOf(event.routeKey);
    if (route === STUB_ROUTE) return stub(event, context);
    return route === SCRIPT_ROUTE ? script(event, context) : validate(event, context);
  };
});
