import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { newId } from '#domain/ids';
import { hashKeyValue, keyIdOf, newKeyValue } from '#domain/key-values';
import type { Plan } from '#domain/model';
import type { NewScriptVersion, VersionWriter } from '#domain/scripts';
import type { EventName } from '#schemas/resources';
import { backoff, ifCondition, isConditionFailure, isTransactionConflict, TRANSACTION_ATTEMPTS } from './conditions';
import { ENTITY, keyIndexAttributes, keyOf } from './layout';
import type { Item } from './paging';
import { TABLE } from './table-definition';

/** Keys per transaction when issuing: DynamoDB allows 100 actions, one of which moves the project's counter. */
const KEYS_PER_TRANSACTION = 99;

export const KEY_LIFETIME_SECONDS = 30 * 24 * 3600;

/**
 * Numbering writers (key issuance, version upload) of one project take turns through a lease item, so that
 * their transactions on the project's counter never race: racing transactions fail each other and, with enough
 * writers, run out of retries. A lease outlives any holder's few transactions; a holder that died leaves it
 * to expire, and the counter's own condition keeps numbers dense and unique even then.
 */
export const SEQUENCE_LEASE = {
  seconds: 30,
  /** A writer waits this long for its turn, then fails saying so: longer than a crashed holder's lease. */
  waitMs: 90_000,
  /** Pause between tries to take the lease, doubling from `firstPauseMs` up to `maxPauseMs`, with jitter. */
  firstPauseMs: 20,
  maxPauseMs: 250,
} as const;

/** A key as `keys issue` hands it out: `key` is the raw value, shown this once. */
export interface IssuedKey {
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
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

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
   * Issue keys with the next numbers of the project's dense issue sequence. The counter moves in the same
   * transaction as the keys, conditioned on its old value, so the sequence never has a gap or a repeat.
   * Each key's raw value is returned here, once; the table keeps its SHA-256, and its id is derived from that.
   */
  async issueKeys(input: NewKeys): Promise<IssuedKey[]> {
    return this.inTurn(input.projectId, () => this.issueKeysInTurn(input));
  }

  private async issueKeysInTurn(input: NewKeys): Promise<IssuedKey[]> {
    const issued: IssuedKey[] = [];
    for (let start = 0; start < input.count; start += KEYS_PER_TRANSACTION) {
      const batch = Array.from({ length: Math.min(KEYS_PER_TRANSACTION, input.count - start) }, () => {
        const key = newKeyValue();
        return { id: keyIdOf(hashKeyValue(key)), watermark: input.watermark ?? randomBytes(8).toString('hex'), key };
      });
      await this.withSequence(input.projectId, 'keyCount', batch.length, (first) =>
        batch.map((key, i) => ({
          Put: {
            TableName: this.tableName,
            Item: {
              ...keyOf.key(key.id),
              entity: ENTITY.key,
              projectId: input.projectId,
              id: key.id,
              keyHash: hashKeyValue(key.key),
              user_hash: createHash('sha256').update(newId('own')).digest('hex'),
              tier: input.tier,
              watermark: key.watermark,
              issued_at: input.now,
              expires_at: input.expiresAt ?? input.now + KEY_LIFETIME_SECONDS,
              max_uses: input.maxUses,
              current_uses: 0,
              revoked: 0,
              [TABLE.indexes.byIssueOrder.sortKey]: first + i,
              ...keyIndexAttributes(input.projectId, key.watermark),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        })),
      );
      issued.push(...batch);
    }
    return issued;
  }

  /**
   * A dashboard upload's version item (its script already stored under `input.id`, see #domain/scripts): the next
   * version number, made current in the same transaction. `sha256` stays on the item only: the owner API's version
   * resource keeps exactly the spec's fields.
   */
  async uploadVersion(input: NewScriptVersion): Promise<{ id: string; version_number: number }> {
    const { id } = input;
    const versionNumber = await this.inTurn(input.projectId, () =>
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
      const extraSets = Object.keys(alsoSet).map((_, i) => `, #x${i} = :x${i}`).join('');
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

  /**
   * Run `work` holding the project's sequence lease (SEQUENCE_LEASE), waiting for it while another writer
   * holds it. The lease is a conditional put of its own item, not of the project, so waiting writers never
   * touch the item the holder's transactions write.
   */
  private async inTurn<T>(projectId: string, work: () => Promise<T>): Promise<T> {
    const holder = randomUUID();
    const lease = keyOf.sequenceLease(projectId);
    const giveUpAt = Date.now() + SEQUENCE_LEASE.waitMs;
    for (let attempt = 0; ; attempt++) {
      const now = Math.floor(Date.now() / 1000);
      const taken = await ifCondition(
        this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...lease, entity: ENTITY.sequenceLease, holder, until: now + SEQUENCE_LEASE.seconds, [TABLE.ttlAttribute]: now + 2 * SEQUENCE_LEASE.seconds },
            ConditionExpression: 'attribute_not_exists(pk) OR #until < :now',
            ExpressionAttributeNames: { '#until': 'until' },
            ExpressionAttributeValues: { ':now': now },
          }),
        ),
      );
      if (taken) break;
      if (Date.now() >= giveUpAt) {
        throw new Error(`Another writer kept project ${projectId}'s numbering busy for ${SEQUENCE_LEASE.waitMs / 1000} s; nothing was written, try again`);
      }
      const pause = Math.min(SEQUENCE_LEASE.maxPauseMs, SEQUENCE_LEASE.firstPauseMs * 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, pause / 2 + Math.random() * (pause / 2)));
    }
    try {
      return await work();
    } finally {
      // Only our own lease: if it expired and another writer took it, that one's stays.
      await ifCondition(
        this.db.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: lease,
            ConditionExpression: 'holder = :holder',
            ExpressionAttributeValues: { ':holder': holder },
          }),
        ),
      );
    }
  }

  private async putNew(item: Item): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  }
}
