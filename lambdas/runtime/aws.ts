import { Logger } from '@aws-lambda-powertools/logger';
import { createDocumentClient } from '#adapters/client';
import { createStores, type Stores } from '#adapters/stores';
import { unixSeconds } from '#domain/model';
import type { KeySecret } from '#domain/ports';
import { type ApiDeps, createApiHandler, type Endpoint } from '#http/api-handler';

/**
 * The AWS Lambda runtime's dependencies, built once per container on first use: the one module that reads
 * `process.env` (the settings the CDK stack gives each function). Handlers, the local stack and the tests are
 * built from dependencies passed in; only the deployed entry points come here for theirs.
 */

/** A setting the stack gives the function; its absence is a deployment error, said at the first invocation. */
function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** A setting only some deployments give; undefined when absent. */
const optionalSetting = (name: string): string | undefined => process.env[name] || undefined;

export const settings = {
  tableName: () => setting('TABLE_NAME'),
  queueUrl: () => setting('QUEUE_URL'),
  /** The loader check's telemetry queue, which the ingest function consumes. */
  telemetryQueueUrl: () => setting('TELEMETRY_QUEUE_URL'),
  deadLetterQueueUrl: () => setting('DEAD_LETTER_QUEUE_URL'),
  /** The bucket holding each version's script (the loader function reads it). */
  scriptBucket: () => setting('SCRIPT_BUCKET'),
  claimStaleAfterSeconds: () => Number(setting('CLAIM_STALE_AFTER_SECONDS')),
  /** Discord's API unless a test stack points deliveries elsewhere. */
  discordApiBase: () => setting('DISCORD_API_BASE'),
  /** The Secrets Manager secret order keys derive from (docs/selling-keys.md). */
  keySecretArn: () => setting('KEY_SECRET_ARN'),
  /** The front door's secret origin header value (lib/constructs/front-door.ts); absent on a stack without one. */
  originSecret: () => optionalSetting('ORIGIN_VERIFY_SECRET'),
  /** The loader routes' base URL (the stack's LoaderUrl), for the console's hosted-stub line. */
  loaderBaseUrl: () => setting('LOADER_BASE_URL'),
  /** What a token created in the console is registered with: the usage plan, and the stage whose cache a revoke flushes. */
  usagePlanId: () => setting('USAGE_PLAN_ID'),
  restApiId: () => setting('REST_API_ID'),
  stageName: () => setting('STAGE_NAME'),
  /** The console's origin when it is known at deploy time (a custom domain); else the request's forwarded host. */
  consoleOrigin: (): string | undefined => process.env.CONSOLE_ORIGIN || undefined,
};

/**
 * The loader routes' base URL a request came through: `https://` and the domain its front door was called by (the
 * stack's HTTP API or the custom domain), or LOADER_BASE_URL when a front door in between (a CDN) names another.
 */
export const awsLoaderBaseUrl = (event: { requestContext: { domainName?: string } }): string =>
  process.env.LOADER_BASE_URL || `https://${event.requestContext.domainName ?? ''}`;

let stores: Stores | undefined;

/** The stores on the function's table, with one DynamoDB client per container. */
export const awsStores = (): Stores => (stores ??= createStores(createDocumentClient(), settings.tableName()));
export const awsLogger = (serviceName: string): Logger => new Logger({ serviceName });
export const clock = (): number => unixSeconds();

/** A handler built on its first invocation, so importing an entry point (in tests, locally, at synth) needs no setting. */
export function lazyHandler<Handler extends (...args: never[]) => unknown>(build: () => Handler): Handler {
  let built: Handler | undefined;
  return ((...args: Parameters<Handler>) => {
    built ??= build();
    return built(...args);
  }) as Handler;
}

/**
 * The key secret, fetched once per container and only when an issue call with an order id first needs it, so no
 * other route (and no order-less issue) waits on Secrets Manager, nor loads its SDK at a cold start.
 */
let keySecret: Promise<Uint8Array> | undefined;
export const awsKeySecret: KeySecret = {
  get: () => {
    keySecret ??= import('@aws-sdk/client-secrets-manager')
      .then(({ GetSecretValueCommand, SecretsManagerClient }) =>
        new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: settings.keySecretArn() })),
      )
      .then(({ SecretString }) => {
        if (!SecretString) throw new Error('The key secret has no SecretString');
        return Buffer.from(SecretString, 'utf8');
      });
    return keySecret.catch((error: unknown) => {
      // A failed fetch is not kept: the next call tries again.
      keySecret = undefined;
      throw error;
    });
  },
};

export const awsApiDeps = (): ApiDeps => ({ stores: awsStores(), keySecret: awsKeySecret, now: clock, logger: awsLogger('developer-api') });

/** An API route's deployed handler. */
export const awsApiHandler = <Query, Body, Result>(endpoint: Endpoint<Query, Body, Result>) => lazyHandler(() => createApiHandler(endpoint, awsApiDeps()));
