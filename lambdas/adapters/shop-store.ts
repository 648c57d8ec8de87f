import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ShopConnection, ShopConnectionView } from '#domain/shops/connections';
import type { Receipt } from '#domain/shops/receipts';
import { type ReceiptLogEntry, type ReceiptResult, SHOP_LOG_RETENTION_SECONDS, type ShopStore } from '#domain/shops/receive';
import type { ShopProvider } from '#domain/shops/signatures';
import { isConditionFailure } from './conditions';
import { keyOf, PARTITION } from './layout';
import type { Item } from './paging';
import { TABLE } from './table-definition';

/**
 * Shop connections and their deliveries on the one table:
 * - `SHOP#<connection id>` / `CONNECTION`: everything the receiver needs in one strongly consistent GetItem
 *   (project, provider, sealed secret, products);
 * - `PROJECT#<project id>` / `SHOP#<connection id>`: the project's list of them, without the secret; both written
 *   and deleted in one transaction;
 * - `SHOP#<connection id>` / `ORDER#<order id>`: the key ids each order got (a string set, ADDed), what a refund bans;
 * - `SHOPLOG#<project id>` / `RECEIPT#<receipt id>`: the delivery log, time-ordered ids, expired by TTL after 90 days.
 */
const shopKey = {
  connection: (connectionId: string) => ({ pk: `${PARTITION.shop}${connectionId}`, sk: 'CONNECTION' }),
  listed: (projectId: string, connectionId: string) => ({ pk: `${PARTITION.project}${projectId}`, sk: `SHOP#${connectionId}` }),
  order: (connectionId: string, orderId: string) => ({ pk: `${PARTITION.shop}${connectionId}`, sk: `ORDER#${orderId}` }),
  receipt: (projectId: string, receiptId: string) => ({ pk: `${PARTITION.shopLog}${projectId}`, sk: `RECEIPT#${receiptId}` }),
};

const viewOf = (item: Item): ShopConnectionView => ({
  connectionId: String(item.connectionId),
  projectId: String(item.projectId),
  provider: String(item.provider) as ShopProvider,
  products: (item.products ?? {}) as Record<string, string>,
  createdAt: Number(item.createdAt),
});

export class DynamoShopStore implements ShopStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async addConnection(connection: ShopConnection): Promise<boolean> {
    const { sealedSecret, ...view } = connection;
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            { ConditionCheck: { TableName: this.tableName, Key: keyOf.project(view.projectId), ConditionExpression: 'attribute_exists(pk)' } },
            {
              Put: {
                TableName: this.tableName,
                Item: { ...shopKey.connection(view.connectionId), entity: 'SHOP', ...view, sealedSecret },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            { Put: { TableName: this.tableName, Item: { ...shopKey.listed(view.projectId, view.connectionId), entity: 'PROJECT_SHOP', ...view } } },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async connection(connectionId: string): Promise<ShopConnection | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: shopKey.connection(connectionId), ConsistentRead: true }));
    return item && typeof item.sealedSecret === 'string' ? { ...viewOf(item), sealedSecret: item.sealedSecret } : undefined;
  }

  async connections(projectId: string): Promise<ShopConnectionView[]> {
    const { Items: items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :shop)',
        ExpressionAttributeValues: { ':pk': keyOf.project(projectId).pk, ':shop': 'SHOP#' },
        ConsistentRead: true,
      }),
    );
    return items.map(viewOf);
  }

  async removeConnection(projectId: string, connectionId: string): Promise<boolean> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: this.tableName, Key: shopKey.listed(projectId, connectionId), ConditionExpression: 'attribute_exists(pk)' } },
            { Delete: { TableName: this.tableName, Key: shopKey.connection(connectionId) } },
          ],
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async setProducts(projectId: string, connectionId: string, products: Record<string, string>): Promise<boolean> {
    const update = (Key: Record<string, string>) => ({
      Update: {
        TableName: this.tableName,
        Key,
        UpdateExpression: 'SET products = :products',
        ConditionExpression: 'attribute_exists(pk) AND projectId = :p',
        ExpressionAttributeValues: { ':products': products, ':p': projectId },
      },
    });
    try {
      await this.db.send(
        new TransactWriteCommand({ TransactItems: [update(shopKey.listed(projectId, connectionId)), update(shopKey.connection(connectionId))] }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async recordOrderKeys(connectionId: string, orderId: string, keyIds: readonly string[]): Promise<void> {
    if (keyIds.length === 0) return;
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: shopKey.order(connectionId, orderId),
        UpdateExpression: 'ADD keyIds :ids SET entity = :entity',
        ExpressionAttributeValues: { ':ids': new Set(keyIds), ':entity': 'SHOP_ORDER' },
      }),
    );
  }

  async orderKeyIds(connectionId: string, orderId: string): Promise<string[]> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: shopKey.order(connectionId, orderId), ConsistentRead: true }));
    return item?.keyIds instanceof Set ? [...(item.keyIds as Set<string>)].sort() : [];
  }

  async logReceipt(entry: ReceiptLogEntry): Promise<void> {
    const { receipt, ...rest } = entry;
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...shopKey.receipt(entry.projectId, entry.receiptId),
          entity: 'SHOP_RECEIPT',
          ...rest,
          ...(receipt ? { receipt: JSON.stringify(receipt) } : {}),
          [TABLE.ttlAttribute]: entry.at + SHOP_LOG_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async receipts(projectId: string, limit: number): Promise<ReceiptLogEntry[]> {
    const { Items: items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `${PARTITION.shopLog}${projectId}` },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return items.map(receiptOf);
  }

  async receipt(projectId: string, receiptId: string): Promise<ReceiptLogEntry | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: shopKey.receipt(projectId, receiptId), ConsistentRead: true }));
    return item ? receiptOf(item) : undefined;
  }
}

function receiptOf(item: Item): ReceiptLogEntry {
  return {
    receiptId: String(item.receiptId),
    projectId: String(item.projectId),
    connectionId: String(item.connectionId),
    provider: String(item.provider) as ShopProvider,
    at: Number(item.at),
    eventId: typeof item.eventId === 'string' ? item.eventId : null,
    orderId: typeof item.orderId === 'string' ? item.orderId : null,
    result: String(item.result) as ReceiptResult,
    detail: String(item.detail ?? ''),
    keyIds: Array.isArray(item.keyIds) ? item.keyIds.map(String) : [],
    ...(typeof item.receipt === 'string' ? { receipt: JSON.parse(item.receipt) as Receipt } : {}),
    ...(typeof item.replayOf === 'string' ? { replayOf: item.replayOf } : {}),
  };
}
