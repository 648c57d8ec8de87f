import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySecretSealer } from '#adapters/secret-sealer';
import { classifySearch, mostSelectiveWord } from '#domain/key-search';
import { addShop, mapShopProducts } from '#domain/shops/connections';
import { emailSha256 } from '#domain/shops/receipts';
import { type IsBuyerBlacklisted, NO_BLACKLIST, replayReceipt } from '#domain/shops/receive';
import { type ShopProvider, shopSignatureHeaders } from '#domain/shops/signatures';
import { SHOP_ROUTE } from '#http/public-routes';
import { createShopReceiverHandler } from '#http/shop-receiver';
import { memoryKeySecret } from '#local/key-secret';
import { buildHttpApiEvent } from '#local/proxy-event';
import { createTestTable, FIXED_NOW, lambdaContext, type SeededOwner, scanTable, seedOwner, type TestTable } from '#test-support/fixtures';

/**
 * The shop receiver on DynamoDB Local (DESIGN.md, "Shops deliver keys by themselves"): each provider's paid order
 * issues quantity × keys per unit exactly once across retries, refunds and disputes ban the order's keys and a
 * dispute won unbans them, and refusals (signature, connection, mapping, blacklist) issue nothing.
 */

const SECRET = 'shop-signing-secret-0001';
const EMAIL = 'Buyer@Example.com';
const keySecret = memoryKeySecret();
const sealer = keySecretSealer(keySecret);
const logger = new Logger({ serviceName: 'shops-test', logLevel: 'SILENT' });

let table: TestTable;
let owner: SeededOwner;

beforeAll(async () => {
  table = await createTestTable('shops');
  owner = await seedOwner(table.stores);
});

afterAll(async () => {
  await table?.drop();
});

function receiver(isBuyerBlacklisted: IsBuyerBlacklisted = NO_BLACKLIST, now = FIXED_NOW) {
  const { shops, keys, projects, audit } = table.stores;
  return createShopReceiverHandler({ shops, keys, projects, audit, keySecret, sealer, isBuyerBlacklisted, now: () => now, logger });
}

async function connect(provider: ShopProvider, products: Record<string, string>) {
  const projectId = await table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: `Shop ${provider}`, plan: 'business', now: FIXED_NOW });
  const view = await addShop(table.stores.shops, sealer, { projectId, provider, secret: SECRET, products }, FIXED_NOW);
  if (!view) throw new Error('no connection');
  return view;
}

function shopEvent(connectionId: string, body: string, headers: Record<string, string>): APIGatewayProxyEventV2 {
  return buildHttpApiEvent({
    method: 'POST',
    routePath: SHOP_ROUTE.path,
    rawPath: `/v1/shops/${connectionId}`,
    rawQueryString: '',
    headerPairs: Object.entries({ 'Content-Type': 'application/json', ...headers }),
    body,
    isBase64Encoded: false,
    requestId: `req-${Math.random().toString(36).slice(2)}`,
    timeEpoch: FIXED_NOW * 1000,
    sourceIp: '203.0.113.9',
    stage: '$default',
    accountId: '123456789012',
    apiId: 'a1b2c3d4e5',
    domainName: 'a1b2c3d4e5.execute-api.us-east-1.amazonaws.com',
    pathParameters: { connection_id: connectionId },
  });
}

async function send(provider: ShopProvider, connectionId: string, body: object, extra: Record<string, string> = {}, handler = receiver()) {
  const text = JSON.stringify(body);
  const response = await handler(shopEvent(connectionId, text, { ...shopSignatureHeaders(provider, SECRET, text, FIXED_NOW), ...extra }), lambdaContext());
  return { status: response.statusCode, body: response.body, contentType: String(response.headers?.['Content-Type'] ?? '') };
}

const sellAuthItem = (invoice: number, productId: number, quantity: number) => ({
  event: 'INVOICE.ITEM.DELIVER-DYNAMIC',
  id: invoice,
  email: EMAIL,
  customer: { id: 501 },
  item: { id: 7, product_id: productId, quantity },
});

const stripePaid = (paymentIntent: string, priceId: string, quantity = 1) => ({
  id: `evt_${paymentIntent}`,
  type: 'checkout.session.completed',
  data: {
    object: {
      id: `cs_test_${paymentIntent}`,
      payment_status: 'paid',
      payment_intent: paymentIntent,
      customer: 'cus_1',
      customer_details: { email: EMAIL },
      metadata: { price_id: priceId, quantity: String(quantity) },
    },
  },
});

const projectKeyCount = async (projectId: string) => (await table.stores.projects.getProject(projectId))?.keyCount;

describe('shop receiver', () => {
  it('SellAuth: quantity × keys per unit as plain text, the same keys on a retry and nothing more issued', async () => {
    const shop = await connect('sellauth', { '77': '30d,machines=1,keys=2' });
    const first = await send('sellauth', shop.connectionId, sellAuthItem(10042, 77, 2), { 'Idempotency-Key': 'idem-1' });
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/plain/);
    const keys = first.body.split('\n');
    expect(keys).toHaveLength(4);
    expect(await projectKeyCount(shop.projectId)).toBe(4);

    const retry = await send('sellauth', shop.connectionId, sellAuthItem(10042, 77, 2), { 'Idempotency-Key': 'idem-1' });
    expect(retry.body.split('\n')).toEqual(keys);
    expect(await projectKeyCount(shop.projectId)).toBe(4);

    // Each key carries the order, the email's hash and the customer, and the terms.
    const log = await table.stores.shops.receipts(shop.projectId, 10);
    expect(log.map((entry) => entry.result)).toEqual(['repeated', 'issued']);
    const [keyId] = log[1]?.keyIds ?? [];
    const key = await table.stores.keys.getKey(shop.projectId, keyId ?? '');
    expect(key?.note).toBe(`shop sellauth order 10042 email ${emailSha256(EMAIL)} customer 501`);
    expect(key?.max_fingerprints).toBe(1);
    const audit = await table.stores.audit.list({ projectId: shop.projectId }, 10);
    expect(audit.filter((entry) => entry.action === 'shop.deliver').map((entry) => entry.source)).toEqual(['shop', 'shop']);

    // Support finds the buyer's keys with the console's search, by email and by order id.
    for (const text of [EMAIL, '10042']) {
      const search = classifySearch(text);
      if (search?.kind !== 'note') throw new Error(`${text} is not a note search`);
      const found = await table.stores.console.keyIdsWithNoteWord(shop.projectId, mostSelectiveWord(search.words), 100);
      expect(found.toSorted(), text).toEqual([...(log[1]?.keyIds ?? [])].sort());
    }
  });

  it('a wrong, missing or stale signature and an unknown connection are 401 and write nothing', async () => {
    const shop = await connect('sellauth', { '77': '30d' });
    const before = await scanTable(table);
    const text = JSON.stringify(sellAuthItem(1, 77, 1));
    const stale = shopSignatureHeaders('sellauth', SECRET, text, FIXED_NOW - 301);
    const cases = [
      shopEvent(shop.connectionId, text, shopSignatureHeaders('sellauth', 'another-secret-1', text, FIXED_NOW)),
      shopEvent(shop.connectionId, text, {}),
      shopEvent(shop.connectionId, text, stale),
      shopEvent('shop_ffffffffffffffffffff', text, shopSignatureHeaders('sellauth', SECRET, text, FIXED_NOW)),
      shopEvent('../../etc', text, shopSignatureHeaders('sellauth', SECRET, text, FIXED_NOW)),
    ];
    for (const event of cases) {
      const response = await receiver()(event, lambdaContext());
      expect(response.statusCode).toBe(401);
      expect(JSON.parse(response.body)).toEqual({ error: 'Invalid or missing shop signature' });
    }
    expect(await scanTable(table)).toEqual(before);
  });

  it('malformed JSON or a missing field is a 400 naming it, logged without the body, nothing issued', async () => {
    const shop = await connect('sellix', { prod_1: '7d' });
    const response = await send('sellix', shop.connectionId, { event: 'order:paid', data: { uniqid: 'ord1', quantity: 1 } });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).error).toMatch(/data\.product_id/);
    const [entry] = await table.stores.shops.receipts(shop.projectId, 1);
    expect(entry?.result).toBe('malformed');
    expect(await projectKeyCount(shop.projectId)).toBe(0);
  });

  it('an unmapped product is a 422 the shop shows, logged; replayed after the mapping is added it delivers', async () => {
    const shop = await connect('sellapp', { '900': '30d' });
    const body = { invoice_id: 555, product_variant_id: 901, quantity: 1, customer_email: EMAIL };
    const refused = await send('sellapp', shop.connectionId, body);
    expect(refused.status).toBe(422);
    expect(JSON.parse(refused.body).error).toMatch(/Product 901 is not mapped/);
    expect(await projectKeyCount(shop.projectId)).toBe(0);
    const [failed] = await table.stores.shops.receipts(shop.projectId, 1);
    expect(failed?.result).toBe('unmapped');
    expect(JSON.stringify(failed)).not.toContain(EMAIL);

    await mapShopProducts(table.stores.shops, shop.connectionId, { '901': 'lifetime' });
    const replayed = await replayReceipt(receiverDeps(), shop.projectId, failed?.receiptId ?? '', { now: FIXED_NOW + 60, requestId: 'replay-1' });
    expect(replayed.result).toBe('issued');
    expect(replayed.key_ids).toHaveLength(1);
    // The shop's own retry now answers the same key.
    const retry = await send('sellapp', shop.connectionId, body);
    expect(retry.status).toBe(200);
    expect(await projectKeyCount(shop.projectId)).toBe(1);
  });

  it('a blacklisted buyer is refused with a sentence the shop shows, nothing issued', async () => {
    const shop = await connect('stripe', { price_1: '30d' });
    const blacklisted: IsBuyerBlacklisted = async (_projectId, buyer) => buyer.emailSha256 === emailSha256(EMAIL);
    const response = await send('stripe', shop.connectionId, stripePaid('pi_black', 'price_1'), {}, receiver(blacklisted));
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body).error).toMatch(/needs the publisher/);
    expect(await projectKeyCount(shop.projectId)).toBe(0);
    expect((await table.stores.shops.receipts(shop.projectId, 1))[0]?.result).toBe('refused');
  });

  it("Stripe: paid delivers JSON, a refund bans the order's keys `refunded`, a dispute bans `disputed`, a dispute won unbans", async () => {
    const shop = await connect('stripe', { price_1: '30d' });
    const paid = await send('stripe', shop.connectionId, stripePaid('pi_1', 'price_1', 2));
    expect(paid.status).toBe(200);
    expect(JSON.parse(paid.body)).toEqual({ ok: true, keys: 2, repeated: false });
    const keyIds = await table.stores.shops.orderKeyIds(shop.connectionId, 'pi_1');
    expect(keyIds).toHaveLength(2);
    const bans = async () => Promise.all(keyIds.map(async (id) => (await table.stores.keys.getKey(shop.projectId, id))?.ban?.reason ?? null));

    await send('stripe', shop.connectionId, { id: 'evt_r', type: 'charge.refunded', data: { object: { payment_intent: 'pi_1' } } });
    expect(await bans()).toEqual(['refunded', 'refunded']);
    await send('stripe', shop.connectionId, { id: 'evt_d', type: 'charge.dispute.created', data: { object: { payment_intent: 'pi_1' } } });
    expect(await bans()).toEqual(['disputed', 'disputed']);
    await send('stripe', shop.connectionId, { id: 'evt_w', type: 'charge.dispute.closed', data: { object: { payment_intent: 'pi_1', status: 'won' } } });
    expect(await bans()).toEqual([null, null]);
    const audit = await table.stores.audit.list({ projectId: shop.projectId }, 10);
    expect(audit.map((entry) => entry.action)).toEqual(['shop.unban', 'shop.ban', 'shop.ban', 'shop.deliver']);
  });

  it('Sellix: a cart delivers each product once; an unpaid session of Stripe is ignored', async () => {
    const shop = await connect('sellix', { a: '7d', b: '30d,keys=3' });
    const cart = {
      event: 'order:paid',
      data: {
        uniqid: 'cart1',
        customer_email: EMAIL,
        cart: {
          products: [
            { uniqid: 'a', unit_quantity: 1 },
            { uniqid: 'b', unit_quantity: 2 },
          ],
        },
      },
    };
    const response = await send('sellix', shop.connectionId, cart, { 'X-Sellix-Event': 'order:paid' });
    expect(JSON.parse(response.body)).toMatchObject({ ok: true, keys: 7 });
    expect(await projectKeyCount(shop.projectId)).toBe(7);

    const stripe = await connect('stripe', { price_1: '30d' });
    const unpaid = stripePaid('pi_u', 'price_1');
    unpaid.data.object.payment_status = 'unpaid';
    expect(JSON.parse((await send('stripe', stripe.connectionId, unpaid)).body)).toMatchObject({ ok: true });
    expect(await projectKeyCount(stripe.projectId)).toBe(0);
  });
});

function receiverDeps() {
  const { shops, keys, projects, audit } = table.stores;
  return { shops, keys, projects, audit, keySecret, sealer, isBuyerBlacklisted: NO_BLACKLIST };
}
