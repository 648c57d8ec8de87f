import { describe, expect, it } from 'vitest';
import { blacklistEntryId } from '#domain/blacklist';
import { callerOfToken, hashToken, type TokenScope } from '#domain/tokens';
import { ROUTES } from '#http/routes';
import { CALLER, expectError, invoke, memoryApi, PROJECT_ID, watchStoreCalls } from '#test-support/api-harness';
import { apiEvent, type RouteEntry } from '#test-support/fixtures';

/** A valid request of each route on the harness's project: one key, two versions. */
function apiWithData() {
  const api = memoryApi({ currentVersionId: 'ver_2' });
  const [key] = api.store.addKeys(PROJECT_ID, [{ watermark: 'aaaaaaaaaaaaaaaa' }]);
  api.store.addVersions(
    PROJECT_ID,
    { id: 'ver_1', version_number: 1, uploaded_at: 1, size_bytes: 1, notes: '' },
    { id: 'ver_2', version_number: 2, uploaded_at: 2, size_bytes: 2, notes: '' },
  );
  const bodies: Partial<Record<RouteEntry, unknown>> = {
    'issue-keys': { count: 2 },
    'reset-hwid': { key_id: key!.id },
    'update-key': { note: 'renewed' },
    'ban-key': { key_id: key!.id, reason: 'Shared the key' },
    'unban-key': { key_id: key!.id },
    'extend-key': { key_id: key!.id, duration: '7d' },
    'revoke-key': { key_id: key!.id },
    'revoke-bulk': { watermark: 'aaaaaaaaaaaaaaaa' },
    'add-to-blacklist': { discord_id: DISCORD_ID, reason: 'Chargeback' },
    rollback: { version_id: 'ver_1' },
    'trace-leak': 'print("WM_aaaaaaaaaaaaaaaa")',
  };
  const listed = { kind: 'discord_id', value: LISTED_DISCORD_ID } as const;
  const entryId = blacklistEntryId(listed);
  api.store.addBlacklistEntry(PROJECT_ID, { ...listed, id: entryId, reason: 'Leaked', addedBy: 'tok_1', createdAt: 1 });
  return { ...api, keyId: key!.id, entryId, bodies };
}

const DISCORD_ID = '80351110224678912';
const LISTED_DISCORD_ID = '80351110224678913';

const callerWith = (scope: TokenScope) => callerOfToken(CALLER.ownerId, hashToken(`sdt_${scope}-token`), scope);

const EXPECTED: Record<TokenScope, Record<RouteEntry, number>> = {
  read: {
    'list-keys': 200,
    'issue-keys': 403,
    'get-key': 200,
    'reset-hwid': 403,
    'update-key': 403,
    'ban-key': 403,
    'unban-key': 403,
    'extend-key': 403,
    'revoke-key': 403,
    'revoke-bulk': 403,
    'list-versions': 200,
    rollback: 403,
    'list-webhooks': 200,
    'get-stats': 200,
    'trace-leak': 200,
    'add-to-blacklist': 403,
    'list-blacklist': 200,
    'remove-from-blacklist': 403,
  },
  write: {
    'list-keys': 200,
    'issue-keys': 200,
    'get-key': 200,
    'reset-hwid': 200,
    'update-key': 200,
    'ban-key': 200,
    'unban-key': 200,
    'extend-key': 200,
    'revoke-key': 200,
    'revoke-bulk': 200,
    'list-versions': 200,
    rollback: 200,
    'list-webhooks': 200,
    'get-stats': 200,
    'trace-leak': 200,
    'add-to-blacklist': 200,
    'list-blacklist': 200,
    'remove-from-blacklist': 200,
  },
};

describe('token scopes × routes', () => {
  const cases = (['read', 'write'] as const).flatMap((scope) => ROUTES.map((route) => [route.entry, scope, EXPECTED[scope][route.entry]] as const));

  it.each(cases)('%s with a %s token answers %i', async (entry, scope, status) => {
    const api = apiWithData();
    const reply = await invoke(
      api.handlers[entry],
      apiEvent(entry, { projectId: PROJECT_ID, keyId: api.keyId, entryId: api.entryId, caller: callerWith(scope), body: api.bodies[entry] }),
    );
    expect(reply.status, reply.raw).toBe(status);
  });

  it('each route needs the scope of its access: read for every GET and for tracing a leak (a POST that changes nothing), write for every other POST and PATCH', () => {
    for (const route of ROUTES) {
      expect(route.scope, route.entry).toEqual({ scope: route.access, doing: route.doing, route: route.entry });
      expect(route.access).toBe(route.method === 'GET' || route.entry === 'trace-leak' ? 'read' : 'write');
    }
  });

  it.each([
    ['issue-keys', 'issuing keys'],
    ['reset-hwid', "resetting a key's machines"],
    ['update-key', 'editing a key'],
    ['ban-key', 'banning a key'],
    ['unban-key', 'unbanning a key'],
    ['extend-key', 'extending a key'],
    ['revoke-key', 'revoking a key'],
    ['revoke-bulk', 'revoking keys by watermark'],
    ['rollback', 'rolling back a version'],
    ['add-to-blacklist', 'adding to the blacklist'],
    ['remove-from-blacklist', 'removing from the blacklist'],
  ] as const)(
    'refuses %s to a read token with a 403 naming the write scope, before reading the body or the project, and changes nothing',
    async (entry, doing) => {
      const api = apiWithData();
      const called = watchStoreCalls(api.store);
      // A malformed body and an unknown project: the scope is what decides.
      const reply = await invoke(
        api.handlers[entry],
        apiEvent(entry, { projectId: 'prj_ffffffffffffffffffff', caller: callerWith('read'), body: '{not json' }),
      );
      expectError(reply, 403, `This token has the read scope; ${doing} needs the write scope. Use a token created with --scope write.`);
      expect(called()).toEqual(['countRequest']);
      expect(api.store.storedKey(api.keyId)?.revoked).toBe(0);
      expect((await api.store.getProject(PROJECT_ID))?.currentVersionId).toBe('ver_2');
      expect(api.store.auditEntries()).toEqual([]);
    },
  );

  it('takes an authorizer answer without a scope as a read token: it reads, and a write is refused with 403, nothing written', async () => {
    const api = apiWithData();
    const withoutScope = (entry: 'revoke-key' | 'list-keys') => {
      const event = apiEvent(entry, { projectId: PROJECT_ID, body: entry === 'revoke-key' ? api.bodies['revoke-key'] : undefined });
      delete event.requestContext.authorizer?.scope;
      return event;
    };
    expect((await invoke(api.handlers['list-keys'], withoutScope('list-keys'))).status).toBe(200);
    expect((await invoke(api.handlers['revoke-key'], withoutScope('revoke-key'))).status).toBe(403);
    expect(api.store.storedKey(api.keyId)?.revoked).toBe(0);
    expect(api.store.auditEntries()).toEqual([]);
  });
});
