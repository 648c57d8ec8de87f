import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Bypass, FreeSession } from '#domain/free-keys/session';
import type { FreeKeySettings, FreeProvider } from '#schemas/free-keys';
import { isConditionFailure } from './conditions';
import type { LootlabsPostback, PostbackLookup } from './free-key-providers';
import { ENTITY, keyOf, RETENTION_SECONDS } from './layout';
import { TABLE } from './table-definition';

/** One step of the funnel, counted per project and UTC day (DESIGN.md: started, each checkpoint passed, bypasses, keys). */
export type FunnelStep = 'started' | `passed_${number}` | `bypass_${Bypass}` | 'issued';

export interface FunnelDay {
  t: number;
  counts: Record<string, number>;
}

const FUNNEL_ATTRIBUTE = /^(started|issued|passed_[1-5]|bypass_[a-z_]+)$/;

/**
 * Free keys in the one table (lambdas/adapters/layout.ts): the settings on the project item (`freeSettings`, JSON with
 * each secret sealed), sessions with their TTL, used tokens, Lootlabs postbacks and the funnel's day counters.
 */
export class DynamoFreeKeyStore implements PostbackLookup {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /** Write a project's settings (secrets already sealed); false for a project that does not exist. */
  async putSettings(projectId: string, sealed: FreeKeySettings): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.project(projectId),
          UpdateExpression: 'SET freeSettings = :settings',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':settings': JSON.stringify(sealed) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** The stored settings, secrets still sealed; undefined when the project has none (or does not exist). */
  async settings(projectId: string): Promise<FreeKeySettings | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ProjectionExpression: 'freeSettings' }));
    return typeof Item?.freeSettings === 'string' ? (JSON.parse(Item.freeSettings) as FreeKeySettings) : undefined;
  }

  async putSession(session: FreeSession): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keyOf.freeSession(session.id), entity: ENTITY.freeSession, session: JSON.stringify(session), [TABLE.ttlAttribute]: session.expiresAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** A live session (an expired one TTL has not deleted yet is none). */
  async session(sessionId: string, now: number): Promise<FreeSession | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.freeSession(sessionId), ConsistentRead: true }));
    if (typeof Item?.session !== 'string') return undefined;
    const session = JSON.parse(Item.session) as FreeSession;
    return session.expiresAt > now ? session : undefined;
  }

  /**
   * Replace a session only if it is still the one read (its nonce): two returns racing on one session cannot both
   * advance it. False when another write came first.
   */
  async replaceSession(previous: FreeSession, next: FreeSession): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keyOf.freeSession(next.id),
            entity: ENTITY.freeSession,
            session: JSON.stringify(next),
            nonce: next.nonce,
            [TABLE.ttlAttribute]: next.expiresAt,
          },
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(nonce) OR nonce = :nonce)',
          ExpressionAttributeValues: { ':nonce': previous.nonce },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Mark a provider token used: true the first time, false for a reused one. Only its hash is kept. */
  async claimToken(projectId: string, provider: FreeProvider, tokenId: string, now: number): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...keyOf.freeToken(projectId, provider, tokenId), entity: ENTITY.freeToken, [TABLE.ttlAttribute]: now + RETENTION_SECONDS.freeToken },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Record Lootlabs' postback for a session's nonce; a repeat keeps the first (Lootlabs may retry). */
  async recordPostback(projectId: string, clickId: string, postback: LootlabsPostback, now: number): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keyOf.freePostback(projectId, clickId),
            entity: ENTITY.freePostback,
            ...postback,
            [TABLE.ttlAttribute]: now + RETENTION_SECONDS.freePostback,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async postbackOf(projectId: string, clickId: string): Promise<LootlabsPostback | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.freePostback(projectId, clickId), ConsistentRead: true }));
    return typeof Item?.ip === 'string' && typeof Item.uniqueId === 'string' ? { ip: Item.ip, uniqueId: Item.uniqueId } : undefined;
  }

  /** Count one funnel step in the project's day (one ADD). */
  async countFunnel(projectId: string, step: FunnelStep, now: number): Promise<void> {
    if (!FUNNEL_ATTRIBUTE.test(step)) throw new Error(`Not a funnel step: ${step}`);
    const day = now - (now % 86_400);
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keyOf.freeFunnel(projectId, day),
        UpdateExpression: 'SET entity = :entity, #ttl = :ttl ADD #step :one',
        ExpressionAttributeNames: { '#step': step, '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: { ':entity': ENTITY.freeFunnel, ':ttl': day + RETENTION_SECONDS.freeFunnel, ':one': 1 },
      }),
    );
  }

  /** The funnel's days in [fromDay, toDay], ascending; days with nothing counted are absent. */
  async funnel(projectId: string, fromDay: number, toDay: number): Promise<FunnelDay[]> {
    const { Items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': keyOf.freeFunnel(projectId, 0).pk,
          ':from': keyOf.freeFunnel(projectId, fromDay).sk,
          ':to': keyOf.freeFunnel(projectId, toDay).sk,
        },
      }),
    );
    return Items.map((item) => ({
      t: Number(String(item.sk).slice('DAY#'.length)),
      counts: Object.fromEntries(Object.entries(item).filter(([name, value]) => FUNNEL_ATTRIBUTE.test(name) && typeof value === 'number')),
    }));
  }
}
