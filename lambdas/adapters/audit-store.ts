import { type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditDetails, AuditEntry, AuditStatus, AuditSubject } from '#domain/audit';
import type { AuditLog } from '#domain/ports';
import { auditPut, keyOf } from './layout';
import { type Item, queryPages } from './paging';

/** Audit entries, per project and per owner (the layout's `AUDIT#…` partitions), newest first when listed. */
export class DynamoAuditStore implements AuditLog {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.db.send(new PutCommand(auditPut(this.tableName, entry)));
  }

  /** Only an entry that was written: a failed first write never turns into a half entry here. */
  async finish(entry: AuditEntry, status: Exclude<AuditStatus, 'started'>, outcome: AuditDetails): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keyOf.auditEntry(entry),
        UpdateExpression: 'SET #status = :status, outcome = :outcome',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': status, ':outcome': outcome },
      }),
    );
  }

  /** The newest `limit` entries of a project or an owner, newest first. */
  async list(subject: AuditSubject, limit: number): Promise<AuditEntry[]> {
    const entries: AuditEntry[] = [];
    const pages = queryPages(
      this.db,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keyOf.auditPartition(subject) },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
      },
      toAuditEntry,
    );
    for await (const page of pages) {
      entries.push(...page);
      if (entries.length >= limit) break;
    }
    return entries.slice(0, limit);
  }
}

/** The entry's own fields, in a fixed order; the key, entity and expiry stay in the table. */
function toAuditEntry(item: Item): AuditEntry {
  const subject: AuditSubject = typeof item.projectId === 'string' ? { projectId: item.projectId } : { ownerId: String(item.ownerId) };
  return {
    entryId: String(item.entryId),
    at: Number(item.at),
    ...subject,
    action: item.action as AuditEntry['action'],
    status: item.status as AuditStatus,
    source: item.source === 'dashboard' || item.source === 'discord' ? item.source : 'api',
    tokenId: typeof item.tokenId === 'string' ? item.tokenId : null,
    requestId: typeof item.requestId === 'string' ? item.requestId : null,
    target: (item.target ?? {}) as AuditDetails,
    outcome: (item.outcome ?? {}) as AuditDetails,
    ...(typeof item.caller === 'string' ? { caller: item.caller } : {}),
  };
}
