import { randomBytes } from 'node:crypto';
import type { AuditLog, ProjectStore } from './ports';

/**
 * The audit trail: an entry for every change made through the API (a key revoked, keys revoked by watermark, a
 * version rolled back), kept per project, and for every token the dashboard creates or revokes, kept per owner.
 * An entry names who did it (the token id, never the token), the request, what the request named and what came
 * of it. Entries hold ids and the API's own field values only: no raw token, key value or webhook URL.
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
} as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS];

/**
 * `completed` for a change written together with its entry. A change of many writes (a bulk revoke) is entered as
 * `started` before its first write and then `completed`, or `failed` with what it had done by then.
 */
export type AuditStatus = 'started' | 'completed' | 'failed';

export type AuditValue = string | number | boolean | null;
/** In the API's own words: `target` what the request named (`key_id`, `watermark`, `version_id`), `outcome` what came of it. */
export type AuditDetails = Record<string, AuditValue>;

/** What an entry is about: a project (changes through the API) or an owner (its tokens). */
export type AuditSubject = { projectId: string; ownerId?: never } | { ownerId: string; projectId?: never };

export const AUDIT_SOURCES = ['api', 'dashboard', 'console', 'discord'] as const;
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
   * Absent on the API's entries (the token id names their caller) and on token entries of the token store.
   */
  caller?: string;
};

/** Who made an API request: what its audit entries name. */
export interface ApiActor {
  tokenId: string;
  requestId: string;
  /** Where the request came in: the API (the default) or the console, which calls the same endpoints. */
  source?: Extract<AuditSource, 'api' | 'console'>;
}

/** Where an endpoint's change is entered, and by whom it was asked. */
export interface AuditTrail {
  log: AuditLog;
  actor: ApiActor;
}

/** Logged when a change was made but its audit entry could not be settled; the line holds the outcome (and an alarm counts it). */
export const AUDIT_UNSETTLED = 'Change answered, but its audit entry could not be completed';

/** The trail of a change of many writes, entered as `started` and settled after them. */
export interface ManyWritesAuditTrail extends AuditTrail {
  /**
   * Told of an entry that could not be settled after its change was made: the change stands and the answer goes
   * out, so this is where the outcome the entry lacks is kept (the handler logs it).
   */
  unsettled(entry: AuditEntry, outcome: AuditDetails, error: unknown): void;
}

let lastMillis = 0;

/** Milliseconds (never twice the same in one process), then random bits: entries of the same second still list in order. */
export function newAuditEntryId(): string {
  lastMillis = Math.max(Date.now(), lastMillis + 1);
  return `aud_${lastMillis.toString(16).padStart(12, '0')}${randomBytes(4).toString('hex')}`;
}

export function apiEntry(
  { actor }: Pick<AuditTrail, 'actor'>,
  change: { projectId: string; at: number; action: AuditAction; target: AuditDetails; outcome: AuditDetails; status?: AuditStatus },
): AuditEntry {
  const { projectId, at, action, target, outcome, status = 'completed' } = change;
  const source = actor.source ?? 'api';
  return { entryId: newAuditEntryId(), at, projectId, action, status, source, tokenId: actor.tokenId, requestId: actor.requestId, target, outcome };
}

/** An owner's entry (a token created or revoked) made by a request of the console, named by the session's token. */
export function ownerEntryBy(
  actor: ApiActor,
  change: { ownerId: string; at: number; action: AuditAction; target: AuditDetails; outcome: AuditDetails },
): AuditEntry {
  const { ownerId, at, action, target, outcome } = change;
  const source = actor.source ?? 'api';
  return { entryId: newAuditEntryId(), at, ownerId, action, status: 'completed', source, tokenId: actor.tokenId, requestId: actor.requestId, target, outcome };
}

export function dashboardEntry(
  change: AuditSubject & { at: number; action: AuditAction; target: AuditDetails; outcome: AuditDetails; caller?: string },
): AuditEntry {
  const { at, action, target, outcome, caller } = change;
  const subject: AuditSubject = change.projectId !== undefined ? { projectId: change.projectId } : { ownerId: change.ownerId };
  return {
    entryId: newAuditEntryId(),
    at,
    ...subject,
    action,
    status: 'completed',
    source: 'dashboard',
    tokenId: null,
    requestId: null,
    target,
    outcome,
    ...(caller === undefined ? {} : { caller }),
  };
}

/** An entry of a Discord user's command: who asked is the user (`caller` and `target.discord_user_id`), through which request. */
export function discordEntry(change: {
  projectId: string;
  at: number;
  action: AuditAction;
  requestId: string;
  discordUserId: string;
  target: AuditDetails;
  outcome: AuditDetails;
}): AuditEntry {
  const { projectId, at, action, requestId, discordUserId, target, outcome } = change;
  return {
    entryId: newAuditEntryId(),
    at,
    projectId,
    action,
    status: 'completed',
    source: 'discord',
    tokenId: null,
    requestId,
    target: { ...target, discord_user_id: discordUserId },
    outcome,
    caller: `discord:${discordUserId}`,
  };
}

/**
 * The store with every conditional revoke that changed a key counted as it returns, so a bulk revoke cut short by
 * a failure still knows how many keys it revoked. Everything else goes to the store itself.
 */
export function withCountedRevokes(store: ProjectStore): { store: ProjectStore; revoked: () => number } {
  let revoked = 0;
  const revokeIfActive: ProjectStore['revokeIfActive'] = async (...args) => {
    const changed = await store.revokeIfActive(...args);
    if (changed) revoked += 1;
    return changed;
  };
  const counted = new Proxy(store, {
    get: (target, property) => {
      if (property === 'revokeIfActive') return revokeIfActive;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: counted, revoked: () => revoked };
}
