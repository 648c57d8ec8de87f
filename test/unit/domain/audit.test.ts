import { describe, expect, it } from 'vitest';
import { apiEntry, dashboardEntry, newAuditEntryId, withCountedRevokes } from '#domain/audit';
import { MemoryStores } from '#test-support/memory-stores';

describe('audit entry ids', () => {
  it('sort in the order they were made, even many within one millisecond', () => {
    const ids = Array.from({ length: 500 }, () => newAuditEntryId());
    expect(ids.toSorted()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^aud_[0-9a-f]{20}$/);
  });
});

describe('audit entries', () => {
  it('of the API name the project, the token id and the request, completed unless said', () => {
    const entry = apiEntry(
      { actor: { tokenId: 'tok_0123456789abcdef0123', requestId: 'req-9' } },
      { projectId: 'prj_1', at: 1_700_000_000, action: 'key.revoke', target: { key_id: 'key_1' }, outcome: { revoked_count: 1 } },
    );
    expect(entry).toEqual({
      entryId: expect.stringMatching(/^aud_/),
      at: 1_700_000_000,
      projectId: 'prj_1',
      action: 'key.revoke',
      status: 'completed',
      source: 'api',
      tokenId: 'tok_0123456789abcdef0123',
      requestId: 'req-9',
      target: { key_id: 'key_1' },
      outcome: { revoked_count: 1 },
    });
  });

  it('of the dashboard name the owner, and neither a token nor a request made them', () => {
    const entry = dashboardEntry({
      ownerId: 'own_1',
      at: 1_700_000_000,
      action: 'token.create',
      target: { scope: 'read' },
      outcome: { token_id: 'tok_0123456789abcdef0123' },
    });
    expect(entry).toMatchObject({ ownerId: 'own_1', source: 'dashboard', tokenId: null, requestId: null, status: 'completed' });
    expect(entry).not.toHaveProperty('projectId');
  });
});

describe('withCountedRevokes', () => {
  it('counts the conditional revokes that changed a key, and leaves every other call to the store', async () => {
    const store = new MemoryStores();
    store.addProject({ id: 'prj_1', ownerId: 'own_1' });
    const [first, second] = store.addKeys('prj_1', [{}, {}]);
    const counted = withCountedRevokes(store);
    expect(await counted.store.revokeIfActive('prj_1', first!.id, 1)).toBe(true);
    expect(await counted.store.revokeIfActive('prj_1', first!.id, 2)).toBe(false);
    expect(await counted.store.revokeIfActive('prj_1', 'key_unknown', 3)).toBe(false);
    // Not a conditional revoke of a bulk revoke: not counted.
    expect(await counted.store.revokeKey('prj_1', second!.id, 4)).toBe('revoked');
    expect(counted.revoked()).toBe(1);
    expect((await counted.store.getProject('prj_1'))?.id).toBe('prj_1');
    expect(store.storedKey(second!.id)?.revoked).toBe(1);
  });
});
