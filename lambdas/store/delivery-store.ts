import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import type { ClaimResult, DeliveryStore, FanoutStore, WebhookTarget } from '#events/ports';
import { keyOf } from './repository';
import { TABLE } from './table-definition';

/**
 * The webhook pipeline's reads and writes of the table: webhooks and names of projects (fan-out), delivery
 * claims and disabling a webhook whose URL Discord no longer knows (delivery). Besides the items repository.ts
 * lays out, it owns one kind:
 *
 * | item           | pk                    | sk       | notes                                                    |
 * |----------------|-----------------------|----------|----------------------------------------------------------|
 * | delivery claim | DELIVERY#<deliveryId> | DELIVERY | state sending/sent/released, claimToken, claimedAt, TTL  |
 */
export const deliveryKey = (deliveryId: string) => ({ pk: `DELIVERY#${deliveryId}`, sk: 'DELIVERY' });

/** Claims outlive every way a delivery can come back: SQS keeps a message 4 days, a stream keeps records 24 h. */
export const CLAIM_TTL_SECONDS = 7 * 24 * 3600;

/** A claim is 'sending' from claim to post, then 'sent'; 'released' when the post failed and a retry may claim it. */
const CLAIM = { sending: 'sending', sent: 'sent', released: 'released' } as const;

export class DynamoDeliveryStore implements FanoutStore, DeliveryStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async webhooksOf(projectId: string): Promise<WebhookTarget[]> {
    const targets: WebhookTarget[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeNames: { '#url': 'url' },
          ExpressionAttributeValues: { ':pk': keyOf.project(projectId).pk, ':prefix': 'WEBHOOK#' },
          ProjectionExpression: 'id, #url, events, enabled',
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        targets.push({ id: String(item.id), url: String(item.url), events: String(item.events), enabled: Number(item.enabled) });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return targets;
  }

  async projectName(projectId: string): Promise<string | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ProjectionExpression: '#name', ExpressionAttributeNames: { '#name': 'name' } }),
    );
    return typeof Item?.name === 'string' ? Item.name : undefined;
  }

  async webhookState(projectId: string, webhookId: string): Promise<{ enabled: number; url: string } | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keyOf.webhook(projectId, webhookId),
        ProjectionExpression: 'enabled, #url',
        ExpressionAttributeNames: { '#url': 'url' },
        ConsistentRead: true,
      }),
    );
    return Item ? { enabled: Number(Item.enabled), url: String(Item.url) } : undefined;
  }

  async claimDelivery(deliveryId: string, now: number, staleAfterSeconds: number): Promise<ClaimResult> {
    const token = randomUUID();
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...deliveryKey(deliveryId),
            entity: 'DELIVERY',
            state: CLAIM.sending,
            claimToken: token,
            claimedAt: now,
            [TABLE.ttlAttribute]: now + CLAIM_TTL_SECONDS,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR #state = :released OR (#state = :sending AND claimedAt <= :staleBefore)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':released': CLAIM.released, ':sending': CLAIM.sending, ':staleBefore': now - staleAfterSeconds },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { outcome: 'claimed', token };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item;
      if (old?.state?.S === CLAIM.sent) return { outcome: 'sent' };
      const claimedAt = Number(old?.claimedAt?.N ?? now);
      return { outcome: 'held', retryInSeconds: Math.max(1, claimedAt + staleAfterSeconds - now + 1) };
    }
  }

  async markSent(deliveryId: string, token: string, now: number): Promise<boolean> {
    return this.updateOwnClaim(deliveryId, token, 'SET #state = :sent, sentAt = :now', { ':sent': CLAIM.sent, ':now': now });
  }

  async releaseClaim(deliveryId: string, token: string): Promise<void> {
    await this.updateOwnClaim(deliveryId, token, 'SET #state = :released', { ':released': CLAIM.released });
  }

  async disableWebhook(projectId: string, webhookId: string, url: string, now: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.webhook(projectId, webhookId),
          UpdateExpression: 'SET enabled = :zero, updated_at = :now',
          // A config whose URL was replaced since the message was queued is not the one Discord refused.
          ConditionExpression: 'attribute_exists(pk) AND enabled = :one AND #url = :url',
          ExpressionAttributeNames: { '#url': 'url' },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':now': now, ':url': url },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Updates a claim only while it is still this attempt's (same token, still sending). */
  private async updateOwnClaim(deliveryId: string, token: string, update: string, values: Record<string, unknown>): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: deliveryKey(deliveryId),
          UpdateExpression: update,
          ConditionExpression: 'claimToken = :token AND #state = :sending',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ...values, ':token': token, ':sending': CLAIM.sending },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
