import { keySecretSealer } from '#adapters/secret-sealer';
import { AUDIT_ACTIONS } from '#domain/audit';
import { InvalidInput, ProjectNotFound } from '#domain/errors';
import { addShop, receiverUrlOf } from '#domain/shops/connections';
import { NO_BLACKLIST, type ReceiptLogEntry, replayReceipt } from '#domain/shops/receive';
import { ShopAddBody } from '#schemas/console';
import { defineConsoleRoute, json, NO_CONTENT, read, recordChange, write } from '../console-route';

/** Shops (DESIGN.md, "Shops deliver keys by themselves"), as `shop add|list|remove` set them, with the delivery log. */

/** Receipts the Shops page lists: the newest of the 90-day delivery log. */
const SHOP_LOG_PAGE = 100;

/** A delivery log line as the console shows it: never the stored receipt itself (it holds no email, but needs none). */
const receiptAnswer = (entry: ReceiptLogEntry) => ({
  receipt_id: entry.receiptId,
  at: entry.at,
  connection_id: entry.connectionId,
  provider: entry.provider,
  event_id: entry.eventId,
  order_id: entry.orderId,
  result: entry.result,
  detail: entry.detail,
  key_ids: entry.keyIds,
  replayable: entry.receipt !== undefined,
});

export const listShops = defineConsoleRoute({
  method: 'GET',
  path: '/projects/{id}/shops',
  need: read('listing shops'),
  run: async ({ project, stores, deps }) => {
    const [connections, receipts] = await Promise.all([stores.shops.connections(project.id), stores.shops.receipts(project.id, SHOP_LOG_PAGE)]);
    return json({
      connections: connections.map((view) => ({
        connection_id: view.connectionId,
        provider: view.provider,
        products: view.products,
        created_at: view.createdAt,
        receiver_url: receiverUrlOf(deps.loaderBaseUrl, view.connectionId),
      })),
      receipts: receipts.map(receiptAnswer),
    });
  },
});

export const addShopRoute = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/shops',
  need: write('connecting a shop'),
  body: ShopAddBody,
  run: async (context) => {
    const { project, body, now, stores, deps } = context;
    const view = await addShop(stores.shops, keySecretSealer(deps.keySecret), { projectId: project.id, ...body }, now);
    if (!view) throw new ProjectNotFound();
    await recordChange(
      context,
      AUDIT_ACTIONS.shopAdd,
      { provider: view.provider, products: Object.keys(view.products).join(',') },
      { connection_id: view.connectionId },
    );
    return json({ connection_id: view.connectionId, receiver_url: receiverUrlOf(deps.loaderBaseUrl, view.connectionId) });
  },
});

export const removeShop = defineConsoleRoute({
  method: 'DELETE',
  path: '/projects/{id}/shops/{connection_id}',
  need: write('removing a shop'),
  run: async (context) => {
    const connectionId = context.params.connection_id ?? '';
    if (!(await context.stores.shops.removeConnection(context.project.id, connectionId)))
      throw new InvalidInput(`No shop connection ${connectionId} in this project`);
    await recordChange(context, AUDIT_ACTIONS.shopRemove, { connection_id: connectionId }, { removed: true });
    return NO_CONTENT;
  },
});

export const replayShopReceipt = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/shops/receipts/{receipt_id}/replay',
  need: write('replaying a shop order'),
  run: async ({ project, params, now, stores, deps, event }) => {
    const shopDeps = {
      ...stores,
      keySecret: deps.keySecret,
      sealer: keySecretSealer(deps.keySecret),
      isBuyerBlacklisted: deps.isBuyerBlacklisted ?? NO_BLACKLIST,
    };
    return json(await replayReceipt(shopDeps, project.id, params.receipt_id ?? '', { now, requestId: event.requestContext.requestId }));
  },
});
