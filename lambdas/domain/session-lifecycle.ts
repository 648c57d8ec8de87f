import { type ApiActor, AUDIT_ACTIONS, ownerEntryBy } from './audit';
import { type ConsoleSession, sessionIdOf, sessionsToEnd } from './console-session';
import type { AuditLog, SessionStore } from './ports';

/**
 * A console session opened and ended, each entered in the owner's audit trail (`session.open`, `session.close`), and
 * at most MAX_SESSIONS_PER_TOKEN live per token: opening another ends the oldest first (DESIGN.md "Limits that
 * protect every tenant"). Two sign-ins racing at the last place can both stay.
 */

/** Why a session ended, as its `session.close` entry says. */
export type SessionEnd = 'sign-out' | 'ended by the owner' | 'oldest past the limit';

export async function openSession(
  stores: { sessions: SessionStore; audit: AuditLog },
  sessionHash: string,
  session: ConsoleSession,
  actor: ApiActor,
): Promise<void> {
  for (const old of sessionsToEnd(await stores.sessions.sessionsOf(session.ownerId, session.tokenId), session.createdAt)) {
    await closeSession(stores, old.sessionHash, { ...old, ownerId: session.ownerId }, actor, 'oldest past the limit', session.createdAt);
  }
  await stores.sessions.create(sessionHash, session);
  await stores.audit.record(
    ownerEntryBy(actor, {
      ownerId: session.ownerId,
      at: session.createdAt,
      action: AUDIT_ACTIONS.openSession,
      target: { session_id: sessionIdOf(sessionHash), token_id: session.tokenId },
      outcome: { scope: session.scope },
    }),
  );
}

export async function closeSession(
  stores: { sessions: SessionStore; audit: AuditLog },
  sessionHash: string,
  session: Pick<ConsoleSession, 'ownerId' | 'tokenId' | 'createdAt'>,
  actor: ApiActor,
  reason: SessionEnd,
  now: number,
): Promise<void> {
  await stores.sessions.delete(sessionHash, session);
  await stores.audit.record(
    ownerEntryBy(actor, {
      ownerId: session.ownerId,
      at: now,
      action: AUDIT_ACTIONS.closeSession,
      target: { session_id: sessionIdOf(sessionHash), token_id: session.tokenId },
      outcome: { reason },
    }),
  );
}
