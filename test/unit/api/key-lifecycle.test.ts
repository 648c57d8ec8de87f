import { beforeEach, describe, expect, it } from 'vitest';
import { DURATION_PRESETS, LIFETIME_EXPIRES_AT, UpdateKeyBody } from '#schemas/requests';
import { expectError, invoke, type MemoryApi, memoryApi, NOW, PROJECT_ID } from '#test-support/api-harness';
import { apiEvent } from '#test-support/fixtures';

/** The key lifecycle (DESIGN.md, "Key lifecycle: ban, extend, edit") through the handlers, on the in-memory stores. */

let api: MemoryApi;
let keyId: string;
let otherProjectKeyId: string;
beforeEach(() => {
  api = memoryApi();
  [keyId] = api.store.addKeys(PROJECT_ID, [{ expires_at: NOW + 3_600 }]).map((key) => key.id) as [string];
  api.store.addProject({ id: 'prj_other', ownerId: 'own_other' });
  [otherProjectKeyId] = api.store.addKeys('prj_other', [{}]).map((key) => key.id) as [string];
});

const post = (entry: 'ban-key' | 'unban-key' | 'extend-key', body: unknown) => invoke(api.handlers[entry], apiEvent(entry, { projectId: PROJECT_ID, body }));
const patch = (id: string, body: unknown) => invoke(api.handlers['update-key'], apiEvent('update-key', { projectId: PROJECT_ID, keyId: id, body }));
/** The error message holds `text` (the key ids and times around it vary). */
const says = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
const detail = async (id = keyId) =>
  (await invoke(api.handlers['get-key'], apiEvent('get-key', { projectId: PROJECT_ID, keyId: id }))).body.key as Record<string, unknown>;

describe('POST …/keys/ban and …/keys/unban', () => {
  it('bans with a reason and an end, shows the ban in the key detail, and enters key.ban; unban lifts it and enters key.unban', async () => {
    const until = NOW + 7 * 86_400;
    expect((await post('ban-key', { key_id: keyId, reason: 'Shared the key', until })).body).toEqual({ ok: true });
    expect((await detail()).ban).toEqual({ reason: 'Shared the key', until });
    expect(api.store.auditEntries().at(-1)).toMatchObject({ action: 'key.ban', target: { key_id: keyId, reason: 'Shared the key', until } });

    expect((await post('unban-key', { key_id: keyId })).body).toEqual({ ok: true });
    expect((await detail()).ban).toBeNull();
    expect(api.store.auditEntries().at(-1)).toMatchObject({ action: 'key.unban', target: { key_id: keyId } });
  });

  it('bans until unbanned without until, and a second ban replaces the reason and the end', async () => {
    await post('ban-key', { key_id: keyId, reason: 'First', until: NOW + 60 });
    await post('ban-key', { key_id: keyId, reason: 'Second' });
    expect((await detail()).ban).toEqual({ reason: 'Second', until: null });
  });

  it('refuses an until that is not in the future with a 400 naming until, and bans nothing', async () => {
    expectError(await post('ban-key', { key_id: keyId, reason: 'r', until: NOW }), 400, says('until must be in the future'));
    expect((await detail()).ban).toBeNull();
    expect(api.store.auditEntries()).toEqual([]);
  });

  it.each([
    [{ key_id: 'key_x' }, 'reason is required'],
    [{ key_id: 'key_x', reason: '' }, 'reason must not be empty'],
    [{ key_id: 'key_x', reason: 'r'.repeat(201) }, 'reason must be at most 200 characters'],
    [{ key_id: 'key_x', reason: 'line\u202Eevil' }, 'reason must be one line'],
    [{ reason: 'r' }, 'key_id is required'],
    [{ key_id: 'key_x', reason: 'r', until: 1.5 }, 'until must be a whole number'],
  ])('refuses %j with a 400 saying %s', async (body, message) => {
    expectError(await post('ban-key', body), 400, says(message));
  });

  it('answers 404 for a key of another project or none, and changes neither', async () => {
    expectError(await post('ban-key', { key_id: otherProjectKeyId, reason: 'r' }), 404, says('not found in this project'));
    expectError(await post('unban-key', { key_id: 'key_00000000000000000000' }), 404, says('not found in this project'));
    expect(api.store.storedKey(otherProjectKeyId)?.selling?.ban ?? null).toBeNull();
  });

  it('shows a ban whose until has passed as none: it is over without a write', async () => {
    await post('ban-key', { key_id: keyId, reason: 'A minute off', until: NOW + 60 });
    await api.store.setBan(PROJECT_ID, keyId, { reason: 'A minute off', until: NOW });
    expect((await detail()).ban).toBeNull();
  });
});

describe('POST …/keys/extend', () => {
  it('adds the duration to an expiry still in the future', async () => {
    const reply = await post('extend-key', { key_id: keyId, duration: '30d' });
    expect(reply.body).toEqual({ ok: true, expires_at: NOW + 3_600 + DURATION_PRESETS['30d'] });
    expect((await detail()).expires_at).toBe(NOW + 3_600 + DURATION_PRESETS['30d']);
    expect(api.store.auditEntries().at(-1)).toMatchObject({
      action: 'key.extend',
      target: { key_id: keyId, duration: DURATION_PRESETS['30d'] },
      outcome: { expires_at: NOW + 3_600 + DURATION_PRESETS['30d'] },
    });
  });

  it('counts from now for an expired key, so it runs for the whole duration again', async () => {
    const [expired] = api.store.addKeys(PROJECT_ID, [{ expires_at: NOW - 86_400 }]);
    expect((await post('extend-key', { key_id: expired?.id, duration: 120 })).body).toEqual({ ok: true, expires_at: NOW + 120 });
  });

  it('sets the fixed far-future expiry for lifetime', async () => {
    expect((await post('extend-key', { key_id: keyId, duration: 'lifetime' })).body).toEqual({ ok: true, expires_at: LIFETIME_EXPIRES_AT });
  });

  it('refuses a missing or unknown duration with a 400, and a key of another project with a 404', async () => {
    expectError(await post('extend-key', { key_id: keyId }), 400, says('duration is required'));
    expectError(await post('extend-key', { key_id: keyId, duration: '2w' }), 400, says('duration must be one of'));
    expectError(await post('extend-key', { key_id: otherProjectKeyId, duration: '1d' }), 404, says('not found in this project'));
  });
});

describe('PATCH …/keys/:key_id', () => {
  it('sets the fields sent, keeps the others, answers the key detail and enters key.update with the fields', async () => {
    const reply = await patch(keyId, { note: 'Renewed', discord_id: '123456789012345678', max_uses: 50, max_fingerprints: 2 });
    expect(reply.status).toBe(200);
    expect(reply.body.key).toMatchObject({ id: keyId, note: 'Renewed', discord_id: '123456789012345678', max_uses: 50, max_fingerprints: 2, ban: null });
    expect((await patch(keyId, { note: 'Renewed again' })).body.key).toMatchObject({ note: 'Renewed again', discord_id: '123456789012345678', max_uses: 50 });
    expect(api.store.auditEntries().at(-1)).toMatchObject({
      action: 'key.update',
      target: { key_id: keyId, fields: 'note' },
      outcome: { note: 'Renewed again' },
    });
  });

  it('clears each field sent as null', async () => {
    await patch(keyId, { note: 'n', discord_id: '123456789012345678', max_uses: 5, max_fingerprints: 1 });
    const cleared = await patch(keyId, { note: null, discord_id: null, max_uses: null, max_fingerprints: null });
    expect(cleared.body.key).toMatchObject({ note: null, discord_id: null, max_uses: null, max_fingerprints: null, fingerprints: [] });
  });

  it.each([
    [{}, 'Send at least one of note, discord_id, max_uses, max_fingerprints'],
    [{ note: 'n'.repeat(256) }, 'note must be at most 255 characters'],
    [{ discord_id: '1234' }, 'discord_id must be a Discord user id: 17 to 20 digits, or null'],
    [{ max_uses: 0 }, 'max_uses must be at least 1, or null'],
    [{ max_fingerprints: 11 }, 'max_fingerprints must be at most 10, or null'],
    [{ max_fingerprints: 0 }, 'max_fingerprints must be at least 1, or null'],
    [{ revoked: 0 }, 'Unknown field "revoked"'],
    [{ expires_at: NOW + 1 }, 'Unknown field "expires_at"'],
  ])('refuses %j with a 400 saying %s, and changes nothing', async (body, message) => {
    expectError(await patch(keyId, body), 400, says(message));
    expect(api.store.auditEntries()).toEqual([]);
  });

  it('answers 404 for a key of another project, an unknown key and an id this service never makes', async () => {
    expectError(await patch(otherProjectKeyId, { note: 'x' }), 404, says('not found in this project'));
    expectError(await patch('key_00000000000000000000', { note: 'x' }), 404, says('not found in this project'));
    expectError(await patch('no such id!', { note: 'x' }), 404, says('not found in this project'));
    expect(api.store.storedKey(otherProjectKeyId)?.selling?.note ?? null).toBeNull();
  });

  it('reads a body of only nulls as a change, and one of only absent fields as none', () => {
    expect(UpdateKeyBody.safeParse({ note: null }).success).toBe(true);
    expect(UpdateKeyBody.safeParse({}).success).toBe(false);
  });
});
