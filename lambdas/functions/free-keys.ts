import { PROVIDER_BASES, providerVerifier } from '#adapters/free-key-providers';
import { keySecretSealer } from '#adapters/secret-sealer';
import { machineBlacklist } from '#domain/free-keys/flow';
import { PROVIDER_TIMEOUT_MS } from '#domain/free-keys/session';
import { createFreeKeyPageHandler } from '#http/free-key-page';
import { awsKeySecret, awsLogger, awsStores, clock, lazyHandler, readOriginSecrets } from '#runtime/aws';

/**
 * The free keys' key page (`GET /v1/free/{project_id}` and `/return`) in a function of its own: each return waits on
 * a provider's API (up to PROVIDER_TIMEOUT_MS), which must not hold the loader's reserved instances.
 */
// At the container's init (cold start), once: a session is bound to the address read with it.
const originSecrets = await readOriginSecrets();

export const handler = lazyHandler(() => {
  const stores = awsStores();
  return createFreeKeyPageHandler({
    store: stores.freeKeys,
    sealer: keySecretSealer(awsKeySecret, 'freeKeys'),
    verifier: providerVerifier({ bases: PROVIDER_BASES, timeoutMs: PROVIDER_TIMEOUT_MS, postbacks: stores.freeKeys }),
    rateLimits: stores.rateLimits,
    keys: stores.keys,
    blacklistProblem: machineBlacklist(stores.blacklist),
    now: clock,
    logger: awsLogger('free-keys'),
    originSecrets,
  });
});
