import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '#domain/audit';
import { ScopeMissing, TokenTooWide } from '#domain/errors';
import type { TokenWrites } from '#domain/ports';
import {
  hashToken,
  issueToken,
  newApiToken,
  parseBearer,
  requireScope,
  requireWithinReach,
  revokeToken,
  scopeOf,
  TOKEN_ID_PATTERN,
  tokenIdOf,
  widerReach,
} from '#domain/tokens';

describe('parseBearer (spec §5: Authorization: Bearer <API_TOKEN>)', () => {
  it('returns the token of a well-formed header', () => {
    expect(parseBearer('Bearer sdt_abc-DEF_123.~+/')).toBe('sdt_abc-DEF_123.~+/');
  });

  it.each(['bearer', 'BEARER', 'bEaReR'])('accepts the scheme in any case (%s)', (scheme) => {
    expect(parseBearer(`${scheme} tok123`)).toBe('tok123');
  });

  it('accepts token68 padding and surrounding whitespace', () => {
    expect(parseBearer('  Bearer   dG9rZW4==  ')).toBe('dG9rZW4==');
  });

  it.each([
    ['missing header', undefined],
    ['empty header', ''],
    ['scheme only', 'Bearer'],
    ['scheme and space only', 'Bearer '],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['token without scheme', 'sdt_abc'],
    ['scheme glued to token', 'Bearersdt_abc'],
    ['two tokens', 'Bearer abc def'],
    ['padding inside the token', 'Bearer ab=cd'],
    ['characters outside token68', 'Bearer abc$def'],
    ['a comma-joined second credential', 'Bearer abc, Bearer def'],
  ])('refuses a %s', (_case, header) => {
    expect(parseBearer(header)).toBeUndefined();
  });

  it.each([
    ['NUL', '\u0000'],
    ['escape', '\u001b'],
    ['DEL', '\u007f'],
  ])('refuses a token holding or ending in a control character (%s)', (_name, control) => {
    expect(parseBearer(`Bearer abc${control}def`)).toBeUndefined();
    expect(parseBearer(`Bearer abc${control}`)).toBeUndefined();
  });

  it.each(['\t', '\n', '\r'])('refuses whitespace control characters inside the token (%j)', (control) => {
    expect(parseBearer(`Bearer abc${control}def`)).toBeUndefined();
  });

  it('accepts a token of 512 characters and refuses one of 513 unread', () => {
    expect(parseBearer(`Bearer ${'a'.repeat(512)}`)).toBe('a'.repeat(512));
    expect(parseBearer(`Bearer ${'a'.repeat(513)}`)).toBeUndefined();
    expect(parseBearer(`Bearer ${'a'.repeat(100_000)}`)).toBeUndefined();
  });

  it('parses the tokens this service issues', () => {
    const token = newApiToken();
    expect(parseBearer(`Bearer ${token}`)).toBe(token);
  });
});

describe('token hashing (tokens are stored and logged only as SHA-256)', () => {
  it('is the hex SHA-256 of the token', () => {
    expect(hashToken('sdt_x')).toBe(createHash('sha256').update('sdt_x').digest('hex'));
    expect(hashToken('sdt_x')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('issues distinct, long random tokens', () => {
    const tokens = new Set(Array.from({ length: 100 }, () => newApiToken()));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(/^sdt_[A-Za-z0-9_-]{43}$/);
  });
});

describe('token ids', () => {
  it('are tok_ and 20 hex characters, the same for the same hash and different for different hashes', () => {
    const hash = hashToken(newApiToken());
    expect(tokenIdOf(hash)).toMatch(TOKEN_ID_PATTERN);
    expect(tokenIdOf(hash)).toBe(tokenIdOf(hash));
    expect(tokenIdOf(hashToken(newApiToken()))).not.toBe(tokenIdOf(hash));
  });

  it('show no part of the hash they are derived from', () => {
    const hash = hashToken('sdt_fixed');
    const id = tokenIdOf(hash).slice('tok_'.length);
    for (let start = 0; start + 8 <= id.length; start++) expect(hash).not.toContain(id.slice(start, start + 8));
  });
});

describe('token scopes', () => {
  it('reads a stored scope, and a token with no scope (stored before scopes, not migrated yet) as read, never write', () => {
    expect(scopeOf('read')).toBe('read');
    expect(scopeOf('write')).toBe('write');
    expect(scopeOf(undefined)).toBe('read');
    expect(scopeOf(null)).toBe('read');
  });

  it('reads a scope it does not know as the least, read', () => {
    for (const unknown of ['admin', 'WRITE', '', 1, true, {}]) expect(scopeOf(unknown)).toBe('read');
  });

  it('lets a write token do what needs read or write, and a read token only what needs read', () => {
    expect(() => requireScope('write', { scope: 'write', doing: 'revoking a key' })).not.toThrow();
    expect(() => requireScope('write', { scope: 'read', doing: 'listing keys' })).not.toThrow();
    expect(() => requireScope('read', { scope: 'read', doing: 'listing keys' })).not.toThrow();
    expect(() => requireScope('read', { scope: 'write', doing: 'revoking a key' })).toThrow(ScopeMissing);
  });

  it('names the scope the token has and the one the route needs', () => {
    expect(() => requireScope('read', { scope: 'write', doing: 'revoking a key' })).toThrow(
      'This token has the read scope; revoking a key needs the write scope. Use a token created with --scope write.',
    );
  });
});

describe('issueToken and revokeToken: the token rules make the audit entry, the store writes it with the token', () => {
  const written: { saved: unknown[]; revoked: unknown[] } = { saved: [], revoked: [] };
  const store: TokenWrites = {
    saveToken: async (token, entry) => void written.saved.push({ token, entry }),
    revokeToken: async (token, now, entry) => {
      written.revoked.push({ token, now, entry });
      return true;
    },
  };
  const tokenHash = hashToken('sdt_test');
  const tokenId = tokenIdOf(tokenHash);
  const actor = { tokenId: 'tok_0123456789abcdef0123', requestId: 'req-1', source: 'console' as const };

  it("saves the token with its limits and the owner's token.create entry naming the dashboard, and returns its id", async () => {
    written.saved.length = 0;
    const limits = { projectId: 'prj_1', routes: ['issue-keys', 'get-key'] };
    expect(await issueToken(store, { ownerId: 'own_1', tokenHash, now: 1_700_000_000, scope: 'read', limits })).toBe(tokenId);
    expect(written.saved).toEqual([
      {
        token: { ownerId: 'own_1', tokenId, tokenHash, scope: 'read', createdAt: 1_700_000_000, ...limits },
        entry: {
          entryId: expect.stringMatching(/^aud_/),
          at: 1_700_000_000,
          ownerId: 'own_1',
          action: 'token.create',
          status: 'completed',
          source: 'dashboard',
          tokenId: null,
          requestId: null,
          target: { scope: 'read', project_id: 'prj_1', routes: 'issue-keys,get-key' },
          outcome: { token_id: tokenId },
        },
      },
    ]);
  });

  it('writes a token without limits as write, and a console-made one under the request that made it', async () => {
    written.saved.length = 0;
    await issueToken(store, { ownerId: 'own_1', tokenHash, now: 5, by: actor });
    const [saved] = written.saved as { token: unknown; entry: AuditEntry }[];
    expect(saved?.token).toEqual({ ownerId: 'own_1', tokenId, tokenHash, scope: 'write', createdAt: 5 });
    expect(saved?.entry).toMatchObject({
      source: 'console',
      tokenId: actor.tokenId,
      requestId: 'req-1',
      target: { scope: 'write', project_id: null, routes: null },
    });
  });

  it("revokes with the owner's token.revoke entry, by the dashboard or by the console request", async () => {
    written.revoked.length = 0;
    const grant = { ownerId: 'own_1', tokenId, tokenHash, scope: 'write' as const };
    expect(await revokeToken(store, grant, 7)).toBe(true);
    expect(await revokeToken(store, grant, 8, actor)).toBe(true);
    const entries = (written.revoked as { entry: AuditEntry }[]).map(({ entry }) => entry);
    expect(entries).toMatchObject([
      { at: 7, ownerId: 'own_1', action: 'token.revoke', source: 'dashboard', tokenId: null, target: { token_id: tokenId }, outcome: { scope: 'write' } },
      { at: 8, ownerId: 'own_1', action: 'token.revoke', source: 'console', tokenId: actor.tokenId, requestId: 'req-1' },
    ]);
  });
});

describe('widerReach: a session makes no token reaching further than its own (DESIGN.md "Limits that protect every tenant")', () => {
  const unlimited = { scope: 'write' as const };
  const shopHook = { scope: 'write' as const, projectId: 'prj_a', routes: ['issue-keys'] };

  it('finds nothing wider than an unlimited write token', () => {
    expect(widerReach(shopHook, unlimited)).toBeUndefined();
    expect(widerReach(unlimited, unlimited)).toBeUndefined();
  });

  it('names the write scope asked of a read token', () => {
    expect(widerReach({ scope: 'write' }, { scope: 'read' })).toBe('the write scope (it has the read scope)');
    expect(widerReach({ scope: 'read' }, { scope: 'read' })).toBeUndefined();
  });

  it('names every project, or another project, asked of a project-limited token', () => {
    expect(widerReach({ scope: 'write', routes: ['issue-keys'] }, shopHook)).toBe('every project (it reaches project prj_a only)');
    expect(widerReach({ ...shopHook, projectId: 'prj_b' }, shopHook)).toBe('project prj_b (it reaches project prj_a only)');
  });

  it('names every route, or the routes outside, asked of a route-limited token; a subset is within', () => {
    expect(widerReach({ scope: 'write', projectId: 'prj_a' }, shopHook)).toBe('every route (it calls only issue-keys)');
    expect(widerReach({ ...shopHook, routes: ['issue-keys', 'list-keys'] }, shopHook)).toBe('list-keys (it calls only issue-keys)');
    expect(widerReach({ scope: 'read', routes: ['get-key'] }, { scope: 'write', routes: ['get-key', 'list-keys'] })).toBeUndefined();
  });

  it('requireWithinReach refuses a wider token with TokenTooWide saying how', () => {
    expect(() => requireWithinReach({ scope: 'write' }, shopHook)).toThrow(TokenTooWide);
    expect(() => requireWithinReach(shopHook, shopHook)).not.toThrow();
  });
});
