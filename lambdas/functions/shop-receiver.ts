import { keySecretSealer } from '#adapters/secret-sealer';
import { blacklistOf } from '#domain/shops/receive';
import { createShopReceiverHandler } from '#http/shop-receiver';
import { awsKeySecret, awsLogger, awsStores, clock, lazyHandler } from '#runtime/aws';

/**
 * `POST /v1/shops/{connection_id}` on the public routes' HTTP API, in a function of its own: SellAuth gives an answer
 * 10 seconds and shows it to the buyer, so neither a flood of loader checks nor the loader's S3 and SQS clients may
 * stand in between. It reads the connection, opens its sealed secret with the key secret, verifies with node:crypto
 * and issues as `POST …/keys` with an order id does.
 */
export const handler = lazyHandler(() => {
  const stores = awsStores();
  return createShopReceiverHandler({
    shops: stores.shops,
    keys: stores.keys,
    projects: stores.projects,
    audit: stores.audit,
    keySecret: awsKeySecret,
    sealer: keySecretSealer(awsKeySecret),
    isBuyerBlacklisted: blacklistOf(stores.blacklist),
    now: clock,
    logger: awsLogger('shop-receiver'),
  });
});
