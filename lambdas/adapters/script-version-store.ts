import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { ScriptVersionStore } from '#domain/ports';
import { keyOf } from './layout';

/** What a script fetch reads of a project: its current version pointer, and the version item it names. */
export class DynamoScriptVersionStore implements ScriptVersionStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /**
   * Strongly consistent: after a rollback's 200 (a transaction on this item) or an upload's exit, every later read
   * returns the new pointer; an eventually consistent read could return the old one for a moment.
   */
  async currentVersionId(projectId: string): Promise<string | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ConsistentRead: true, ProjectionExpression: 'currentVersionId' }),
    );
    return typeof Item?.currentVersionId === 'string' ? Item.currentVersionId : undefined;
  }

  /** Version items are never changed, and a pointer names only a version written before it: any read finds it whole. */
  async version(projectId: string, versionId: string): Promise<{ versionNumber: number; sha256: string } | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.version(projectId, versionId), ConsistentRead: true }));
    return Item && { versionNumber: Number(Item.version_number), sha256: String(Item.sha256 ?? '') };
  }
}
