import { Logger } from '@aws-lambda-powertools/logger';
import { localDynamoConfig } from '#adapters/client';
import { keySecretSealer } from '#adapters/secret-sealer';
import { createStores } from '#adapters/stores';
import { AUDIT_ACTIONS } from '#domain/audit';
import { issueKeys } from '#domain/selling-keys';
import { addShop } from '#domain/shops/connections';
import { NO_BLACKLIST } from '#domain/shops/receive';
import { type ShopProvider, shopSignatureHeaders } from '#domain/shops/signatures';
import { SHOP_ROUTE } from '#http/public-routes';
import { createShopReceiverHandler } from '#http/shop-receiver';
import { memoryKeySecret } from '#local/key-secret';
import { buildHttpApiEvent } from '#local/proxy-event';
import { DURATION_PRESETS } from '#schemas/requests';
import { capacityRecordingClient } from '#test-support/consumed-capacity';
import type { BenchTable } from './support/dynamodb';
import { createBusinessProject, lambdaContext, nowSeconds } from './support/fixtures';
import { type BenchResult, type Row, row } from './support/report';
import { median, percentile, round } from './support/stats';

const NAME = 'shops';

const SHOPS_BENCH_SETTINGS = {
  /** Answers timed per kind, one after another, in one warm container. */
  answersPerKind: 150,
  /** A shop's answer must come back within this, warm (DESIGN.md; SellAuth waits 10 s). */
  answerTargetMs: 2_000,
} as const;

const SECRET = 'bench-shop-secret-0001';

/**
 * The shop receiver (docs/selling-keys.md) warm on DynamoDB Local: a new SellAuth order item (2 keys issued), its
 * retry (the same keys answered), a Stripe refund (the order's keys banned), each with the DynamoDB requests it
 * makes; beside them, in the same run, the issue rule alone with the same body (what `POST …/keys` with an
 * `order_id` does), so the receiver's own cost (connection read, secret, signature, log, order's key ids) shows as
 * the difference.
 */
export async function benchShops(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = SHOPS_BENCH_SETTINGS;
  const keySecret = memoryKeySecret();
  const sealer = keySecretSealer(keySecret);
  const { projectId } = await createBusinessProject(table.stores, 'bench shops');
  const sellauth = await addShop(
    table.stores.shops,
    sealer,
    { projectId, provider: 'sellauth', secret: SECRET, products: { '77': '30d,keys=2' } },
    nowSeconds(),
  );
  const stripe = await addShop(table.stores.shops, sealer, { projectId, provider: 'stripe', secret: SECRET, products: { price_1: '30d' } }, nowSeconds());
  if (!sellauth || !stripe) throw new Error('no connection');

  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const stores = createStores(recorder.db, table.tableName);
  const handler = createShopReceiverHandler({
    shops: stores.shops,
    keys: stores.keys,
    projects: stores.projects,
    audit: stores.audit,
    keySecret,
    sealer,
    isBuyerBlacklisted: NO_BLACKLIST,
    now: nowSeconds,
    logger: new Logger({ serviceName: 'bench-shops', logLevel: 'ERROR' }),
  });
  const send = async (provider: ShopProvider, connectionId: string, body: object) => {
    const text = JSON.stringify(body);
    const event = buildHttpApiEvent({
      method: 'POST',
      routePath: SHOP_ROUTE.path,
      rawPath: `/v1/shops/${connectionId}`,
      rawQueryString: '',
      headerPairs: Object.entries({ 'Content-Type': 'application/json', ...shopSignatureHeaders(provider, SECRET, text, nowSeconds()) }),
      body: text,
      isBase64Encoded: false,
      requestId: `bench-${Math.random().toString(36).slice(2)}`,
      timeEpoch: Date.now(),
      sourceIp: '203.0.113.9',
      stage: '$default',
      accountId: '123456789012',
      apiId: 'bench',
      domainName: 'bench.example.com',
      pathParameters: { connection_id: connectionId },
    });
    const result = await handler(event, lambdaContext('shops'));
    if (result.statusCode !== 200) throw new Error(`the receiver answered ${result.statusCode}: ${result.body}`);
  };
  const order = (i: number) => ({
    event: 'INVOICE.ITEM.DELIVER-DYNAMIC',
    id: 100_000 + i,
    email: `b${i}@example.com`,
    item: { id: 1, product_id: 77, quantity: 1 },
  });
  const paid = (i: number) => ({
    id: `evt_p${i}`,
    type: 'checkout.session.completed',
    data: { object: { id: `cs_${i}`, payment_status: 'paid', payment_intent: `pi_${i}`, metadata: { price_id: 'price_1' } } },
  });
  for (let i = 0; i < s.answersPerKind; i++) await send('stripe', stripe.connectionId, paid(i));

  const project = await stores.projects.getProject(projectId);
  if (!project) throw new Error('no project');
  const trail = { log: stores.audit, actor: { tokenId: 'bench', requestId: 'bench', source: 'shop' as const } };
  const kinds: Record<string, (i: number) => Promise<void>> = {
    'new SellAuth order item (2 keys)': (i) => send('sellauth', sellauth.connectionId, order(i)),
    'its retry (same keys, none issued)': (i) => send('sellauth', sellauth.connectionId, order(i)),
    'Stripe refund (1 key banned)': (i) =>
      send('stripe', stripe.connectionId, { id: `evt_r${i}`, type: 'charge.refunded', data: { object: { payment_intent: `pi_${i}` } } }),
    'beside it: the issue rule alone, same body': async (i) => {
      const body = { count: 2, duration: DURATION_PRESETS['30d'], max_uses: null, max_fingerprints: null, order_id: `bench-${i}` };
      await issueKeys({ store: stores.keys, secret: keySecret }, project, body, nowSeconds(), trail, AUDIT_ACTIONS.shopDeliver);
    },
  };
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const [name, answer] of Object.entries(kinds)) {
    const times: number[] = [];
    const requests: number[] = [];
    for (let i = 0; i < s.answersPerKind; i++) {
      recorder.take();
      const started = performance.now();
      await answer(i);
      times.push(performance.now() - started);
      requests.push(recorder.take().requests);
    }
    const p50 = round(median(times), 2);
    const p99 = round(percentile(times, 99), 2);
    rows.push(
      row(NAME, `${name}: warm p50`, p50, 'ms'),
      row(NAME, `${name}: warm p99`, p99, 'ms', name.startsWith('beside') ? {} : { target: { op: '<=', limit: s.answerTargetMs } }),
      row(NAME, `${name}: DynamoDB requests`, Math.max(...requests), ''),
    );
    details[name] = { p50, p99, requests: Math.max(...requests) };
    log(`${NAME}: ${name} p50 ${p50} ms, p99 ${p99} ms, ${Math.max(...requests)} DynamoDB requests`);
  }
  return { rows, details: { settings: s, ...details } };
}
