import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { TokenStore } from '#domain/ports';
import { ENTITY, keyOf } from './layout';

/** API tokens, stored only as their SHA-256 (spec §5 leaves issuance open; the dashboard issues them). */
export class DynamoTokenStore implements TokenStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async findTokenOwner(tokenHash: string): Promise<string | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.token(tokenHash) }));
    return typeof item?.ownerId === 'string' ? item.ownerId : undefined;
  }

  async saveTokenHash(ownerId: string, tokenHash: string, now: number): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keyOf.token(tokenHash), entity: ENTITY.token, ownerId, createdAt: now },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }
}
