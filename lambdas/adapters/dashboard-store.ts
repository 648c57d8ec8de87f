import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  ScanCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { newId } from '#domain/ids';
import type { Plan } from '#domain/model';
import type { NewScriptVersion, VersionWriter } from '#domain/scripts';
import { batchOf, randomKeys } from '#domain/selling-keys';
import type { EventName } from '#schemas/resources';
import { backoff, ifCondition, isConditionFailure, isTransactionConflict, TRANSACTION_ATTEMPTS } from './conditions';
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

  /** The project, and its place in its owner's list (what the console's project list reads), in one transaction. */
  async createProject(input: { ownerId: string; name: string; plan: Plan; now: number }): Promise<string> {
    const projectId = newId('prj');
    const project = {
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
    };
    const ofOwner = { ...keyOf.ownerProject(input.ownerId, projectId), entity: ENTITY.ownerProject, projectId, createdAt: input.now };
    await this.db.send(
      new TransactWriteCommand({
        TransactItems: [project, ofOwner].map((Item) => ({ Put: { TableName: this.tableName, Item, ConditionExpression: 'attribute_not_exists(pk)' } })),
      }),
    );
    return projectId;
  }

  /**
   * Projects made before the owner's list existed get their place in it; one scan, run at every `npm start` on a
   * persisted table (as the token migration is), and finding nothing the second time.
   */
  async listLegacyProjects(): Promise<number> {
    let listed = 0;
    let startKey: Item | undefined;
    do {
      const page = await this.db.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: 'entity = :project',
          ExpressionAttributeValues: { ':project': ENTITY.project },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        const ofOwner = {
          ...keyOf.ownerProject(String(item.ownerId), String(item.id)),
          entity: ENTITY.ownerProject,
          projectId: item.id,
          createdAt: item.createdAt,
        };
        const put = this.db.send(new PutCommand({ TableName: this.tableName, Item: ofOwner, ConditionExpression: 'attribute_not_exists(pk)' }));
        if (await ifCondition(put)) listed += 1;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return listed;
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

  /** Change a webhook's events or its enabled flag; false when the project has no such webhook. */
  async updateWebhook(projectId: string, webhookId: string, change: { events?: EventName[]; enabled?: boolean }, now: number): Promise<boolean> {
    const sets = ['updated_at = :now'];
    const values: Record<string, unknown> = { ':now': now };
    if (change.events !== undefined) {
      sets.push('events = :events');
      values[':events'] = JSON.stringify(change.events);
    }
    if (change.enabled !== undefined) {
      sets.push('enabled = :enabled');
      values[':enabled'] = change.enabled ? 1 : 0;
    }
    const update = new UpdateCommand({
      TableName: this.tableName,
      Key: keyOf.webhook(projectId, webhookId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: values,
    });
    return ifCondition(this.db.send(update));
  }

  /** Remove a webhook; false when the project had no such webhook. */
  async deleteWebhook(projectId: string, webhookId: string): Promise<boolean> {
    const remove = new DeleteCommand({ TableName: this.tableName, Key: keyOf.webhook(projectId, webhookId), ConditionExpression: 'attribute_exists(pk)' });
    return ifCondition(this.db.send(remove));
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
