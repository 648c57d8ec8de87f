import type { Key, Project, Version, Webhook } from './model';

export type RevokeOutcome = 'revoked' | 'already_revoked' | 'not_found';

/** What the API's rules need from storage. The DynamoDB repository implements it; tests may fake it. */
export interface ProjectStore {
  getProject(projectId: string): Promise<Project | undefined>;
  /** Keys with issue sequence in (afterSeq, afterSeq + limit], in issue order. */
  listKeysAfter(projectId: string, afterSeq: number, limit: number): Promise<Key[]>;
  /** Revoke one key; tells apart a key that was already revoked from one that does not exist. */
  revokeKey(projectId: string, keyId: string, now: number): Promise<RevokeOutcome>;
  /** Active keys carrying `watermark` in this project, in pages as the index returns them. */
  activeKeyIdsWithWatermark(projectId: string, watermark: string): AsyncIterable<string[]>;
  /** Revoke the key only if it is still active; true when this call made the change. */
  revokeIfActive(projectId: string, keyId: string, now: number): Promise<boolean>;
  listVersions(projectId: string): Promise<Version[]>;
  /** Point the project at `versionId` atomically with the check that the version is the project's; false when it is not. */
  setCurrentVersion(projectId: string, versionId: string): Promise<boolean>;
  listWebhooks(projectId: string): Promise<Webhook[]>;
}

export interface TokenStore {
  /** The owner a token hash belongs to, if any. */
  findTokenOwner(tokenHash: string): Promise<string | undefined>;
}

export interface RateLimitStore {
  /**
   * Count one request in the fixed window opened at `windowStart`, unless `limit` is already reached.
   * Returns the count after this request, or undefined when the request was refused.
   */
  countRequest(bucket: string, windowStart: number, limit: number, expiresAt: number): Promise<number | undefined>;
}
