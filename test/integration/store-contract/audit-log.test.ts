import { expect, it } from 'vitest';
import { type AuditEntry, apiEntry, dashboardEntry } from '#domain/audit';
import { FIXED_NOW } from '#test-support/fixtures';
import { forEachImplementation, type StoreWorld } from './subjects';

/** AuditLog (lambdas/domain/ports.ts): MemoryStores and DynamoAuditStore, one contract. */

const actor = { tokenId: 'tok_contract', requestId: 'req-contract' };
const bulkEntry = (projectId: string): AuditEntry =>
  apiEntry({ actor }, { projectId, at: FIXED_NOW, action: 'key.revoke_bulk', target: { watermark: 'aaaa000000000001' }, outcome: {}, status: 'started' });

forEachImplementation('stores', (world: () => StoreWorld) => {
  it('writes an entry whole, and only under its project', async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const entry = bulkEntry(projectId);
    await world().audit.record(entry);
    expect(await world().auditEntries({ projectId })).toEqual([entry]);
    expect(await world().auditEntries({ projectId: other })).toEqual([]);
  });

  it("writes an owner's entry under the owner, with the caller it names", async () => {
    const ownerId = `own_contract_${Math.random().toString(16).slice(2)}`;
    const entry = dashboardEntry({ ownerId, at: FIXED_NOW, action: 'token.create', target: { scope: 'read' }, outcome: { token_id: 'tok_1' }, caller: 'ci' });
    await world().audit.record(entry);
    expect(await world().auditEntries({ ownerId })).toEqual([entry]);
  });

  it('refuses an entry whose id is written already, keeping the first', async () => {
    const projectId = await world().newProject();
    const entry = bulkEntry(projectId);
    await world().audit.record(entry);
    await expect(world().audit.record({ ...entry, action: 'key.revoke' })).rejects.toThrow();
    expect(await world().auditEntries({ projectId })).toEqual([entry]);
  });

  it('settles a started entry with its status and outcome', async () => {
    const projectId = await world().newProject();
    const entry = bulkEntry(projectId);
    await world().audit.record(entry);
    await world().audit.finish(entry, 'failed', { revoked: 3, error: 'DeadlineExceeded' });
    expect(await world().auditEntries({ projectId })).toEqual([{ ...entry, status: 'failed', outcome: { revoked: 3, error: 'DeadlineExceeded' } }]);
  });

  it('settles no entry that was never written, and writes none', async () => {
    const projectId = await world().newProject();
    await expect(world().audit.finish(bulkEntry(projectId), 'completed', { revoked: 0 })).rejects.toThrow();
    expect(await world().auditEntries({ projectId })).toEqual([]);
  });

  it('fails a revoke whose entry id is written already, leaving the key active', async () => {
    const projectId = await world().newProject();
    const [key] = await world().issueKeys(projectId, 1);
    const entry = apiEntry({ actor }, { projectId, at: FIXED_NOW, action: 'key.revoke', target: { key_id: key?.id ?? '' }, outcome: {} });
    await world().audit.record(entry);
    await expect(world().projects.revokeKey(projectId, key?.id ?? '', FIXED_NOW, entry)).rejects.toThrow();
    expect((await world().projects.listKeysAfter(projectId, 0, 1))[0]?.revoked).toBe(0);
  });
});
