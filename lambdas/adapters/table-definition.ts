import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The one table's shape. The CDK stack, the local stack and the tests all build the table from this,
 * so keys, indexes and the stream cannot drift apart.
 */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch-seconds attribute DynamoDB's TTL deletes by (rate-limit windows, delivery ids, telemetry windows). */
  ttlAttribute: 'ttl',
  stream: 'NEW_AND_OLD_IMAGES',
  indexes: {
    /**
     * Bulk revoke. Partition `<projectId>#<watermark>` scopes a watermark to its project. Revoked keys stay in
     * it: a revoke changes no attribute an index holds, so it writes the key's item alone (1 WCU), and no
     * write of a bulk revoke lands on this index's one partition per watermark.
     */
    byWatermark: { name: 'byWatermark', partitionKey: 'watermarkKey', sortKey: 'issueSeq', projection: 'KEYS_ONLY' },
    /**
     * Key order. Keys are never deleted and get a dense per-project sequence 1..n, so `offset` maps to
     * `issueSeq > offset` and a page costs O(limit) at any depth. Keys only: with every attribute projected
     * (the first version's `byIssueOrder`), each revoke and each key check also wrote this index, in the one
     * partition all of a project's keys share. Named anew because DynamoDB cannot change a projection in place.
     */
    byIssueOrder: { name: 'byIssueOrderKeys', partitionKey: 'issueOrderKey', sortKey: 'issueSeq', projection: 'KEYS_ONLY' },
    /**
     * A project's keys linked to one Discord user. Sparse: only a key with a `discord_id` carries `discordKey`
     * (`<projectId>#<discordId>`), set at issue and by an edit, removed when the link is.
     */
    byDiscordId: { name: 'byDiscordId', partitionKey: 'discordKey', sortKey: 'issueSeq', projection: 'KEYS_ONLY' },
  },
} as const;

type AttributeType = 'S' | 'N';

/** Key attributes and their types, for both the table and its indexes. */
export const KEY_ATTRIBUTE_TYPES: Record<string, AttributeType> = {
  pk: 'S',
  sk: 'S',
  watermarkKey: 'S',
  issueOrderKey: 'S',
  discordKey: 'S',
  issueSeq: 'N',
};

export function createTableInput(tableName: string): CreateTableCommandInput {
  const indexes = Object.values(TABLE.indexes);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: Object.entries(KEY_ATTRIBUTE_TYPES).map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: index.projection },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE.stream },
  };
}
