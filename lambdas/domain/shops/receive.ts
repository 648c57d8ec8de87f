import { createHash } from 'node:crypto';
import { MAX_NOTE_LENGTH } from '#schemas/requests';
import { AUDIT_ACTIONS, type AuditAction, type AuditDetails, type AuditEntry, newAuditEntryId } from '../audit';
import { blacklistProblem } from '../blacklist';
import { InvalidInput } from '../errors';
import type { AuditLog, BlacklistStore, KeySecret, KeyStore, ProjectStore, SecretSealer } from '../ports';
import { issueKeys } from '../selling-keys';
import { CONNECTION_ID_PATTERN, type ShopConnection, type ShopConnectionStore } from './connections';
import { MalformedReceipt, type OrderItem, type Receipt, readReceipt } from './receipts';
import { isSignedByShop, type ShopHeaders, type ShopProvider } from './signatures';
import { MAX_KEYS_PER_ORDER_ITEM, parseTerms, type ShopTerms } from './terms';

/**
 * The shop receiver's rules (DESIGN.md, "Shops deliver keys by themselves"): the signature first, then the receipt
 * it means; a paid order issues each item's keys exactly once (the `order_id` issue of "Selling keys", one
 * conditional write); a refund or dispute bans the order's keys, a dispute won unbans them; every receipt goes to the
 * delivery log (90 days), and a failed one can be replayed once its cause is fixed.
 */

/** How long a receipt stays in the delivery log. */
export const SHOP_LOG_RETENTION_SECONDS = 90 * 86_400;
/** The ban reasons a buyer's loader shows. */
const BAN_REASONS = { refunded: 'refunded', disputed: 'disputed' } as const;

export type ReceiptResult = 'issued' | 'repeated' | 'unmapped' | 'refused' | 'banned' | 'unbanned' | 'ignored' | 'malformed' | 'failed';

/** One line of the delivery log. */
export interface ReceiptLogEntry {
  receiptId: string;
  projectId: string;
  connectionId: string;
  provider: ShopProvider;
  at: number;
  eventId: string | null;
  orderId: string | null;
  result: ReceiptResult;
  /** What happened, in a sentence the publisher reads (never a raw key, email or body). */
  detail: string;
  keyIds: string[];
  /** A paid receipt that failed, as read (the email only hashed): what a replay delivers again. */
  receipt?: Receipt;
  /** The receipt this one replayed. */
  replayOf?: string;
}

/** The delivery log and the keys each order got, besides the connections. */
export interface ShopStore extends ShopConnectionStore {
  /** Adds key ids to what the connection's order got (what a refund bans). */
  recordOrderKeys(connectionId: string, orderId: string, keyIds: readonly string[]): Promise<void>;
  orderKeyIds(connectionId: string, orderId: string): Promise<string[]>;
  logReceipt(entry: ReceiptLogEntry): Promise<void>;
  /** The project's receipts, newest first. */
  receipts(projectId: string, limit: number): Promise<ReceiptLogEntry[]>;
  receipt(projectId: string, receiptId: string): Promise<ReceiptLogEntry | undefined>;
}

/** Who the buyer is, as a blacklist can name them. */
interface BuyerIdentity {
  emailSha256: string | null;
}
/** The buyer blacklist's check (DESIGN.md, "Buyer blacklist"): an order for a blacklisted email issues nothing. */
export type IsBuyerBlacklisted = (projectId: string, buyer: BuyerIdentity) => Promise<boolean>;
export const NO_BLACKLIST: IsBuyerBlacklisted = async () => false;

/** The project's blacklist as the shops consult it: by the buyer's email hash, the one name a shop gives. */
export const blacklistOf =
  (store: BlacklistStore): IsBuyerBlacklisted =>
  async (projectId, buyer) =>
    buyer.emailSha256 !== null && (await blacklistProblem(store, projectId, { emailSha256: buyer.emailSha256 })) !== undefined;

export interface ShopDeps {
  shops: ShopStore;
  keys: KeyStore;
  projects: Pick<ProjectStore, 'getProject'>;
  audit: AuditLog;
  keySecret: KeySecret;
  sealer: SecretSealer;
  isBuyerBlacklisted: IsBuyerBlacklisted;
}

/** What the receiver answers: plain text where the shop shows it to the buyer, else JSON. */
export type ShopAnswer = { status: number; text: string } | { status: number; json: Record<string, unknown> };

export interface ShopRequest {
  connectionId: string;
  headers: ShopHeaders;
  body: Uint8Array;
  now: number;
  requestId: string;
}

/** One sentence for an unknown connection and a wrong or stale signature alike: a caller learns nothing of which. */
const SHOP_SIGNATURE_REFUSED = 'Invalid or missing shop signature';
const refused: ShopAnswer = { status: 401, json: { error: SHOP_SIGNATURE_REFUSED } };

/** Shops that show the answer to the buyer (SellAuth and Sell.app dynamic delivery, Sellix dynamic products). */
const showsAnswer = (provider: ShopProvider, receipt: Receipt): boolean =>
  provider === 'sellauth' || provider === 'sellapp' || (provider === 'sellix' && receipt.eventId.startsWith('product:dynamic:'));

/** `POST /v1/shops/{connection_id}`: a refusal (401) before anything is read but the signature; else the receipt's answer. */
export async function receiveShopRequest(deps: ShopDeps, request: ShopRequest): Promise<ShopAnswer> {
  const connection = CONNECTION_ID_PATTERN.test(request.connectionId) ? await deps.shops.connection(request.connectionId) : undefined;
  if (!connection) return refused;
  const secret = await deps.sealer.open(connection.sealedSecret, connection.connectionId);
  if (!isSignedByShop(connection.provider, secret, request.headers, request.body, request.now)) return refused;

  let receipt: Receipt;
  try {
    receipt = readReceipt(connection.provider, JSON.parse(Buffer.from(request.body).toString('utf8')), request.headers);
  } catch (error) {
    const detail = error instanceof MalformedReceipt ? error.message : 'the body is not JSON';
    await log(deps, connection, request.now, { eventId: null, orderId: null, result: 'malformed', detail, keyIds: [] });
    return { status: 400, json: { error: `Malformed ${connection.provider} request: ${detail}` } };
  }
  return act(deps, connection, receipt, request);
}

/** Replays a failed paid receipt of the delivery log (once its cause is fixed: a mapping added). */
export async function replayReceipt(
  deps: ShopDeps,
  projectId: string,
  receiptId: string,
  context: { now: number; requestId: string },
): Promise<{ result: ReceiptResult; key_ids: string[]; detail: string }> {
  const entry = await deps.shops.receipt(projectId, receiptId);
  if (!entry) throw new InvalidInput(`receipt ${receiptId} is not in this project's delivery log (kept 90 days)`);
  if (!entry.receipt) throw new InvalidInput(`receipt ${receiptId} did not fail (${entry.result}): only a failed paid order can be replayed`);
  const connection = await deps.shops.connection(entry.connectionId);
  if (!connection) throw new InvalidInput(`receipt ${receiptId}'s shop connection was removed: add it again before replaying`);
  await act(deps, connection, entry.receipt, { ...context, replayOf: receiptId });
  const [replayed] = (await deps.shops.receipts(projectId, 10)).filter((line) => line.replayOf === receiptId);
  return { result: replayed?.result ?? 'failed', key_ids: replayed?.keyIds ?? [], detail: replayed?.detail ?? '' };
}

type LogLine = Pick<ReceiptLogEntry, 'eventId' | 'orderId' | 'result' | 'detail' | 'keyIds'> & Partial<Pick<ReceiptLogEntry, 'receipt' | 'replayOf'>>;

async function log(deps: ShopDeps, connection: ShopConnection, at: number, line: LogLine): Promise<void> {
  await deps.shops.logReceipt({
    receiptId: newAuditEntryId().replace(/^aud_/, 'rcp_'),
    projectId: connection.projectId,
    connectionId: connection.connectionId,
    provider: connection.provider,
    at,
    ...line,
  });
}

function shopEntry(connection: ShopConnection, at: number, requestId: string, action: AuditAction, target: AuditDetails, outcome: AuditDetails): AuditEntry {
  return {
    entryId: newAuditEntryId(),
    at,
    projectId: connection.projectId,
    action,
    status: 'completed',
    source: 'shop',
    tokenId: null,
    requestId,
    target: { connection_id: connection.connectionId, provider: connection.provider, ...target },
    outcome,
    caller: `shop:${connection.connectionId}`,
  };
}

/** The order id keys are issued under: one per connection, order and item, of the form `POST …/keys` accepts. */
const orderRefOf = (connectionId: string, orderId: string, itemId: string): string =>
  `shop:${createHash('sha256').update(`${connectionId}\0${orderId}\0${itemId}`).digest('hex').slice(0, 40)}`;

/** Text the shop sent, as it may stand in a note: the note's search finds keys by these words. */
const noteSafe = (text: string): string => text.replace(/[^A-Za-z0-9_.:@-]/g, '').slice(0, 64);

/** The note on each key: the shop, the order, the buyer's email hash and the shop's customer id (support's search). */
function noteOf(provider: ShopProvider, receipt: Extract<Receipt, { kind: 'paid' }>): string {
  const parts = [`shop ${provider}`, `order ${noteSafe(receipt.orderId)}`];
  if (receipt.emailSha256) parts.push(`email ${receipt.emailSha256}`);
  if (receipt.customerId) parts.push(`customer ${noteSafe(receipt.customerId)}`);
  return parts.join(' ').slice(0, MAX_NOTE_LENGTH);
}

interface ActContext {
  now: number;
  requestId: string;
  replayOf?: string;
}

async function act(deps: ShopDeps, connection: ShopConnection, receipt: Receipt, context: ActContext): Promise<ShopAnswer> {
  const replay = context.replayOf === undefined ? {} : { replayOf: context.replayOf };
  const line = (result: ReceiptResult, detail: string, keyIds: string[] = [], failed?: Receipt): LogLine => ({
    eventId: receipt.eventId,
    orderId: receipt.kind === 'ignored' ? null : receipt.orderId,
    result,
    detail,
    keyIds,
    ...(failed ? { receipt: failed } : {}),
    ...replay,
  });
  if (receipt.kind === 'ignored') {
    await log(deps, connection, context.now, line('ignored', `event ${receipt.event} needs nothing`));
    return { status: 200, json: { ok: true, ignored: receipt.event } };
  }
  if (receipt.kind === 'paid') return deliver(deps, connection, receipt, context, line);

  const keyIds = await deps.shops.orderKeyIds(connection.connectionId, receipt.orderId);
  const unban = receipt.kind === 'dispute_won';
  const reason = receipt.kind === 'refunded' ? BAN_REASONS.refunded : BAN_REASONS.disputed;
  for (const keyId of keyIds) await deps.keys.setBan(connection.projectId, keyId, unban ? null : { reason, until: null });
  if (keyIds.length > 0) {
    await deps.audit.record(
      shopEntry(
        connection,
        context.now,
        context.requestId,
        unban ? AUDIT_ACTIONS.shopUnban : AUDIT_ACTIONS.shopBan,
        { order_id: receipt.orderId, event: receipt.kind },
        {
          key_ids: keyIds.join(','),
          ...(unban ? {} : { reason }),
        },
      ),
    );
  }
  const result = keyIds.length === 0 ? 'ignored' : unban ? 'unbanned' : 'banned';
  await log(
    deps,
    connection,
    context.now,
    line(result, keyIds.length === 0 ? `no keys were delivered for order ${receipt.orderId}` : `${receipt.kind}: ${keyIds.length} key(s) ${result}`, keyIds),
  );
  return { status: 200, json: { ok: true, [unban ? 'unbanned' : 'banned']: keyIds.length } };
}

async function deliver(
  deps: ShopDeps,
  connection: ShopConnection,
  receipt: Extract<Receipt, { kind: 'paid' }>,
  context: ActContext,
  line: (result: ReceiptResult, detail: string, keyIds?: string[], failed?: Receipt) => LogLine,
): Promise<ShopAnswer> {
  const fail = async (status: number, result: ReceiptResult, error: string): Promise<ShopAnswer> => {
    await log(deps, connection, context.now, line(result, error, [], receipt));
    return { status, json: { error } };
  };
  if (receipt.items.length === 0) return fail(422, 'unmapped', 'The order names no product this connection delivers');
  // Every item is checked before any is issued, so a refusal issues nothing.
  const planned: { item: OrderItem; terms: ShopTerms }[] = [];
  for (const item of receipt.items) {
    const text = connection.products[item.productId];
    const terms = text === undefined ? undefined : parseTerms(text);
    if (terms === undefined || typeof terms === 'string')
      return fail(
        422,
        'unmapped',
        `Product ${item.productId} is not mapped to key terms: the publisher adds it to the shop connection, then replays this order`,
      );
    if (item.quantity * terms.keysPerUnit > MAX_KEYS_PER_ORDER_ITEM)
      return fail(
        422,
        'failed',
        `Product ${item.productId}: ${item.quantity} × ${terms.keysPerUnit} keys is more than ${MAX_KEYS_PER_ORDER_ITEM} for one order item`,
      );
    planned.push({ item, terms });
  }
  if (await deps.isBuyerBlacklisted(connection.projectId, { emailSha256: receipt.emailSha256 }))
    return fail(403, 'refused', 'This order needs the publisher: it cannot be delivered automatically. Contact the seller.');
  const project = await deps.projects.getProject(connection.projectId);
  if (!project) return fail(404, 'failed', 'The project of this shop connection no longer exists');

  const trail = { log: deps.audit, actor: { tokenId: `shop:${connection.connectionId}`, requestId: context.requestId, source: 'shop' as const } };
  const delivered: { id: string; key: string }[] = [];
  let repeated = true;
  for (const { item, terms } of planned) {
    const body = {
      count: item.quantity * terms.keysPerUnit,
      duration: terms.duration,
      max_uses: terms.maxUses,
      max_fingerprints: terms.maxFingerprints,
      note: noteOf(connection.provider, receipt),
      order_id: orderRefOf(connection.connectionId, receipt.orderId, item.itemId),
    };
    try {
      const issued = await issueKeys({ store: deps.keys, secret: deps.keySecret }, project, body, context.now, trail, AUDIT_ACTIONS.shopDeliver);
      repeated &&= issued.repeated;
      delivered.push(...issued.keys);
      await deps.shops.recordOrderKeys(
        connection.connectionId,
        receipt.orderId,
        issued.keys.map((key) => key.id),
      );
    } catch (error) {
      // A repeat past its window, or an order delivered before under other terms: the shop shows it, the log keeps it.
      if (error instanceof InvalidInput) return fail(422, 'failed', `Order ${receipt.orderId} cannot be delivered again: ${error.message}`);
      throw error;
    }
  }
  const keyIds = delivered.map((key) => key.id);
  await log(deps, connection, context.now, line(repeated ? 'repeated' : 'issued', `${keyIds.length} key(s) ${repeated ? 'answered again' : 'issued'}`, keyIds));
  if (showsAnswer(connection.provider, receipt)) return { status: 200, text: delivered.map((key) => key.key).join('\n') };
  return { status: 200, json: { ok: true, keys: keyIds.length, repeated } };
}
