import { randomBytes } from 'node:crypto';
import { keySecretSealer } from '#adapters/secret-sealer';
import { oneOf, UsageError, wholeNumber } from '#dashboard/args';
import type { Command } from '#dashboard/command';
import { CommandError, type DashboardContext } from '#dashboard/context';
import {
  addShop,
  addShopProblem,
  CONNECTION_ID_PATTERN,
  mapShopProducts,
  productsProblem,
  receiverUrlOf,
  type ShopConnectionView,
} from '#domain/shops/connections';
import { type ShopProvider, shopSignatureHeaders } from '#domain/shops/signatures';
import { projectId, requireProject } from './input';

/**
 * `shop add|list|remove|simulate` (DESIGN.md, "Shops deliver keys by themselves"): connect a project to a shop, and
 * locally send a request signed as the shop would, so a newcomer sees a key delivered without a shop.
 */

function publicBaseUrlOf(context: DashboardContext): string {
  if (!context.loaderBaseUrl)
    throw new CommandError("The service's public URL is unknown: run npm start, deploy the stack (output ServiceUrl), or set LOADER_BASE_URL");
  return context.loaderBaseUrl;
}

function sealerOf(context: DashboardContext) {
  if (!context.keySecret)
    throw new CommandError("The key secret that seals shop secrets is unknown: set KEY_SECRET_ARN to the stack's key secret (or use the console)");
  return keySecretSealer(context.keySecret);
}

export interface ShopAddInput {
  projectId: string;
  provider: string;
  secret: string;
  products: Record<string, string>;
}

/** `PRODUCT_ID=TERMS` flags as the mapping; a product given twice is an error. */
function productsOf(values: readonly string[]): Record<string, string> {
  const products: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf('=');
    if (at <= 0) throw new UsageError(`--product must be PRODUCT_ID=TERMS, e.g. 12345=30d,machines=1; got "${value}"`);
    const id = value.slice(0, at);
    if (Object.hasOwn(products, id)) throw new UsageError(`--product ${id} is given more than once`);
    products[id] = value.slice(at + 1);
  }
  return products;
}

export const shopAdd: Command<ShopAddInput, { connection_id: string; receiver_url: string }> = {
  name: 'shop add',
  flags: {
    project: { required: true, placeholder: 'ID' },
    provider: { required: true, placeholder: 'sellauth|sellapp|sellix|stripe' },
    secret: { required: true, placeholder: 'SECRET' },
    product: { required: true, kind: 'list', placeholder: 'PRODUCT_ID=TERMS' },
  },
  validate(flags) {
    const input = {
      projectId: projectId(flags),
      provider: flags.required('provider'),
      secret: flags.required('secret'),
      products: productsOf(flags.all('product')),
    };
    const problem = addShopProblem(input);
    // The rule names the fields; the command line names its flags. The secret itself is never repeated.
    if (problem) throw new UsageError(`--${problem}`);
    return input;
  },
  async run(context, input) {
    const base = publicBaseUrlOf(context);
    const view = await addShop(context.stores.shops, sealerOf(context), input, context.now());
    if (!view) throw new CommandError(`Project ${input.projectId} not found: create one with "project create"`);
    return { connection_id: view.connectionId, receiver_url: receiverUrlOf(base, view.connectionId) };
  },
};

const connectionView = (view: ShopConnectionView, base: string | undefined) => ({
  connection_id: view.connectionId,
  provider: view.provider,
  products: view.products,
  created_at: view.createdAt,
  ...(base ? { receiver_url: receiverUrlOf(base, view.connectionId) } : {}),
});

export const shopList: Command<{ projectId: string }, { connections: ReturnType<typeof connectionView>[] }> = {
  name: 'shop list',
  flags: { project: { required: true, placeholder: 'ID' } },
  validate: (flags) => ({ projectId: projectId(flags) }),
  async run(context, input) {
    await requireProject(context, input.projectId);
    const connections = await context.stores.shops.connections(input.projectId);
    return { connections: connections.map((view) => connectionView(view, context.loaderBaseUrl)) };
  },
};

function connectionIdFlag(text: string): string {
  if (!CONNECTION_ID_PATTERN.test(text)) throw new UsageError(`--connection must be a shop connection id like shop_0123456789abcdef0123; got "${text}"`);
  return text;
}

export const shopRemove: Command<{ connectionId: string }, { connection_id: string; project_id: string; removed: true }> = {
  name: 'shop remove',
  flags: { connection: { required: true, placeholder: 'ID' } },
  validate: (flags) => ({ connectionId: connectionIdFlag(flags.required('connection')) }),
  async run(context, input) {
    const connection = await context.stores.shops.connection(input.connectionId);
    if (!connection || !(await context.stores.shops.removeConnection(connection.projectId, input.connectionId)))
      throw new CommandError(`Shop connection ${input.connectionId} not found: "shop list --project ID" lists a project's connections`);
    return { connection_id: input.connectionId, project_id: connection.projectId, removed: true };
  },
};

export const shopMap: Command<
  { connectionId: string; products: Record<string, string> },
  { connection_id: string; project_id: string; products: Record<string, string> }
> = {
  name: 'shop map',
  flags: {
    connection: { required: true, placeholder: 'ID' },
    product: { required: true, kind: 'list', placeholder: 'PRODUCT_ID=TERMS' },
  },
  validate(flags) {
    const products = productsOf(flags.all('product'));
    const problem = productsProblem(products);
    if (problem) throw new UsageError(`--${problem}`);
    return { connectionId: connectionIdFlag(flags.required('connection')), products };
  },
  async run(context, input) {
    const view = await mapShopProducts(context.stores.shops, input.connectionId, input.products);
    if (!view) throw new CommandError(`Shop connection ${input.connectionId} not found: "shop list --project ID" lists a project's connections`);
    return { connection_id: view.connectionId, project_id: view.projectId, products: view.products };
  },
};

export interface ShopSimulateInput {
  connectionId: string;
  event: 'paid' | 'refund';
  productId: string;
  quantity: number;
  orderId: string;
}

const SIMULATED_EMAIL = 'buyer@example.com';

/** The body `provider` sends for the event, with the fields lambdas/domain/shops/receipts.ts reads. */
function simulatedBody(provider: ShopProvider, input: ShopSimulateInput, now: number): string {
  const paid = input.event === 'paid';
  switch (provider) {
    case 'sellauth':
      if (!paid) break;
      return JSON.stringify({
        event: 'INVOICE.ITEM.DELIVER-DYNAMIC',
        id: input.orderId,
        email: SIMULATED_EMAIL,
        customer: { id: 501, email: SIMULATED_EMAIL },
        item: { id: 1, product_id: input.productId, quantity: input.quantity },
      });
    case 'sellapp':
      if (!paid) break;
      return JSON.stringify({ invoice_id: input.orderId, product_variant_id: input.productId, quantity: input.quantity, customer_email: SIMULATED_EMAIL });
    case 'sellix':
      return JSON.stringify({
        event: paid ? 'order:paid' : 'order:disputed',
        data: { uniqid: input.orderId, product_id: input.productId, quantity: input.quantity, customer_email: SIMULATED_EMAIL },
      });
    case 'stripe':
      return JSON.stringify(
        paid
          ? {
              id: `evt_${randomBytes(12).toString('hex')}`,
              type: 'checkout.session.completed',
              created: now,
              data: {
                object: {
                  id: `cs_test_${randomBytes(12).toString('hex')}`,
                  object: 'checkout.session',
                  payment_status: 'paid',
                  payment_intent: input.orderId,
                  customer: 'cus_local',
                  customer_details: { email: SIMULATED_EMAIL },
                  metadata: { price_id: input.productId, quantity: String(input.quantity) },
                },
              },
            }
          : {
              id: `evt_${randomBytes(12).toString('hex')}`,
              type: 'charge.refunded',
              created: now,
              data: { object: { object: 'charge', payment_intent: input.orderId } },
            },
      );
  }
  throw new CommandError(`${provider} sends no refund event this service reads: simulate a refund on a stripe or sellix connection`);
}

export const shopSimulate: Command<ShopSimulateInput, object> = {
  name: 'shop simulate',
  flags: {
    connection: { required: true, placeholder: 'ID' },
    event: { required: true, placeholder: 'paid|refund' },
    product: { required: true, placeholder: 'PRODUCT_ID' },
    quantity: { placeholder: 'N' },
    order: { placeholder: 'ORDER_ID' },
  },
  validate(flags) {
    const quantity = flags.optional('quantity');
    const order = flags.optional('order');
    if (order !== undefined && !/^[A-Za-z0-9_.:-]{1,100}$/.test(order))
      throw new UsageError(`--order must be 1 to 100 letters, digits or _ . : -; got "${order}"`);
    return {
      connectionId: connectionIdFlag(flags.required('connection')),
      event: oneOf('event', flags.required('event'), ['paid', 'refund'] as const),
      productId: flags.required('product'),
      quantity: quantity === undefined ? 1 : wholeNumber('quantity', quantity, { min: 1, max: 100 }),
      orderId: order ?? `local_${randomBytes(6).toString('hex')}`,
    };
  },
  async run(context, input) {
    const connection = await context.stores.shops.connection(input.connectionId);
    if (!connection) throw new CommandError(`Shop connection ${input.connectionId} not found: "shop add" makes one`);
    const url = receiverUrlOf(publicBaseUrlOf(context), input.connectionId);
    const secret = await sealerOf(context).open(connection.sealedSecret, connection.connectionId);
    const now = context.now();
    const body = simulatedBody(connection.provider, input, now);
    const headers = {
      'Content-Type': 'application/json',
      ...shopSignatureHeaders(connection.provider, secret, body, now),
      ...(connection.provider === 'sellauth' ? { 'Idempotency-Key': `local-${input.orderId}` } : {}),
      ...(connection.provider === 'sellix' ? { 'X-Sellix-Event': input.event === 'paid' ? 'order:paid' : 'order:disputed' } : {}),
    };
    const response = await fetch(url, { method: 'POST', headers, body }).catch((error: unknown) => {
      throw new CommandError(`Cannot reach ${url} (${error instanceof Error ? error.message : String(error)}): is the local stack running (npm start)?`);
    });
    const text = await response.text();
    if (!response.ok) throw new CommandError(`The receiver answered ${response.status}: ${text.slice(0, 300)}`);
    const isJson = (response.headers.get('content-type') ?? '').includes('json');
    const answer = isJson ? (JSON.parse(text) as object) : { keys: text.split('\n').filter(Boolean) };
    return { order_id: input.orderId, status: response.status, answer };
  },
};
