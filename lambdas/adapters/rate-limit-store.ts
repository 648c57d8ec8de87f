import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RateLimitStore } from '#domain/ports';
import { ENTITY, keyOf, RATE_WINDOWS_KEPT } from './layout';
import { TABLE } from './table-definition';

/** A count reads back only what it updated (the new count), which a grant limited to named attributes allows. */
export const RATE_WINDOW_RETURN_VALUES = ['UPDATED_NEW'] as const;

/** Fixed-window request counters: one conditional ADD per request, so the count is exact under any concurrency. */
export class DynamoRateLimitStore implements RateLimitStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async countRequest(bucket: string, window: { start: number; seconds: number }, limit: number): Promise<number | undefined> {
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.rateWindow(bucket, window.start),
          UpdateExpression: 'ADD requests :one SET #ttl = :ttl, entity = :entity',
          ConditionExpression: 'attribute_not_exists(requests) OR requests < :limit',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':ttl': window.start + RATE_WINDOWS_KEPT * window.seconds, ':entity': ENTITY.rateWindow },
          ReturnValues: RATE_WINDOW_RETURN_VALUES[0],
        }),
      );
      return Number(Attributes?.requests);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /**
   * The same conditional write adding nothing: the condition reads the count where the function may only write
   * (its grant has UpdateItem on rate windows, no GetItem), and an empty window is left with a count of 0.
   */
  async isFull(bucket: string, window: { start: number; seconds: number }, limit: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.rateWindow(bucket, window.start),
          UpdateExpression: 'ADD requests :zero SET #ttl = :ttl, entity = :entity',
          ConditionExpression: 'attribute_not_exists(requests) OR requests < :limit',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':zero': 0, ':limit': limit, ':ttl': window.start + RATE_WINDOWS_KEPT * window.seconds, ':entity': ENTITY.rateWindow },
          // The one ReturnValues the rate windows' grant allows.
          ReturnValues: RATE_WINDOW_RETURN_VALUES[0],
        }),
      );
      return false;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return true;
      throw error;
    }
  }
}
