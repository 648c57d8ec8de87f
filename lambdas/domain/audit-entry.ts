/**
 * What an audit entry holds, shared by the audit rules (audit.ts), the token rules and the storage ports: a leaf
 * module (it imports nothing), so the ports need not import the rules.
 */

export const AUDIT_ACTIONS = {
  revokeKey: 'key.revoke',
  revokeBulk: 'key.revoke_bulk',
  rollback: 'version.rollback',
  issueKeys: 'key.issue',
  resetHwid: 'key.reset_hwid',
  banKey: 'key.ban',
  unbanKey: 'key.unban',
  extendKey: 'key.extend',
  updateKey: 'key.update',
  addToBlacklist: 'blacklist.add',
  removeFromBlacklist: 'blacklist.remove',
  createToken: 'token.create',
  revokeToken: 'token.revoke',
  // The dashboard's writes (dashboard/audited.ts), entered with the identity that ran them; its `keys issue` is
  // entered as the API's key.issue, under the dashboard caller's identity.
  addWebhook: 'webhook.add',
  uploadVersion: 'version.upload',
  // The console's own writes (lambdas/http/console-api.ts), entered with the session's token id.
  editWebhook: 'webhook.edit',
  deleteWebhook: 'webhook.delete',
  testWebhook: 'webhook.test',
  migrateToken: 'token.migrate',
  linkDiscord: 'discord.link',
  unlinkDiscord: 'discord.unlink',
  // A console session opened with a token, and ended (sign-out, by the owner, or as the oldest past the limit).
  openSession: 'session.open',
  closeSession: 'session.close',
  // A shop's requests (lambdas/domain/shops/receive.ts), source `shop`, and its connection's changes.
  shopDeliver: 'shop.deliver',
  shopBan: 'shop.ban',
  shopUnban: 'shop.unban',
  shopAdd: 'shop.add',
  shopMap: 'shop.map',
  shopRemove: 'shop.remove',
} as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS];

/**
 * `completed` for a change written together with its entry. A change of many writes (a bulk revoke) is entered as
 * `started` before its first write and then `completed`, or `failed` with what it had done by then.
 */
export type AuditStatus = 'started' | 'completed' | 'failed';

type AuditValue = string | number | boolean | null;
/** In the API's own words: `target` what the request named (`key_id`, `watermark`, `version_id`), `outcome` what came of it. */
export type AuditDetails = Record<string, AuditValue>;

/** What an entry is about: a project (changes through the API) or an owner (its tokens). */
export type AuditSubject = { projectId: string; ownerId?: never } | { ownerId: string; projectId?: never };

export const AUDIT_SOURCES = ['api', 'dashboard', 'console', 'discord', 'shop'] as const;
export type AuditSource = (typeof AUDIT_SOURCES)[number];

export type AuditEntry = AuditSubject & {
  /** `aud_…`; ids sort in the order entries were made. */
  entryId: string;
  /** Unix seconds. */
  at: number;
  action: AuditAction;
  status: AuditStatus;
  /**
   * `console`: a change made in the publisher console, through the same endpoints, by the session's token;
   * `discord`: a buyer's command in the publisher's Discord server (the user's id is in `target` and `caller`).
   */
  source: AuditSource;
  /** The token that made the request; null for the dashboard and Discord. */
  tokenId: string | null;
  /** API Gateway's request id (the `x-amzn-RequestId` the caller got, and the access log's); null for the dashboard. */
  requestId: string | null;
  target: AuditDetails;
  outcome: AuditDetails;
  /**
   * Who ran a dashboard command: the AWS identity's ARN (STS GetCallerIdentity), or locally `local:<OS user>`;
   * `discord:<user id>` for a Discord user's command.
   * Absent on the API's entries (the token id names their caller) and on the entries of tokens created or revoked (#domain/tokens).
   */
  caller?: string;
};
