import { type DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { newId } from '#domain/ids';
import type { Plan } from '#domain/model';
import type { NewScriptVersion, VersionWriter } from '#domain/scripts';
import { batchOf, randomKeys } from '#domain/selling-keys';
import type { EventName } from '#schemas/resources';
import { backoff, isConditionFailure, isTransactionConflict, TRANSACTION_ATTEMPTS } from './conditions';
import { DynamoKeyStore } from './key-store';
import { ENTITY, keyOf } from './layout';
import type { Item } from './paging';
import { inTurn } from './sequence';

export const KEY_LIFETIME_SECONDS = 30 * 24 * 3600;

/** A key as `keys issue` hands it out: `key` is the raw value, shown this once. */
export interface DashboardIssuedKey {
  id: string;
  watermark: string;
  key: string;
}

export interface NewKeys {
  projectId: string;
  count: number;
  /** Every key gets this watermark; otherwise each gets its own random one. */
  watermark?: string;
  tier: string;
  maxUses: number | null;
  /** Defaults to KEY_LIFETIME_SECONDS after issue. */
  expiresAt?: number;
  /** Machines each key may be bound to; unset, the keys are not bound. */
  maxFingerprints?: number | null;
  note?: string;
  discordId?: string;
  now: number;
}

export interface NewWebhook {
  projectId: string;
  url: string;
  events: EventName[];
  enabled: boolean;
  now: number;
}

/**
 * The dashboard's writes (owners, projects, keys, versions, webhooks): the API never makes these, the dashboard
 * does, and the dashboard CLI, the local stack's seed and the tests write through this same code.
 */
export class DashboardStore implements VersionWriter {
  private readonly keys: DynamoKeyStore;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {
    this.keys = new DynamoKeyStore(db, tableName);
  }

  async createOwner(now: number): Promise<string> {
    const ownerId = newId('own');
    await this.putNew({ ...keyOf.owner(ownerId), entity: ENTITY.owner, id: ownerId, createdAt: now });
    return ownerId;
  }

  async ownerExists(ownerId: string): Promise<boolean> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.owner(ownerId), ConsistentRead: true }));
    return Item !== undefined;
  }

  async createProject(input: { ownerId: string; name: string; plan: Plan; now: number }): Promise<string> {
    const projectId = newId('prj');
    await this.putNew({
      ...keyOf.project(projectId),
      entity: ENTITY.project,
      id: projectId,
      ownerId: input.ownerId,
      name: input.name,
      plan: input.plan,
      currentVersionId: null,
      keyCount: 0,
      versionCount: 0,
      createdAt: input.now,
    });
    return projectId;
  }

  /**
   * Issue keys with the next numbers of the project's dense issue sequence, as the API's issue call does (the same
   * store, DynamoKeyStore.issue). Each key's raw value is returned here, once; the table keeps its SHA-256, and its
   * id is derived from that.
   */
  async issueKeys(input: NewKeys): Promise<DashboardIssuedKey[]> {
    const keys = randomKeys(input.count, input.watermark);
    await this.keys.issue(
      batchOf(input.projectId, keys, {
        tier: input.tier,
        maxUses: input.maxUses,
        maxFingerprints: input.maxFingerprints ?? null,
        note: input.note ?? null,
        discordId: input.discordId ?? null,
        issuedAt: input.now,
        expiresAt: input.expiresAt ?? input.now + KEY_LIFETIME_SECONDS,
      }),
    );
    // In the order DESIGN.md's dashboard contract lists the fields.
    return keys.map(({ id, watermark, key }) => ({ id, watermark, key }));
  }

  /**
   * A dashboard upload's version item (its script already stored under `input.id`, see #domain/scripts): the next
   * version number, made current in the same transaction. `sha256` stays on the item only: the owner API's version
   * resource keeps exactly the spec's fields.
   */
  async uploadVersion(input: NewScriptVersion): Promise<{ id: string; version_number: number }> {
    const { id } = input;
    const versionNumber = await inTurn(this.db, this.tableName, input.projectId, () =>
      this.withSequence(
        input.projectId,
        'versionCount',
        1,
        (number) => [
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...keyOf.version(input.projectId, id),
                entity: ENTITY.version,
                projectId: input.projectId,
                id,
                version_number: number,
                uploaded_at: input.now,
                size_bytes: input.sizeBytes,
                sha256: input.sha256,
                notes: input.notes,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
        { currentVersionId: id },
      ),
    );
    return { id, version_number: versionNumber };
  }

  async addWebhook(input: NewWebhook): Promise<string> {
    const id = newId('whk');
    await this.putNew({
      ...keyOf.webhook(input.projectId, id),
      entity: ENTITY.webhook,
      projectId: input.projectId,
      id,
      url: input.url,
      events: JSON.stringify(input.events),
      enabled: input.enabled ? 1 : 0,
      created_at: input.now,
      updated_at: input.now,
    });
    return id;
  }

  /**
   * Reserve `count` numbers of the project's counter `counter` and write `items(first)` in one transaction,
   * retrying when another writer moved the counter first. Returns the first number reserved.
   */
  private async withSequence(
    projectId: string,
    counter: 'keyCount' | 'versionCount',
    count: number,
    items: (first: number) => NonNullable<TransactWriteCommandInput['TransactItems']>,
    alsoSet: Record<string, unknown> = {},
  ): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const project = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ConsistentRead: true }));
      if (!project.Item) throw new Error(`Project ${projectId} does not exist`);
      const current = Number(project.Item[counter] ?? 0);
      const extraNames = Object.fromEntries(Object.keys(alsoSet).map((name, i) => [`#x${i}`, name]));
      const extraValues = Object.fromEntries(Object.values(alsoSet).map((value, i) => [`:x${i}`, value]));
      const extraSets = Object.keys(alsoSet)
        .map((_, i) => `, #x${i} = :x${i}`)
        .join('');
      try {
        await this.db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.tableName,
                  Key: keyOf.project(projectId),
                  UpdateExpression: `SET #c = :next${extraSets}`,
                  ConditionExpression: '#c = :current',
                  ExpressionAttributeNames: { '#c': counter, ...extraNames },
                  ExpressionAttributeValues: { ':current': current, ':next': current + count, ...extraValues },
                },
              },
              ...items(current + 1),
            ],
          }),
        );
        return current + 1;
      } catch (error) {
        if (attempt >= TRANSACTION_ATTEMPTS || !(isConditionFailure(error) || isTransactionConflict(error))) throw error;
        await backoff(attempt);
      }
    }
  }

  private async putNew(item: Item): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  }
}
