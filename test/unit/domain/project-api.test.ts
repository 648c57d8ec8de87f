import { describe, expect, it } from 'vitest';
import { DomainError, KeyNotFound, PlanNotAllowed, ProjectNotFound, VersionNotFound } from '#domain/errors';
import type { Caller, Key, Project, Version, Webhook } from '#domain/model';
import type { ProjectStore, RevokeOutcome } from '#domain/ports';
import {
  BULK_REVOKE_CONCURRENCY,
  listKeys,
  listVersions,
  listWebhooks,
  openProject,
  revokeBulk,
  revokeKey,
  rollback,
} from '#domain/project-api';

const NOW = 1_700_000_000;

interface StoredKey extends Key {
  projectId: string;
  seq: number;
}

/** ProjectStore in memory, with the contract the port documents. */
class FakeProjectStore implements ProjectStore {
  readonly projects = new Map<string, Project>();
  readonly keys = new Map<string, StoredKey>();
  readonly versions = new Map<string, Version[]>();
  readonly webhooks = new Map<string, Webhook[]>();
  readonly listKeysCalls: { afterSeq: number; limit: number }[] = [];
  revokeIfActiveInFlight = 0;
  revokeIfActivePeak = 0;

  addProject(project: Partial<Project> & { id: string }): Project {
    const full: Project = { ownerId: 'own_a', name: 'Script', plan: 'business', currentVersionId: null, keyCount: 0, createdAt: NOW, ...project };
    this.projects.set(full.id, full);
    return full;
  }

  addKeys(projectId: string, watermarks: string[]): StoredKey[] {
    const project = this.projects.get(projectId)!;
    return watermarks.map((watermark) => {
      project.keyCount++;
      const key: StoredKey = {
        id: `key_${projectId}_${project.keyCount}`,
        user_hash: 'u'.repeat(64),
        tier: 'standard',
        watermark,
        issued_at: NOW,
        expires_at: NOW + 86_400,
        max_uses: null,
        current_uses: 0,
        revoked: 0,
        projectId,
        seq: project.keyCount,
      };
      this.keys.set(key.id, key);
      return key;
    });
  }

  async getProject(projectId: string) {
    const project = this.projects.get(projectId);
    return project && { ...project };
  }

  async listKeysAfter(projectId: string, afterSeq: number, limit: number): Promise<Key[]> {
    this.listKeysCalls.push({ afterSeq, limit });
    return [...this.keys.values()]
      .filter((key) => key.projectId === projectId && key.seq > afterSeq)
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit)
      .map(({ projectId: _p, seq: _s, ...key }) => key);
  }

  async revokeKey(projectId: string, keyId: string): Promise<RevokeOutcome> {
    const key = this.keys.get(keyId);
    if (!key || key.projectId !== projectId) return 'not_found';
    if (key.revoked === 1) return 'already_revoked';
    key.revoked = 1;
    return 'revoked';
  }

  async *activeKeyIdsWithWatermark(projectId: string, watermark: string): AsyncIterable<string[]> {
    const ids = [...this.keys.values()].filter((key) => key.projectId === projectId && key.watermark === watermark && key.revoked === 0).map((key) => key.id);
    for (let i = 0; i < ids.length; i += 25) yield ids.slice(i, i + 25);
  }

  async revokeIfActive(projectId: string, keyId: string): Promise<boolean> {
    this.revokeIfActiveInFlight++;
    this.revokeIfActivePeak = Math.max(this.revokeIfActivePeak, this.revokeIfActiveInFlight);
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.revokeIfActiveInFlight--;
    return (await this.revokeKey(projectId, keyId)) === 'revoked';
  }

  async listVersions(projectId: string) {
    return [...(this.versions.get(projectId) ?? [])];
  }

  async setCurrentVersion(projectId: string, versionId: string) {
    const project = this.projects.get(projectId);
    if (!project || !(this.versions.get(projectId) ?? []).some((version) => version.id === versionId)) return false;
    project.currentVersionId = versionId;
    return true;
  }

  async listWebhooks(projectId: string) {
    return [...(this.webhooks.get(projectId) ?? [])];
  }
}

const version = (id: string, version_number: number): Version => ({ id, version_number, uploaded_at: NOW + version_number, size_bytes: 100, notes: '' });

async function domainError(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(error)}`);
  return error;
}

const owner: Caller = { ownerId: 'own_a', tokenHash: 'h'.repeat(64) };

describe('openProject', () => {
  it("gives the owner their Business plan project, and ProjectNotFound for an unknown or another owner's project", async () => {
    const store = new FakeProjectStore();
    store.addProject({ id: 'prj_mine' });
    store.addProject({ id: 'prj_theirs', ownerId: 'own_b' });
    expect((await openProject(store, owner, 'prj_mine')).id).toBe('prj_mine');
    const unknown = await domainError(openProject(store, owner, 'prj_nope'));
    const foreign = await domainError(openProject(store, owner, 'prj_theirs'));
    expect(unknown).toBeInstanceOf(ProjectNotFound);
    expect(foreign).toEqual(unknown);
  });

  it('refuses a project on another plan as PlanNotAllowed', async () => {
    const store = new FakeProjectStore();
    store.addProject({ id: 'prj_pro', plan: 'pro' });
    expect(await domainError(openProject(store, owner, 'prj_pro'))).toBeInstanceOf(PlanNotAllowed);
  });
});

describe('listKeys (spec §4.1)', () => {
  it('reads the page as the sequence range after the offset, and reports the total issued', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    const keys = store.addKeys('prj_1', Array.from({ length: 7 }, (_, i) => `${i}`.padStart(16, '0')));
    const page = await listKeys(store, { ...project }, { limit: 3, offset: 2 });
    expect(page.keys.map((key) => key.id)).toEqual(keys.slice(2, 5).map((key) => key.id));
    expect(page.total).toBe(7);
    expect(store.listKeysCalls).toEqual([{ afterSeq: 2, limit: 3 }]);
  });

  it('gives an empty page past the end, with the total', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    store.addKeys('prj_1', ['0'.repeat(16)]);
    expect(await listKeys(store, project, { limit: 50, offset: 1 })).toEqual({ keys: [], total: 1 });
  });
});

describe('revokeKey (spec §4.2)', () => {
  it('revokes a key of the project and answers { ok: true }', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    const [key] = store.addKeys('prj_1', ['0'.repeat(16)]);
    expect(await revokeKey(store, project, key!.id, NOW)).toEqual({ ok: true });
    expect(store.keys.get(key!.id)?.revoked).toBe(1);
  });

  it('is idempotent: revoking an already revoked key answers { ok: true } again', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    const [key] = store.addKeys('prj_1', ['0'.repeat(16)]);
    await revokeKey(store, project, key!.id, NOW);
    expect(await revokeKey(store, project, key!.id, NOW)).toEqual({ ok: true });
  });

  it('refuses an unknown key and a key of another project alike, as KeyNotFound', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    store.addProject({ id: 'prj_2' });
    const [other] = store.addKeys('prj_2', ['0'.repeat(16)]);
    expect(await domainError(revokeKey(store, project, 'key_nope', NOW))).toEqual(new KeyNotFound('key_nope'));
    expect(await domainError(revokeKey(store, project, other!.id, NOW))).toEqual(new KeyNotFound(other!.id));
    expect(store.keys.get(other!.id)?.revoked).toBe(0);
  });
});

describe('revokeBulk (spec §4.3)', () => {
  const wm = 'aaaaaaaaaaaaaaaa';

  it('revokes every active key of the project with the watermark and counts only those it changed', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    store.addProject({ id: 'prj_2' });
    const marked = store.addKeys('prj_1', Array(60).fill(wm));
    const others = store.addKeys('prj_1', Array(5).fill('bbbbbbbbbbbbbbbb'));
    const foreign = store.addKeys('prj_2', Array(4).fill(wm));
    store.keys.get(marked[0]!.id)!.revoked = 1;

    expect(await revokeBulk(store, project, wm, NOW)).toEqual({ ok: true, revoked_count: 59 });
    expect(marked.every((key) => store.keys.get(key.id)?.revoked === 1)).toBe(true);
    expect([...others, ...foreign].every((key) => store.keys.get(key.id)?.revoked === 0)).toBe(true);
  });

  it('counts 0 on a second run and when nothing matches', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    store.addKeys('prj_1', Array(3).fill(wm));
    await revokeBulk(store, project, wm, NOW);
    expect(await revokeBulk(store, project, wm, NOW)).toEqual({ ok: true, revoked_count: 0 });
    expect(await revokeBulk(store, project, 'cccccccccccccccc', NOW)).toEqual({ ok: true, revoked_count: 0 });
  });

  it('counts a key only when its own conditional write changed it, even when the index still listed it', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    const keys = store.addKeys('prj_1', Array(4).fill(wm));
    // A concurrent revoke lands between the index read and the write.
    const revokeIfActive = store.revokeIfActive.bind(store);
    store.revokeIfActive = async (projectId, keyId) => {
      if (keyId === keys[1]!.id) store.keys.get(keyId)!.revoked = 1;
      return revokeIfActive(projectId, keyId);
    };
    expect(await revokeBulk(store, project, wm, NOW)).toEqual({ ok: true, revoked_count: 3 });
  });

  it(`keeps at most ${BULK_REVOKE_CONCURRENCY} writes in flight`, async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    store.addKeys('prj_1', Array(300).fill(wm));
    expect(await revokeBulk(store, project, wm, NOW)).toEqual({ ok: true, revoked_count: 300 });
    expect(store.revokeIfActivePeak).toBeLessThanOrEqual(BULK_REVOKE_CONCURRENCY);
    expect(store.revokeIfActivePeak).toBeGreaterThan(1);
  });
});

describe('listVersions (spec §4.4)', () => {
  it('lists versions with the highest version_number first, with the current version id', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1', currentVersionId: 'ver_2' });
    store.versions.set('prj_1', [version('ver_2', 2), version('ver_10', 10), version('ver_1', 1), version('ver_3', 3)]);
    const result = await listVersions(store, project);
    expect(result.versions.map((v) => v.version_number)).toEqual([10, 3, 2, 1]);
    expect(result.current_version_id).toBe('ver_2');
  });
});

describe('rollback (spec §4.5)', () => {
  it('points the project at the requested version and answers with it', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1', currentVersionId: 'ver_2' });
    store.versions.set('prj_1', [version('ver_1', 1), version('ver_2', 2)]);
    expect(await rollback(store, project, 'ver_1')).toEqual({ ok: true, current_version_id: 'ver_1' });
    expect(store.projects.get('prj_1')?.currentVersionId).toBe('ver_1');
  });

  it('refuses an unknown version as VersionNotFound and leaves the pointer alone', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1', currentVersionId: 'ver_2' });
    store.addProject({ id: 'prj_2' });
    store.versions.set('prj_1', [version('ver_2', 2)]);
    store.versions.set('prj_2', [version('ver_x', 1)]);
    const error = await domainError(rollback(store, project, 'ver_x'));
    expect(error).toBeInstanceOf(VersionNotFound);
    expect(error.message).toBe('Version ver_x not found in this project');
    expect(store.projects.get('prj_1')?.currentVersionId).toBe('ver_2');
  });
});

describe('listWebhooks (spec §4.6)', () => {
  it('returns every configuration of the project as stored', async () => {
    const store = new FakeProjectStore();
    const project = store.addProject({ id: 'prj_1' });
    const hooks: Webhook[] = [
      { id: 'whk_1', url: 'https://discord.com/api/webhooks/1/a', events: '["version_deployed"]', enabled: 1, created_at: NOW, updated_at: NOW },
      { id: 'whk_2', url: 'https://discord.com/api/webhooks/2/b', events: '[]', enabled: 0, created_at: NOW, updated_at: NOW + 5 },
    ];
    store.webhooks.set('prj_1', hooks);
    expect(await listWebhooks(store, project)).toEqual({ webhooks: hooks });
  });
});
