import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Version, Webhook } from '#domain/model';
import { callerOfToken, hashToken } from '#domain/tokens';
import { expectError, invoke, type MemoryApi, memoryApi, PROJECT_ID } from '#test-support/api-harness';
import { apiEvent, DEFAULT_CALLER } from '#test-support/fixtures';

let api: MemoryApi;
beforeEach(() => {
  api = memoryApi();
});

const version = (id: string, version_number: number, notes = ''): Version => ({
  id,
  version_number,
  uploaded_at: 1_699_000_000 + version_number,
  size_bytes: 2048 * version_number,
  notes,
});

describe('GET /v1/projects/:id/versions (spec §4.4)', () => {
  const listVersions = () => invoke(api.handlers['list-versions'], apiEvent('list-versions', { projectId: PROJECT_ID }));

  it('lists versions highest version_number first with exactly the spec fields, and the current version id', async () => {
    api = memoryApi({ currentVersionId: 'ver_b' });
    api.store.addVersions(PROJECT_ID, version('ver_a', 1, 'first'), version('ver_c', 3), version('ver_b', 2, 'fix'));
    const reply = await listVersions();
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      versions: [
        { id: 'ver_c', version_number: 3, uploaded_at: 1_699_000_003, size_bytes: 6144, notes: '' },
        { id: 'ver_b', version_number: 2, uploaded_at: 1_699_000_002, size_bytes: 4096, notes: 'fix' },
        { id: 'ver_a', version_number: 1, uploaded_at: 1_699_000_001, size_bytes: 2048, notes: 'first' },
      ],
      current_version_id: 'ver_b',
      total: 3,
    });
  });

  it('answers the page limit and offset ask for, with total, and every version without limit', async () => {
    api.store.addVersions(PROJECT_ID, ...[1, 2, 3].map((n) => version(`ver_${n}`, n)));
    const page = (query: Record<string, string>) => invoke(api.handlers['list-versions'], apiEvent('list-versions', { projectId: PROJECT_ID, query }));
    const numbers = (reply: { body: Record<string, unknown> }) => (reply.body.versions as Version[]).map((listed) => listed.version_number);
    const second = await page({ limit: '1', offset: '1' });
    expect([second.status, numbers(second), second.body.total]).toEqual([200, [2], 3]);
    expect(numbers(await page({ offset: '1' }))).toEqual([2, 1]);
  });

  it("lists only the project's versions", async () => {
    api.store.addVersions(PROJECT_ID, version('ver_a', 1));
    api.store.addProject({ id: 'prj_other', ownerId: 'own_other' });
    api.store.addVersions('prj_other', version('ver_theirs', 1));
    expect(((await listVersions()).body.versions as Version[]).map((listed) => listed.id)).toEqual(['ver_a']);
  });
});

describe('POST /v1/projects/:id/versions/rollback (spec §4.5)', () => {
  const roll = (body: unknown) => invoke(api.handlers.rollback, apiEvent('rollback', { projectId: PROJECT_ID, body }));

  it('moves the pointer to a version of the project and answers the new current_version_id', async () => {
    api = memoryApi({ currentVersionId: 'ver_b' });
    api.store.addVersions(PROJECT_ID, version('ver_a', 1), version('ver_b', 2));
    const reply = await roll({ version_id: 'ver_a' });
    expect([reply.status, reply.body]).toEqual([200, { ok: true, current_version_id: 'ver_a' }]);
    expect((await api.store.getProject(PROJECT_ID))?.currentVersionId).toBe('ver_a');
  });

  it("answers another project's version with 404, without Retry-After, and leaves the pointer", async () => {
    api = memoryApi({ currentVersionId: 'ver_a' });
    api.store.addVersions(PROJECT_ID, version('ver_a', 1));
    api.store.addProject({ id: 'prj_other', ownerId: 'own_other' });
    api.store.addVersions('prj_other', version('ver_other', 1));
    const reply = await roll({ version_id: 'ver_other' });
    expectError(reply, 404, 'Version ver_other not found in this project');
    expect(reply.headers).not.toHaveProperty('Retry-After');
    expect((await api.store.getProject(PROJECT_ID))?.currentVersionId).toBe('ver_a');
  });

  it('answers an empty object with 400 saying version_id is required, without moving the pointer', async () => {
    const setCurrentVersion = vi.spyOn(api.store, 'setCurrentVersion');
    expectError(await roll({}), 400, 'version_id is required');
    expect(setCurrentVersion).not.toHaveBeenCalled();
  });
});

describe('GET /v1/projects/:id/webhooks (spec §4.6)', () => {
  const listWebhooks = () => invoke(api.handlers['list-webhooks'], apiEvent('list-webhooks', { projectId: PROJECT_ID }));
  const webhook = (id: string, enabled: Webhook['enabled'], events: string[]): Webhook => ({
    id,
    url: `https://discord.com/api/webhooks/${id}/token`,
    events: JSON.stringify(events),
    enabled,
    created_at: 1_699_000_000,
    updated_at: 1_699_000_500,
  });

  it("lists every configuration of the project, and only the project's, with events as a JSON string and numeric enabled flags", async () => {
    api.store.addWebhooks(PROJECT_ID, webhook('whk_1', 1, ['version_deployed', 'key_abuse']), webhook('whk_2', 0, []));
    api.store.addProject({ id: 'prj_other', ownerId: 'own_other' });
    api.store.addWebhooks('prj_other', webhook('whk_theirs', 1, ['key_abuse']));
    const reply = await listWebhooks();
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      webhooks: [
        {
          id: 'whk_1',
          url: 'https://discord.com/api/webhooks/whk_1/token',
          events: '["version_deployed","key_abuse"]',
          enabled: 1,
          created_at: 1_699_000_000,
          updated_at: 1_699_000_500,
        },
        { id: 'whk_2', url: 'https://discord.com/api/webhooks/whk_2/token', events: '[]', enabled: 0, created_at: 1_699_000_000, updated_at: 1_699_000_500 },
      ],
      total: 2,
    });
  });

  it('answers the page limit and offset ask for, with total', async () => {
    api.store.addWebhooks(PROJECT_ID, webhook('whk_1', 1, []), webhook('whk_2', 1, []), webhook('whk_3', 1, []));
    const reply = await invoke(api.handlers['list-webhooks'], apiEvent('list-webhooks', { projectId: PROJECT_ID, query: { limit: '2', offset: '2' } }));
    expect([reply.status, (reply.body.webhooks as Webhook[]).length, reply.body.total]).toEqual([200, 1, 3]);
  });

  it('answers a read token with each URL redacted (this one is not Discord-shaped: all but its origin), a write token with the whole URL', async () => {
    api.store.addWebhooks(PROJECT_ID, webhook('whk_1', 1, ['key_abuse']));
    const readCaller = callerOfToken(DEFAULT_CALLER.ownerId, hashToken('sdt_read-token'), 'read');
    const asReader = await invoke(api.handlers['list-webhooks'], apiEvent('list-webhooks', { projectId: PROJECT_ID, caller: readCaller }));
    expect(asReader.status).toBe(200);
    expect((asReader.body as { webhooks: Webhook[] }).webhooks.map((hook) => hook.url)).toEqual(['https://discord.com/[redacted]']);
    expect(((await listWebhooks()).body as { webhooks: Webhook[] }).webhooks.map((hook) => hook.url)).toEqual(['https://discord.com/api/webhooks/whk_1/token']);
  });

  it('answers { webhooks: [] } for a project without any', async () => {
    const reply = await listWebhooks();
    expect([reply.status, reply.body]).toEqual([200, { webhooks: [], total: 0 }]);
  });
});
