import { RefusalTally } from '#domain/unsigned-refusals';
import { createInteractionsHandler } from '#http/discord-interactions';
import { awsLoaderBaseUrl, awsLogger, awsStores, clock, lazyHandler, readOriginSecrets } from '#runtime/aws';

/**
 * `POST /v1/discord/interactions/{project_id}` on the loader routes' HTTP API, in a function of its own: Discord
 * gives an interaction 3 seconds, so neither a flood of loader checks (whose function has its own reserved
 * concurrency) nor the loader's S3 and SQS clients may stand between a buyer and the reply. It reads the project's
 * link, verifies with node:crypto, and makes one conditional write per key; its bundle holds no more than that.
 */
// At the container's init (cold start), once: each request's address is trusted only with what it read.
const originSecrets = await readOriginSecrets();

export const handler = lazyHandler(() => {
  const stores = awsStores();
  return createInteractionsHandler({
    store: stores.discord,
    audit: stores.audit,
    blacklist: stores.blacklist,
    rateLimits: stores.rateLimits,
    refusals: new RefusalTally(),
    loaderBaseUrl: awsLoaderBaseUrl,
    now: clock,
    logger: awsLogger('discord'),
    originSecrets,
  });
});
