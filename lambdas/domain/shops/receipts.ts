import { createHash } from 'node:crypto';
import type { ShopHeaders, ShopProvider } from './signatures';

/**
 * What a signed shop request means, read from each provider's documented payload into one shape (DESIGN.md, "Shops
 * deliver keys by themselves"). Only the fields below are read; the raw body is never kept or logged, and the
 * buyer's email leaves this module only as its SHA-256 (trimmed, lower case: the blacklist's `email_sha256`).
 */

export interface OrderItem {
  /** The item within the order: what exactly-once is counted per. */
  itemId: string;
  /** The shop's product id (Stripe: the Price id): what the connection maps to terms. */
  productId: string;
  quantity: number;
}

export type Receipt =
  | { kind: 'paid'; eventId: string; orderId: string; items: OrderItem[]; emailSha256: string | null; customerId: string | null }
  | { kind: 'refunded' | 'disputed' | 'dispute_won'; eventId: string; orderId: string }
  /** An event this service does not act on (another status, another type): answered 200, logged. */
  | { kind: 'ignored'; eventId: string; event: string };

/** What the shop shows when its body is not what it documents (400). */
export class MalformedReceipt extends Error {
  override readonly name = 'MalformedReceipt';
}

/** The blacklist's form of an email: SHA-256 hex of the trimmed, lower-cased address. */
export const emailSha256 = (email: string): string => createHash('sha256').update(email.trim().toLowerCase()).digest('hex');

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const objectAt = (value: unknown): Json => (isObject(value) ? value : {});

/** An id the shop sent (a string or a number), kept to a safe form; undefined when absent or unusable. */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string' && /^[\x21-\x7e]{1,200}$/.test(value)) return value;
  return undefined;
}

function required(value: unknown, field: string): string {
  const id = idOf(value);
  if (id === undefined) throw new MalformedReceipt(`${field} is missing or not an id`);
  return id;
}

function quantityOf(value: unknown, field: string): number {
  if (value === undefined || value === null) return 1;
  const quantity = typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : value;
  if (typeof quantity !== 'number' || !Number.isSafeInteger(quantity) || quantity < 1)
    throw new MalformedReceipt(`${field} must be a whole number of at least 1`);
  return quantity;
}

const hashedEmail = (value: unknown): string | null => (typeof value === 'string' && value.includes('@') && value.length <= 320 ? emailSha256(value) : null);

/** The receipt a signed body means, or MalformedReceipt naming the field. */
export function readReceipt(provider: ShopProvider, body: unknown, headers: ShopHeaders): Receipt {
  if (!isObject(body)) throw new MalformedReceipt('the body must be a JSON object');
  switch (provider) {
    case 'sellauth':
      return sellAuthReceipt(body, headers);
    case 'sellapp':
      return sellAppReceipt(body);
    case 'sellix':
      return sellixReceipt(body, headers);
    case 'stripe':
      return stripeReceipt(body);
  }
}

/**
 * SellAuth Dynamic Delivery (https://docs.sellauth.com/guides/dynamic-delivery): one request per invoice item, event
 * `INVOICE.ITEM.DELIVER-DYNAMIC`, the invoice's `id`, `email` and `customer.id` at the top, the item in `item`
 * (`id`, `product_id`, `variant_id`, `quantity`); `Idempotency-Key` names the delivery across its retries. A mapping
 * may name the variant (`PRODUCT:VARIANT`) or the product.
 */
function sellAuthReceipt(body: Json, headers: ShopHeaders): Receipt {
  const event = String(body.event ?? '');
  const eventId = idOf(headers['idempotency-key']) ?? `${event}:${idOf(body.id) ?? ''}`;
  if (event !== 'INVOICE.ITEM.DELIVER-DYNAMIC') return { kind: 'ignored', eventId, event };
  const item = objectAt(body.item);
  const productId = required(item.product_id, 'item.product_id');
  const variantId = idOf(item.variant_id);
  return {
    kind: 'paid',
    eventId,
    orderId: required(body.id, 'id'),
    items: [
      {
        itemId: idOf(item.id) ?? productId,
        productId: variantId === undefined ? productId : `${productId}:${variantId}`,
        quantity: quantityOf(item.quantity, 'item.quantity'),
      },
    ],
    emailSha256: hashedEmail(body.email),
    customerId: idOf(objectAt(body.customer).id) ?? idOf(body.shop_customer_id) ?? null,
  };
}

/**
 * Sell.app's dynamic webhook (https://docs.sell.app/docs/setting-up-dynamic-webhook), set on a product variant and
 * sent once the payment completed, with the invoice's data: the invoice id (`invoice_id`, else `id`), the variant
 * (`product_variant_id`) and `quantity` as Sell.app's invoice deliverables name them, the buyer's email
 * (`customer_email`, else `customer_information.email`).
 */
function sellAppReceipt(body: Json): Receipt {
  const orderId = required(body.invoice_id ?? body.id, 'invoice_id');
  const productId = required(body.product_variant_id ?? body.variant_id ?? body.product_id, 'product_variant_id');
  const customer = objectAt(body.customer_information);
  return {
    kind: 'paid',
    eventId: `dynamic:${orderId}:${productId}`,
    orderId,
    items: [{ itemId: productId, productId, quantity: quantityOf(body.quantity, 'quantity') }],
    emailSha256: hashedEmail(body.customer_email ?? customer.email),
    customerId: idOf(customer.id) ?? null,
  };
}

/**
 * Sellix (https://docs.sellix.io/api-reference/webhooks, /dynamic-products): the event in `X-Sellix-Event` (and
 * `event` in the body), the order in `data` (`uniqid`, `product_id`, `quantity`, `customer_email`; a shopping cart's
 * products in `data.cart.products[]` with `unit_quantity`). `order:paid` and `product:dynamic` deliver;
 * `order:disputed` (a Stripe or PayPal dispute opened) bans.
 */
function sellixReceipt(body: Json, headers: ShopHeaders): Receipt {
  const event = headers['x-sellix-event'] ?? String(body.event ?? '');
  const order = objectAt(body.data);
  const orderId = required(order.uniqid, 'data.uniqid');
  const eventId = `${event}:${orderId}`;
  if (event === 'order:disputed') return { kind: 'disputed', eventId, orderId };
  if (event !== 'order:paid' && event !== 'product:dynamic') return { kind: 'ignored', eventId, event };
  const cart = objectAt(order.cart).products;
  const dynamicProduct = event === 'product:dynamic' ? idOf(headers['x-sellix-product-id']) : undefined;
  const items: OrderItem[] = Array.isArray(cart)
    ? cart.map((entry, index) => {
        const product = objectAt(entry);
        const productId = required(product.uniqid ?? product.product_id, `data.cart.products[${index}].uniqid`);
        return { itemId: productId, productId, quantity: quantityOf(product.unit_quantity, `data.cart.products[${index}].unit_quantity`) };
      })
    : [{ itemId: 'order', productId: required(order.product_id, 'data.product_id'), quantity: quantityOf(order.quantity, 'data.quantity') }];
  return {
    kind: 'paid',
    eventId,
    orderId,
    // A dynamic product's request is sent once per product of the cart, naming it in X-Sellix-Product-Id.
    items: dynamicProduct === undefined ? items : items.filter((item) => item.productId === dynamicProduct),
    emailSha256: hashedEmail(order.customer_email),
    customerId: idOf(order.customer_id) ?? null,
  };
}

/**
 * Stripe (https://docs.stripe.com/api/events, /checkout/fulfillment): `checkout.session.completed` with
 * `payment_status: "paid"` delivers. A Checkout Session event does not embed its line items (they are only
 * expandable through the API, which the receiver does not call), so the Price ids come from the event itself: the
 * session's `line_items.data[]` (`price.id`, `quantity`) when a relay expanded them, else its `metadata.price_id`
 * (and `metadata.quantity`, default 1), which the publisher sets on the Payment Link or the Checkout Session. The
 * order is the PaymentIntent (the session's `payment_intent`), which `charge.refunded` and `charge.dispute.*` also
 * name; `charge.dispute.closed` with `status: "won"` unbans.
 */
function stripeReceipt(body: Json): Receipt {
  const eventId = required(body.id, 'id');
  const type = String(body.type ?? '');
  const object = objectAt(objectAt(body.data).object);
  switch (type) {
    case 'checkout.session.completed': {
      if (object.payment_status !== 'paid') return { kind: 'ignored', eventId, event: `${type}:${String(object.payment_status)}` };
      const sessionId = required(object.id, 'data.object.id');
      const lineItems = objectAt(object.line_items).data;
      const metadata = objectAt(object.metadata);
      const items: OrderItem[] = Array.isArray(lineItems)
        ? lineItems.map((entry, index) => {
            const line = objectAt(entry);
            const priceId = required(objectAt(line.price).id, `data.object.line_items.data[${index}].price.id`);
            return {
              itemId: idOf(line.id) ?? priceId,
              productId: priceId,
              quantity: quantityOf(line.quantity, `data.object.line_items.data[${index}].quantity`),
            };
          })
        : [
            {
              itemId: 'metadata',
              productId: required(metadata.price_id, 'data.object.metadata.price_id'),
              quantity: quantityOf(metadata.quantity, 'data.object.metadata.quantity'),
            },
          ];
      const details = objectAt(object.customer_details);
      return {
        kind: 'paid',
        eventId,
        orderId: idOf(object.payment_intent) ?? sessionId,
        items,
        emailSha256: hashedEmail(details.email ?? object.customer_email),
        customerId: idOf(object.customer) ?? null,
      };
    }
    case 'charge.refunded':
      return { kind: 'refunded', eventId, orderId: required(object.payment_intent, 'data.object.payment_intent') };
    case 'charge.dispute.created':
      return { kind: 'disputed', eventId, orderId: required(object.payment_intent, 'data.object.payment_intent') };
    case 'charge.dispute.closed':
      if (object.status !== 'won') return { kind: 'ignored', eventId, event: `${type}:${String(object.status)}` };
      return { kind: 'dispute_won', eventId, orderId: required(object.payment_intent, 'data.object.payment_intent') };
    default:
      return { kind: 'ignored', eventId, event: type.slice(0, 100) };
  }
}
