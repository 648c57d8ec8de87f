import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type ConsoleSession, sessionExpiresAt, sessionIdOf } from '#domain/console-session';
import type { Project } from '#domain/model';
import type { ConsoleReads, ListedSession, PendingUpload, SessionStore, UploadStore } from '#domain/ports';
import { scopeOf } from '#domain/tokens';
import { batchGetConsistent, itemKeyId } from './batch-get';
import { ifCondition, transact } from './conditions';
import { CHILD_PREFIX, ENTITY, keyIdOfPartition, keyOf, RETENTION_SECONDS } from './layout';
import { type Item, queryAll } from './paging';
import { issueOrderEntries, toProject } from './project-store';
import { TABLE } from './table-definition';

/** A session's place in its owner's list: what the Tokens page shows, and the hash that ends it. */
function listedItem(sessionHash: string, session: ConsoleSession, lastUsedAt: number) {
  const sessionId = sessionIdOf(sessionHash);
  return {
    ...keyOf.ownerSession({ ...session, sessionId }),
    entity: ENTITY.ownerSession,
    sessionHash,
    sessionId,
    tokenId: session.tokenId,
    createdAt: session.createdAt,
    lastUsedAt,
    [TABLE.ttlAttribute]: sessionExpiresAt({ ...session, lastUsedAt }),
  };
}

/**
 * The console's own items on the one table: sessions (by the hash of their secret, expiring by TTL at the
 * session's end), pending uploads, and the reads of its project list and key search.
 */
export class DynamoConsoleStore implements SessionStore, UploadStore, ConsoleReads {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /** The session and its place in its owner's list, in one transaction; both expire with the session. */
  async create(sessionHash: string, session: ConsoleSession): Promise<void> {
    await transact(this.db, {
      TransactItems: [
        {
          Put: {
            TableName: this.tableName,
            Item: { ...keyOf.consoleSession(sessionHash), entity: ENTITY.consoleSession, ...session, [TABLE.ttlAttribute]: sessionExpiresAt(session) },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { Put: { TableName: this.tableName, Item: listedItem(sessionHash, session, session.lastUsedAt) } },
      ],
    });
  }

  async get(sessionHash: string): Promise<ConsoleSession | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.consoleSession(sessionHash), ConsistentRead: true }));
    if (!item) return undefined;
    return {
      ownerId: String(item.ownerId),
      tokenHash: String(item.tokenHash),
      tokenId: String(item.tokenId),
      scope: scopeOf(item.scope),
      ...(typeof item.projectId === 'string' && { projectId: item.projectId }),
      ...(Array.isArray(item.routes) && { routes: item.routes.map(String) }),
      createdAt: Number(item.createdAt),
      lastUsedAt: Number(item.lastUsedAt),
    };
  }

  /**
   * The session's last use moves forward, and its TTL with it; a session deleted meanwhile stays deleted. Its place
   * in the owner's list follows (at most once a minute, as the touch), unless the session was deleted.
   */
  async touch(sessionHash: string, session: ConsoleSession, now: number): Promise<void> {
    const touched = await ifCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.consoleSession(sessionHash),
          UpdateExpression: 'SET lastUsedAt = :now, #ttl = :ttl',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':now': now, ':ttl': sessionExpiresAt({ ...session, lastUsedAt: now }) },
        }),
      ),
    );
    if (touched) await this.db.send(new PutCommand({ TableName: this.tableName, Item: listedItem(sessionHash, session, now) }));
  }

  async delete(sessionHash: string, session: Pick<ConsoleSession, 'ownerId' | 'tokenId' | 'createdAt'>): Promise<void> {
    await transact(this.db, {
      TransactItems: [
        { Delete: { TableName: this.tableName, Key: keyOf.consoleSession(sessionHash) } },
        { Delete: { TableName: this.tableName, Key: keyOf.ownerSession({ ...session, sessionId: sessionIdOf(sessionHash) }) } },
      ],
    });
  }

  async sessionsOf(ownerId: string, tokenId?: string): Promise<ListedSession[]> {
    return queryAll(
      this.db,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keyOf.owner(ownerId).pk, ':prefix': `${CHILD_PREFIX.session}${tokenId === undefined ? '' : `${tokenId}#`}` },
        ConsistentRead: true,
      },
      (item): ListedSession => ({
        sessionHash: String(item.sessionHash),
        sessionId: String(item.sessionId),
        tokenId: String(item.tokenId),
        createdAt: Number(item.createdAt),
        lastUsedAt: Number(item.lastUsedAt),
      }),
    );
  }

  async save(upload: PendingUpload): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keyOf.upload(upload.projectId, upload.uploadId),
          entity: ENTITY.upload,
          ...upload,
          [TABLE.ttlAttribute]: upload.createdAt + RETENTION_SECONDS.upload,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async find(projectId: string, uploadId: string): Promise<PendingUpload | undefined> {
    const { Item: item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.upload(projectId, uploadId), ConsistentRead: true }));
    if (!item) return undefined;
    return {
      uploadId: String(item.uploadId),
      projectId: String(item.projectId),
      sizeBytes: Number(item.sizeBytes),
      sha256: String(item.sha256),
      notes: String(item.notes ?? ''),
      createdAt: Number(item.createdAt),
    };
  }

  async remove(projectId: string, uploadId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: keyOf.upload(projectId, uploadId) }));
  }

  /** One query of the owner's list, then the projects in one consistent BatchGetItem (100 projects a request). */
  async projectsOf(ownerId: string): Promise<Project[]> {
    const listed = await queryAll(
      this.db,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keyOf.owner(ownerId).pk, ':prefix': CHILD_PREFIX.project },
      },
      (item) => keyOf.project(String(item.projectId)),
    );
    const items = await batchGetConsistent(this.db, this.tableName, listed);
    return listed
      .flatMap((key) => {
        const item = items.get(itemKeyId(key));
        return item && item.ownerId === ownerId ? [toProject(item)] : [];
      })
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  async keyIdsAfter(projectId: string, afterSeq: number, limit: number): Promise<{ keyId: string; seq: number }[]> {
    const entries = await issueOrderEntries(this.db, this.tableName, projectId, afterSeq, limit);
    return entries.map((entry) => ({ keyId: keyIdOfPartition(String(entry.pk)), seq: Number(entry[TABLE.indexes.byIssueOrder.sortKey]) }));
  }

  async keyIdsWithWatermark(projectId: string, watermark: string, limit: number): Promise<string[]> {
    const index = TABLE.indexes.byWatermark;
    return this.limitedIds(
      {
        IndexName: index.name,
        KeyConditionExpression: '#w = :w',
        ExpressionAttributeNames: { '#w': index.partitionKey },
        ExpressionAttributeValues: { ':w': `${projectId}#${watermark}` },
      },
      (entry) => keyIdOfPartition(String(entry.pk)),
      limit,
    );
  }

  /** Items `<word>#<keyId>` whose word starts with `prefix`; a key whose note has two such words appears once. */
  async keyIdsWithNoteWord(projectId: string, prefix: string, limit: number): Promise<string[]> {
    const ids = await this.limitedIds(
      {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keyOf.noteWordPartition(projectId), ':prefix': prefix },
      },
      (item) => String(item.sk).slice(String(item.sk).lastIndexOf('#') + 1),
      limit,
    );
    return [...new Set(ids)];
  }

  private async limitedIds(
    input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName'>,
    idOf: (item: Item) => string,
    limit: number,
  ): Promise<string[]> {
    const ids: string[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.db.send(new QueryCommand({ ...input, TableName: this.tableName, Limit: limit - ids.length, ExclusiveStartKey: startKey }));
      ids.push(...(page.Items ?? []).map(idOf));
      startKey = page.LastEvaluatedKey;
    } while (startKey && ids.length < limit);
    return ids;
  }
}
