import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ClaimResult, DeliveryStore, FanoutStore, WebhookTarget } from '#domain/ports';
import { ifCondition } from './conditions';
import { CHILD_PREFIX, ENTITY, keyOf, RETENTION_SECONDS } from './layout';
import { queryAll } from './paging';
import { TABLE } from './table-definition';

/**
 * The webhook pipeline's reads and writes of the table: webhooks and names of projects (fan-out), delivery
 * claims and disabling a webhook whose URL Discord no longer knows (delivery).
 */

/**
 * What the delivery function names of a webhook config: it reads whether it is enabled and its URL, and disables it
 * (testing the URL) when Discord no longer knows it. Its IAM grant (lib/constructs/webhook-delivery.ts) allows
 * exactly these besides the keys, so it cannot touch a project's owner, plan or any other item attribute.
 */
export const WEBHOOK_STATE_ATTRIBUTES = ['enabled', 'url'] as const;
export const WEBHOOK_DISABLE_ATTRIBUTES = ['enabled', 'updated_at', 'url'] as const;

/** A claim is 'sending' from claim to post, then 'sent'; 'released' when the post failed and a retry may claim it. */
const CLAIM = { sending: 'sending', sent: 'sent', released: 'released' } as const;

export class DynamoDeliveryStore implements FanoutStore, DeliveryStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async webhooksOf(projectId: string): Promise<WebhookTarget[]> {
    return queryAll(
      this.db,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeNames: { '#url': 'url' },
        ExpressionAttributeValues: { ':pk': keyOf.project(projectId).pk, ':prefix': CHILD_PREFIX.webhook },
        ProjectionExpression: 'id, #url, events, enabled',
      },
      (item) => ({ id: String(item.id), url: String(item.url), events: String(item.events), enabled: Number(item.enabled) }),
    );
  }

  async projectName(projectId: string): Promise<string | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keyOf.project(projectId),
        ProjectionExpression: '#name',
        ExpressionAttributeNames: { '#name': 'name' },
      }),
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
            ...keyOf.deliveryClaim(deliveryId),
            entity: ENTITY.deliveryClaim,
            state: CLAIM.sending,
            claimToken: token,
            claimedAt: now,
            [TABLE.ttlAttribute]: now + RETENTION_SECONDS.deliveryClaim,
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
    return ifCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.webhook(projectId, webhookId),
          UpdateExpression: 'SET enabled = :zero, updated_at = :now',
          // A config whose URL was replaced since the message was queued is not the one Discord refused.
          ConditionExpression: 'attribute_exists(pk) AND enabled = :one AND #url = :url',
          ExpressionAttributeNames: { '#url': 'url' },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':now': now, ':url': url },
        }),
      ),
    );
  }

  /** Updates a claim only while it is still this attempt's (same token, still sending). */
  private updateOwnClaim(deliveryId: string, token: string, update: string, values: Record<string, unknown>): Promise<boolean> {
    return ifCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.deliveryClaim(deliveryId),
          UpdateExpression: update,
          ConditionExpression: 'claimToken = :token AND #state = :sending',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ...values, ':token': token, ':sending': CLAIM.sending },
        }),
      ),
    );
  }
}
