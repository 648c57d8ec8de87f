import { randomBytes } from 'node:crypto';
import type { AuditAction, AuditDetails, AuditEntry, AuditSource, AuditStatus, AuditSubject } from './audit-entry';
import type { AuditLog, ProjectStore } from './ports';

export {
  AUDIT_ACTIONS,
  AUDIT_SOURCES,
  type AuditAction,
  type AuditDetails,
  type AuditEntry,
  type AuditSource,
  type AuditStatus,
  type AuditSubject,
} from './audit-entry';

/**
 * The audit trail: an entry for every change made through the API (a key revoked, keys revoked by watermark, a
 * version rolled back), kept per project, and for every token the dashboard creates or revokes, kept per owner.
 * An entry names who did it (the token id, never the token), the request, what the request named and what came
 * of it. Entries hold ids and the API's own field values only: no raw token, key value or webhook URL.
 */

/** Who made an API request: what its audit entries name. */
export interface ApiActor {
  tokenId: string;
  requestId: string;
  /**
   * Where the request came in: the API (the default) or the console, which calls the same endpoints; `shop` for a
   * shop's signed request (its `tokenId` is `shop:<connection id>`, which no API token id can be).
   */
  source?: Extract<AuditSource, 'api' | 'console' | 'shop'>;
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
