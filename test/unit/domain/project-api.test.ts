import { describe, expect, it, vi } from 'vitest';
import type { AuditDetails, AuditTrail, ManyWritesAuditTrail } from '#domain/audit';
import { DomainError, KeyNotFound, PlanNotAllowed, ProjectNotFound, VersionNotFound } from '#domain/errors';
import type { Caller, Project, Version, Webhook } from '#domain/model';
import {
  BULK_REVOKE_ANSWER_RESERVE_MS,
  BULK_REVOKE_CONCURRENCY,
  listKeys,
  listVersions,
  listWebhooks,
  openProject,
  revokeBulk,
  revokeBulkAudited,
  revokeKey,
  rollback,
} from '#domain/project-api';
import { callerOfToken } from '#domain/tokens';
import type { RevokeBulkResponse } from '#schemas/responses';
import { NO_DEADLINE } from '#test-support/fixtures';
import { MemoryStores } from '#test-support/memory-stores';

const NOW = 1_700_000_000;

const owner: Caller = callerOfToken('own_a', 'h'.repeat(64), 'write');
const ACTOR = { tokenId: owner.tokenId, requestId: 'req-1' };
/** Where the rules enter their changes: the test's store, as the caller's request. */
const trailOf = (store: MemoryStores): AuditTrail => ({ log: store, actor: ACTOR });
/** A bulk revoke's trail; what it is told of entries it could not settle lands in `unsettled`. */
const bulkTrailOf = (store: MemoryStores, unsettled: { entryId: string; outcome: AuditDetails; error: unknown }[] = []): ManyWritesAuditTrail => ({
  ...trailOf(store),
  unsettled: (entry, outcome, error) => void unsettled.push({ entryId: entry.entryId, outcome, error }),
});
/** The fields every audit entry of a change through the API carries. */
const byTheCaller = { projectId: 'prj_1', at: NOW, source: 'api', tokenId: owner.tokenId, requestId: 'req-1' } as const;

/** A store holding the owner's Business plan project prj_1 (`project` overrides its fields). */
function storeWithProject(project: Partial<Project> = {}) {
  const store = new MemoryStores();
  return { store, project: store.addProject({ id: 'prj_1', ownerId: owner.ownerId, ...project }) };
}

/** Keys carrying these watermarks, issued in order to the project (prj_1 unless named). */
const keysWith = (store: MemoryStores, watermarks: string[], projectId = 'prj_1') =>
  store.addKeys(
    projectId,
    watermarks.map((watermark) => ({ watermark })),
  );

const version = (id: string, version_number: number): Version => ({ id, version_number, uploaded_at: NOW + version_number, size_bytes: 100, notes: '' });

async function domainError(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(error)}`);
  return error;
}

describe('openProject', () => {
  it("gives the owner their Business plan project, and ProjectNotFound for an unknown or another owner's project", async () => {
    const { store } = storeWithProject();
    store.addProject({ id: 'prj_theirs', ownerId: 'own_b' });
    expect((await openProject(store, owner, 'prj_1')).id).toBe('prj_1');
    const unknown = await domainError(openProject(store, owner, 'prj_nope'));
    const foreign = await domainError(openProject(store, owner, 'prj_theirs'));
    expect(unknown).toBeInstanceOf(ProjectNotFound);
    expect(foreign).toEqual(unknown);
  });

  it('refuses a project on another plan as PlanNotAllowed', async () => {
    const { store } = storeWithProject({ plan: 'pro' });
    expect(await domainError(openProject(store, owner, 'prj_1'))).toBeInstanceOf(PlanNotAllowed);
  });
});

describe('listKeys (spec §4.1)', () => {
  it('reads the page as the sequence range after the offset, and reports the total issued', async () => {
    const { store } = storeWithProject();
    const keys = keysWith(
      store,
      Array.from({ length: 7 }, (_, i) => `${i}`.padStart(16, '0')),
    );
    const listKeysAfter = vi.spyOn(store, 'listKeysAfter');
    const page = await listKeys(store, (await store.getProject('prj_1'))!, { limit: 3, offset: 2 });
    expect(page.keys.map((key) => key.id)).toEqual(keys.slice(2, 5).map((key) => key.id));
    expect(page.total).toBe(7);
    expect(listKeysAfter.mock.calls).toEqual([['prj_1', 2, 3]]);
  });

  it('gives an empty page past the end, with the total', async () => {
    const { store } = storeWithProject();
    keysWith(store, ['0'.repeat(16)]);
    expect(await listKeys(store, (await store.getProject('prj_1'))!, { limit: 50, offset: 1 })).toEqual({ keys: [], total: 1 });
  });
});

describe('revokeKey (spec §4.2)', () => {
  it('revokes a key of the project and answers { ok: true }', async () => {
    const { store, project } = storeWithProject();
    const [key] = keysWith(store, ['0'.repeat(16)]);
    expect(await revokeKey(store, project, key!.id, NOW, trailOf(store))).toEqual({ ok: true });
    expect(store.storedKey(key!.id)).toMatchObject({ revoked: 1, revokedAt: NOW });
  });

  it('enters the revoke with the change: who, which request, which key, one key revoked', async () => {
    const { store, project } = storeWithProject();
    const [key] = keysWith(store, ['0'.repeat(16)]);
    await revokeKey(store, project, key!.id, NOW, trailOf(store));
    expect(store.auditEntries()).toEqual([
      {
        ...byTheCaller,
        entryId: expect.stringMatching(/^aud_[0-9a-f]{20}$/),
        action: 'key.revoke',
        status: 'completed',
        target: { key_id: key!.id },
        outcome: { revoked_count: 1 },
      },
    ]);
  });

  it('is idempotent: revoking an already revoked key answers { ok: true } again', async () => {
    const { store, project } = storeWithProject();
    const [key] = keysWith(store, ['0'.repeat(16)]);
    await revokeKey(store, project, key!.id, NOW, trailOf(store));
    expect(await revokeKey(store, project, key!.id, NOW, trailOf(store))).toEqual({ ok: true });
    expect(store.auditEntries().map((entry) => entry.outcome)).toEqual([{ revoked_count: 1 }, { revoked_count: 0 }]);
  });

  it('refuses an unknown key and a key of another project alike, as KeyNotFound', async () => {
    const { store, project } = storeWithProject();
    store.addProject({ id: 'prj_2', ownerId: owner.ownerId });
    const [other] = keysWith(store, ['0'.repeat(16)], 'prj_2');
    expect(await domainError(revokeKey(store, project, 'key_nope', NOW, trailOf(store)))).toEqual(new KeyNotFound('key_nope'));
    expect(await domainError(revokeKey(store, project, other!.id, NOW, trailOf(store)))).toEqual(new KeyNotFound(other!.id));
    expect(store.storedKey(other!.id)?.revoked).toBe(0);
    expect(store.auditEntries()).toEqual([]);
  });
});

describe('revokeBulk (spec §4.3)', () => {
  const wm = 'aaaaaaaaaaaaaaaa';

  it('revokes every active key of the project with the watermark and counts only those it changed', async () => {
    const { store, project } = storeWithProject();
    store.addProject({ id: 'prj_2', ownerId: owner.ownerId });
    const marked = keysWith(store, Array(60).fill(wm));
    const others = keysWith(store, Array(5).fill('bbbbbbbbbbbbbbbb'));
    const foreign = keysWith(store, Array(4).fill(wm), 'prj_2');
    await store.revokeKey('prj_1', marked[0]!.id, NOW);

    expect(await revokeBulk(store, project, wm, NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 59, complete: true });
    expect(marked.every((key) => store.storedKey(key.id)?.revoked === 1)).toBe(true);
    expect([...others, ...foreign].every((key) => store.storedKey(key.id)?.revoked === 0)).toBe(true);
  });

  it('counts 0 on a second run and when nothing matches', async () => {
    const { store, project } = storeWithProject();
    keysWith(store, Array(3).fill(wm));
    await revokeBulk(store, project, wm, NOW, NO_DEADLINE);
    expect(await revokeBulk(store, project, wm, NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 0, complete: true });
    expect(await revokeBulk(store, project, 'cccccccccccccccc', NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 0, complete: true });
  });

  it('counts a key only when its own conditional write changed it, even when the index still listed it', async () => {
    const { store, project } = storeWithProject();
    const keys = keysWith(store, Array(4).fill(wm));
    // A concurrent revoke lands between the index read and the write.
    const revokeIfActive = store.revokeIfActive.bind(store);
    store.revokeIfActive = async (projectId, keyId, now) => {
      if (keyId === keys[1]!.id) await store.revokeKey(projectId, keyId, now);
      return revokeIfActive(projectId, keyId, now);
    };
    expect(await revokeBulk(store, project, wm, NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 3, complete: true });
  });

  it('stops starting revokes when the time left falls under the answer reserve, says complete: false, and repeats add up to every key', async () => {
    const { store, project } = storeWithProject();
    const keys = keysWith(store, Array(500).fill(wm));
    // A store slowed on purpose: each revoke costs 100 ms of a 28 s function, so one call cannot do 500.
    let elapsedMs = 0;
    const revokeIfActive = store.revokeIfActive.bind(store);
    store.revokeIfActive = async (projectId, keyId, now) => {
      elapsedMs += 100;
      await new Promise((resolve) => setTimeout(resolve, 0));
      return revokeIfActive(projectId, keyId, now);
    };
    const calls: RevokeBulkResponse[] = [];
    do {
      elapsedMs = 0;
      calls.push(await revokeBulk(store, project, wm, NOW, () => 28_000 - elapsedMs));
    } while (!calls.at(-1)!.complete);

    expect(calls.length).toBeGreaterThan(1);
    expect(calls.slice(0, -1).every((call) => !call.complete && call.revoked_count > 0)).toBe(true);
    expect(calls.reduce((sum, call) => sum + call.revoked_count, 0)).toBe(500);
    expect(keys.every((key) => store.storedKey(key.id)?.revoked === 1)).toBe(true);
  });

  it('starts no revoke at all when called with less than the reserve left, and says so', async () => {
    const { store, project } = storeWithProject();
    keysWith(store, Array(3).fill(wm));
    expect(await revokeBulk(store, project, wm, NOW, () => BULK_REVOKE_ANSWER_RESERVE_MS - 1)).toEqual({ ok: true, revoked_count: 0, complete: false });
    expect(await revokeBulk(store, project, wm, NOW, () => BULK_REVOKE_ANSWER_RESERVE_MS)).toEqual({ ok: true, revoked_count: 3, complete: true });
  });

  it(`keeps at most ${BULK_REVOKE_CONCURRENCY} writes in flight`, async () => {
    const { store, project } = storeWithProject();
    keysWith(store, Array(300).fill(wm));
    // Each write yields once before it lands, so writes the domain started together overlap.
    const revokeIfActive = store.revokeIfActive.bind(store);
    let inFlight = 0;
    let peak = 0;
    store.revokeIfActive = async (projectId, keyId, now) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 0));
      inFlight--;
      return revokeIfActive(projectId, keyId, now);
    };
    expect(await revokeBulk(store, project, wm, NOW, NO_DEADLINE)).toEqual({ ok: true, revoked_count: 300, complete: true });
    expect(peak).toBeLessThanOrEqual(BULK_REVOKE_CONCURRENCY);
    expect(peak).toBeGreaterThan(1);
  });
});

describe('revokeBulkAudited', () => {
  const wm = 'aaaaaaaaaaaaaaaa';

  it('enters the bulk revoke as completed with its revoked_count', async () => {
    const { store, project } = storeWithProject();
    keysWith(store, Array(30).fill(wm));
    expect(await revokeBulkAudited(store, project, wm, NOW, NO_DEADLINE, bulkTrailOf(store))).toEqual({ ok: true, revoked_count: 30, complete: true });
    expect(store.auditEntries()).toEqual([
      {
        ...byTheCaller,
        entryId: expect.any(String),
        action: 'key.revoke_bulk',
        status: 'completed',
        target: { watermark: wm },
        outcome: { revoked_count: 30, complete: true },
      },
    ]);
  });

  it('enters the bulk revoke as started before its first key is revoked', async () => {
    const { store, project } = storeWithProject();
    keysWith(store, [wm]);
    const revokeIfActive = store.revokeIfActive.bind(store);
    let entriesAtFirstWrite: unknown;
    store.revokeIfActive = async (projectId, keyId, now) => {
      entriesAtFirstWrite ??= store.auditEntries();
      return revokeIfActive(projectId, keyId, now);
    };
    await revokeBulkAudited(store, project, wm, NOW, NO_DEADLINE, bulkTrailOf(store));
    // Not 0: a started entry claims no count until it is settled.
    expect(entriesAtFirstWrite).toEqual([expect.objectContaining({ action: 'key.revoke_bulk', status: 'started', outcome: { revoked_count: null } })]);
  });

  it('answers 200 with its count when the final audit update fails after the keys were revoked, and hands the outcome to unsettled', async () => {
    const { store, project } = storeWithProject();
    const keys = keysWith(store, Array(12).fill(wm));
    store.finish = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };
    const unsettled: { entryId: string; outcome: AuditDetails; error: unknown }[] = [];
    expect(await revokeBulkAudited(store, project, wm, NOW, NO_DEADLINE, bulkTrailOf(store, unsettled))).toEqual({
      ok: true,
      revoked_count: 12,
      complete: true,
    });
    expect(keys.every((key) => store.storedKey(key.id)?.revoked === 1)).toBe(true);
    const [started] = store.auditEntries();
    expect(unsettled).toEqual([
      { entryId: started?.entryId, outcome: { revoked_count: 12, complete: true }, error: new Error('ProvisionedThroughputExceededException') },
    ]);
    expect(started).toMatchObject({ status: 'started', outcome: { revoked_count: null } });
  });

  it('marks a bulk revoke that fails part-way as failed with the number of keys it had revoked, and rethrows', async () => {
    const { store, project } = storeWithProject();
    const keys = keysWith(store, Array(60).fill(wm));
    // The 41st write fails: every write before it has landed (the domain waits for writes in flight before it throws).
    const revokeIfActive = store.revokeIfActive.bind(store);
    let writes = 0;
    store.revokeIfActive = async (projectId, keyId, now) => {
      if (++writes === 41) throw new Error('throttled');
      return revokeIfActive(projectId, keyId, now);
    };
    await expect(revokeBulkAudited(store, project, wm, NOW, NO_DEADLINE, bulkTrailOf(store))).rejects.toThrow('throttled');
    const revoked = keys.filter((key) => store.storedKey(key.id)?.revoked === 1).length;
    expect(revoked).toBeGreaterThanOrEqual(40);
    expect(store.auditEntries()).toEqual([expect.objectContaining({ action: 'key.revoke_bulk', status: 'failed', outcome: { revoked_count: revoked } })]);
  });

  it("rethrows the revoke's own failure when marking the entry failed fails too, and hands unsettled the count revoked by then", async () => {
    const { store, project } = storeWithProject();
    keysWith(store, Array(5).fill(wm));
    const revokeIfActive = store.revokeIfActive.bind(store);
    let writes = 0;
    store.revokeIfActive = async (projectId, keyId, now) => {
      if (++writes === 5) throw new Error('throttled');
      return revokeIfActive(projectId, keyId, now);
    };
    store.finish = async () => {
      throw new Error('audit down');
    };
    const unsettled: { entryId: string; outcome: AuditDetails; error: unknown }[] = [];
    await expect(revokeBulkAudited(store, project, wm, NOW, NO_DEADLINE, bulkTrailOf(store, unsettled))).rejects.toThrow('throttled');
    expect(unsettled).toEqual([expect.objectContaining({ outcome: { revoked_count: 4 }, error: new Error('audit down') })]);
  });
});

/** A list route's query without `limit`: every item, as before paging. */
const EVERY_ITEM = { offset: 0 };

describe('listVersions (spec §4.4)', () => {
  it('lists versions with the highest version_number first, with the current version id', async () => {
    const { store, project } = storeWithProject({ currentVersionId: 'ver_2' });
    store.addVersions('prj_1', version('ver_2', 2), version('ver_10', 10), version('ver_1', 1), version('ver_3', 3));
    const result = await listVersions(store, project, EVERY_ITEM);
    expect(result.versions.map((v) => v.version_number)).toEqual([10, 3, 2, 1]);
    expect(result.current_version_id).toBe('ver_2');
    expect(result.total).toBe(4);
  });

  it('pages with limit and offset, highest version_number first, total counting every version', async () => {
    const { store, project } = storeWithProject({ currentVersionId: 'ver_2' });
    store.addVersions('prj_1', ...[1, 2, 3, 4, 5].map((n) => version(`ver_${n}`, n)));
    const page = (limit: number | undefined, offset: number) => listVersions(store, project, { offset, ...(limit === undefined ? {} : { limit }) });
    expect((await page(2, 0)).versions.map((v) => v.version_number)).toEqual([5, 4]);
    expect((await page(2, 2)).versions.map((v) => v.version_number)).toEqual([3, 2]);
    expect(await page(2, 4)).toMatchObject({ total: 5, current_version_id: 'ver_2' });
    expect((await page(2, 4)).versions.map((v) => v.version_number)).toEqual([1]);
    expect((await page(undefined, 3)).versions.map((v) => v.version_number)).toEqual([2, 1]);
    expect((await page(2, 5)).versions).toEqual([]);
  });
});

describe('rollback (spec §4.5)', () => {
  it('points the project at the requested version and answers with it', async () => {
    const { store, project } = storeWithProject({ currentVersionId: 'ver_2' });
    store.addVersions('prj_1', version('ver_1', 1), version('ver_2', 2));
    expect(await rollback(store, project, 'ver_1', NOW, trailOf(store))).toEqual({ ok: true, current_version_id: 'ver_1' });
    expect((await store.getProject('prj_1'))?.currentVersionId).toBe('ver_1');
  });

  it('enters the rollback with the change: the version asked for, the previous and the new current version', async () => {
    const { store, project } = storeWithProject({ currentVersionId: 'ver_2' });
    store.addVersions('prj_1', version('ver_1', 1), version('ver_2', 2));
    await rollback(store, project, 'ver_1', NOW, trailOf(store));
    expect(store.auditEntries()).toEqual([
      {
        ...byTheCaller,
        entryId: expect.any(String),
        action: 'version.rollback',
        status: 'completed',
        target: { version_id: 'ver_1' },
        outcome: { previous_version_id: 'ver_2', current_version_id: 'ver_1' },
      },
    ]);
  });

  it('refuses an unknown version as VersionNotFound and leaves the pointer alone', async () => {
    const { store, project } = storeWithProject({ currentVersionId: 'ver_2' });
    store.addProject({ id: 'prj_2', ownerId: owner.ownerId });
    store.addVersions('prj_1', version('ver_2', 2));
    store.addVersions('prj_2', version('ver_x', 1));
    const error = await domainError(rollback(store, project, 'ver_x', NOW, trailOf(store)));
    expect(error).toBeInstanceOf(VersionNotFound);
    expect(error.message).toBe('Version ver_x not found in this project');
    expect((await store.getProject('prj_1'))?.currentVersionId).toBe('ver_2');
    expect(store.auditEntries()).toEqual([]);
  });
});

describe('listWebhooks (spec §4.6)', () => {
  it('returns every configuration of the project as stored to a write token', async () => {
    const { store, project } = storeWithProject();
    const hooks: Webhook[] = [
      { id: 'whk_1', url: 'https://discord.com/api/webhooks/1/a', events: '["version_deployed"]', enabled: 1, created_at: NOW, updated_at: NOW },
      { id: 'whk_2', url: 'https://discord.com/api/webhooks/2/b', events: '[]', enabled: 0, created_at: NOW, updated_at: NOW + 5 },
    ];
    store.addWebhooks('prj_1', ...hooks);
    expect(await listWebhooks(store, project, 'write', EVERY_ITEM)).toEqual({ webhooks: hooks, total: 2 });
  });

  it('pages with limit and offset in a stable order, total counting every configuration', async () => {
    const { store, project } = storeWithProject();
    const hooks = [1, 2, 3].map(
      (n): Webhook => ({ id: `whk_${n}`, url: `https://discord.com/api/webhooks/${n}/t`, events: '[]', enabled: 1, created_at: NOW, updated_at: NOW }),
    );
    store.addWebhooks('prj_1', ...hooks);
    const all = (await listWebhooks(store, project, 'write', EVERY_ITEM)).webhooks;
    const first = await listWebhooks(store, project, 'write', { limit: 2, offset: 0 });
    const second = await listWebhooks(store, project, 'write', { limit: 2, offset: 2 });
    expect(first.total).toBe(3);
    expect([...first.webhooks, ...second.webhooks]).toEqual(all);
  });

  it("gives a read token each URL without its token part, so read cannot post to the project's channels", async () => {
    const { store, project } = storeWithProject();
    const token = 'aBcD-efGh_1234567890';
    store.addWebhooks(
      'prj_1',
      { id: 'whk_1', url: `https://discord.com/api/webhooks/123456789012345678/${token}`, events: '[]', enabled: 1, created_at: NOW, updated_at: NOW },
      { id: 'whk_2', url: `https://hooks.example.com/post?secret=${token}`, events: '[]', enabled: 1, created_at: NOW, updated_at: NOW },
    );
    const { webhooks } = await listWebhooks(store, project, 'read', EVERY_ITEM);
    expect(webhooks.map((webhook) => webhook.url)).toEqual([
      'https://discord.com/api/webhooks/123456789012345678/[redacted]',
      'https://hooks.example.com/[redacted]',
    ]);
    expect(JSON.stringify(webhooks)).not.toContain(token);
  });
});
