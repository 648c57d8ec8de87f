import { randomBytes } from 'node:crypto';
import { InvalidInput } from '../errors';
import type { SecretSealer } from '../ports';
import { SHOP_PROVIDERS, type ShopProvider } from './signatures';
import { parseTerms } from './terms';

/**
 * A project's shop connections (DESIGN.md, "Shops deliver keys by themselves"): the provider, its signing secret
 * (sealed at rest, never shown again, never logged) and the mapping from the shop's product ids (for Stripe, the
 * Price id) to key terms (terms.ts).
 */

/** What a connection holds besides its secret: what `shop list`, the console and the receiver read. */
export interface ShopConnectionView {
  connectionId: string;
  projectId: string;
  provider: ShopProvider;
  /** Product id → TERMS text as given (checked by parseTerms when added). */
  products: Record<string, string>;
  createdAt: number;
}

export interface ShopConnection extends ShopConnectionView {
  /** The signing secret, sealed by a SecretSealer with the connection id as its context. */
  sealedSecret: string;
}

/** Where connections are kept: one item per connection, and the project's list of them. */
export interface ShopConnectionStore {
  /** Writes the connection; false (nothing written) when the project does not exist. */
  addConnection(connection: ShopConnection): Promise<boolean>;
  connection(connectionId: string): Promise<ShopConnection | undefined>;
  connections(projectId: string): Promise<ShopConnectionView[]>;
  /** Removes it; false when the project has no such connection. */
  removeConnection(projectId: string, connectionId: string): Promise<boolean>;
  /** Replaces the product mapping; false when the project has no such connection. */
  setProducts(projectId: string, connectionId: string, products: Record<string, string>): Promise<boolean>;
}

/** A connection id: `shop_` and 20 hex characters (a path segment of the receiver's URL). */
export const CONNECTION_ID_PATTERN = /^shop_[0-9a-f]{20}$/;
export const MAX_SHOP_PRODUCTS = 50;
/** A product id as shops make them (numbers, uuids, `price_…`): printable ASCII without separators. */
const PRODUCT_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;
/** Shops' signing secrets are 16 to a few hundred printable characters (`whsec_…`, hex, base64). */
const SECRET_PATTERN = /^[\x21-\x7e]{8,512}$/;

export interface AddShopInput {
  projectId: string;
  provider: string;
  secret: string;
  /** Product id → TERMS text. */
  products: Record<string, string>;
}

/** What is wrong with the input, naming the field (`provider`, `secret`, `product`), or undefined. */
export function addShopProblem(input: AddShopInput): string | undefined {
  if (!(SHOP_PROVIDERS as readonly string[]).includes(input.provider)) return `provider must be one of ${SHOP_PROVIDERS.join(', ')}; got "${input.provider}"`;
  if (!SECRET_PATTERN.test(input.secret)) return "secret must be the shop's signing secret: 8 to 512 printable characters without spaces";
  return productsProblem(input.products);
}

/** What is wrong with a product mapping (`product` named), or undefined. */
export function productsProblem(products: Record<string, string>): string | undefined {
  const entries = Object.entries(products);
  if (entries.length === 0) return 'product is required: at least one PRODUCT_ID=TERMS, e.g. 12345=30d,machines=1';
  if (entries.length > MAX_SHOP_PRODUCTS) return `product may be given at most ${MAX_SHOP_PRODUCTS} times`;
  for (const [productId, terms] of entries) {
    if (!PRODUCT_ID_PATTERN.test(productId)) return `product id "${productId}" must be 1 to 100 letters, digits or _ . : -`;
    const parsed = parseTerms(terms);
    if (typeof parsed === 'string') return `product ${productId}: ${parsed}`;
  }
  return undefined;
}

/** Adds a connection; throws InvalidInput naming the field, undefined when the project does not exist. */
export async function addShop(store: ShopConnectionStore, sealer: SecretSealer, input: AddShopInput, now: number): Promise<ShopConnectionView | undefined> {
  const problem = addShopProblem(input);
  if (problem) throw new InvalidInput(problem);
  const connectionId = `shop_${randomBytes(10).toString('hex')}`;
  const view: ShopConnectionView = {
    connectionId,
    projectId: input.projectId,
    provider: input.provider as ShopProvider,
    products: { ...input.products },
    createdAt: now,
  };
  const sealedSecret = await sealer.seal(input.secret, connectionId);
  return (await store.addConnection({ ...view, sealedSecret })) ? view : undefined;
}

/**
 * Adds to (or changes) a connection's product mapping, so a receipt refused as unmapped can be replayed; the
 * merged mapping, undefined when the project has no such connection.
 */
export async function mapShopProducts(
  store: ShopConnectionStore,
  connectionId: string,
  products: Record<string, string>,
): Promise<ShopConnectionView | undefined> {
  const problem = productsProblem(products);
  if (problem) throw new InvalidInput(problem);
  const connection = await store.connection(connectionId);
  if (!connection) return undefined;
  const merged = { ...connection.products, ...products };
  if (Object.keys(merged).length > MAX_SHOP_PRODUCTS) throw new InvalidInput(`product may map at most ${MAX_SHOP_PRODUCTS} products per connection`);
  if (!(await store.setProducts(connection.projectId, connectionId, merged))) return undefined;
  const { sealedSecret: _sealed, ...view } = connection;
  return { ...view, products: merged };
}

/** The receiver's URL for a connection, on the public front door. */
export const receiverUrlOf = (publicBaseUrl: string, connectionId: string): string => `${publicBaseUrl.replace(/\/+$/, '')}/v1/shops/${connectionId}`;
