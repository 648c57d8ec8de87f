import { SESSION_ID_PATTERN, sessionIsLive } from '#domain/console-session';
import { KeyNotFound } from '#domain/errors';
import type { Caller } from '#domain/model';
import { closeSession } from '#domain/session-lifecycle';
import { widerLimits } from '#domain/tokens';
import { type ConsoleDeps, defineConsoleRoute, json, NO_CONTENT, read, write } from '../console-route';

/**
 * The owner's live console sessions, by token, on the Tokens page; ending one signs it out (its cookie then gets
 * 401). A limited session sees and ends the sessions of tokens within its own reach, as it does tokens.
 */

class SessionNotFound extends KeyNotFound {
  override readonly message: string;
  constructor(sessionId: string) {
    super(sessionId);
    this.message = `Session ${sessionId} not found among your live sessions`;
  }
}

/** The live sessions of the owner's working tokens within the caller's reach, oldest first. */
async function sessionsInReach(stores: ConsoleDeps['stores'], caller: Caller, now: number) {
  const tokens = new Set(
    (await stores.tokens.tokensOf(caller.ownerId)).filter((token) => widerLimits(token, caller) === undefined).map((token) => token.tokenId),
  );
  return (await stores.sessions.sessionsOf(caller.ownerId))
    .filter((session) => tokens.has(session.tokenId) && sessionIsLive(session, now))
    .sort((a, b) => a.createdAt - b.createdAt);
}

export const listSessions = defineConsoleRoute({
  method: 'GET',
  path: '/sessions',
  need: read('listing sessions'),
  everySession: true,
  run: async ({ stores, caller, now }) =>
    json({
      sessions: (await sessionsInReach(stores, caller, now)).map((listed) => ({
        session_id: listed.sessionId,
        token_id: listed.tokenId,
        opened_at: listed.createdAt,
        last_used_at: listed.lastUsedAt,
      })),
    }),
});

export const endSession = defineConsoleRoute({
  method: 'DELETE',
  path: '/sessions/{session_id}',
  need: write('ending a session'),
  everySession: true,
  run: async ({ stores, caller, now, params, trail }) => {
    const sessionId = params.session_id ?? '';
    const found = SESSION_ID_PATTERN.test(sessionId)
      ? (await sessionsInReach(stores, caller, now)).find((listed) => listed.sessionId === sessionId)
      : undefined;
    if (!found) throw new SessionNotFound(sessionId);
    await closeSession(stores, found.sessionHash, { ...found, ownerId: caller.ownerId }, trail.actor, 'ended by the owner', now);
    return NO_CONTENT;
  },
});
