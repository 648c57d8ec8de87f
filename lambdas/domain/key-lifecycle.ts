import { PATH_ID_PATTERN } from '#schemas/formats';
import { type BanKeyBody, type ExtendKeyBody, LIFETIME_EXPIRES_AT, type UnbanKeyBody, type UpdateKeyBody } from '#schemas/requests';
import type { ExtendKeyResponse, KeyDetailResponse, OkResponse } from '#schemas/responses';
import { AUDIT_ACTIONS, type AuditDetails, type AuditTrail, apiEntry } from './audit';
import { InvalidInput, KeyNotFound } from './errors';
import { isBanned } from './key-check';
import type { KeyDetail, Project } from './model';
import type { KeyEdit, KeyStore } from './ports';

/**
 * The key lifecycle (DESIGN.md, "Key lifecycle: ban, extend, edit"): a ban with a reason the buyer reads, its end,
 * more time on a key, and an edit of what was set at issue. Each is one conditional write on the key item (the
 * loader's check judges the ban inside its own write, so nothing is read first), then its audit entry.
 */

/**
 * `POST /v1/projects/:id/keys/ban`: every check of the key is refused KEY_BANNED with `reason` until `until` (or an
 * unban). Banning a banned key replaces its reason and end. A revoked key stays revoked (revoked wins).
 */
export async function banKey(store: KeyStore, project: Project, body: BanKeyBody, now: number, trail: AuditTrail): Promise<OkResponse> {
  const until = body.until ?? null;
  if (until !== null && until <= now) {
    throw new InvalidInput(`until must be in the future: a Unix time after now (${now}); leave it out for a ban until unbanned`);
  }
  if (!(await store.setBan(project.id, body.key_id, { reason: body.reason, until }))) throw new KeyNotFound(body.key_id);
  await record(trail, project, now, AUDIT_ACTIONS.banKey, { key_id: body.key_id, reason: body.reason, until });
  return { ok: true };
}

/** `POST /v1/projects/:id/keys/unban`: the next check is judged as if there had been no ban. A key without one answers ok too. */
export async function unbanKey(store: KeyStore, project: Project, body: UnbanKeyBody, now: number, trail: AuditTrail): Promise<OkResponse> {
  if (!(await store.setBan(project.id, body.key_id, null))) throw new KeyNotFound(body.key_id);
  await record(trail, project, now, AUDIT_ACTIONS.unbanKey, { key_id: body.key_id });
  return { ok: true };
}

/**
 * `POST /v1/projects/:id/keys/extend`: `expires_at` becomes the later of now and the old `expires_at`, plus the
 * duration (`lifetime`: the fixed far-future value), so an expired key runs again for the whole duration.
 */
export async function extendKey(store: KeyStore, project: Project, body: ExtendKeyBody, now: number, trail: AuditTrail): Promise<ExtendKeyResponse> {
  const extension = body.duration === 'lifetime' ? { lifetimeAt: LIFETIME_EXPIRES_AT } : { seconds: body.duration, now };
  const expiresAt = await store.extendExpiry(project.id, body.key_id, extension);
  if (expiresAt === undefined) throw new KeyNotFound(body.key_id);
  await record(trail, project, now, AUDIT_ACTIONS.extendKey, { key_id: body.key_id, duration: body.duration }, { expires_at: expiresAt });
  return { ok: true, expires_at: expiresAt };
}

/**
 * `PATCH /v1/projects/:id/keys/:key_id`: the fields sent are set (null clears one), the rest stay. A machine limit
 * lowered below the machines bound keeps them bound and binds no new one until a reset (the check's binding
 * condition sees the new limit).
 */
export async function updateKey(
  store: KeyStore,
  project: Project,
  keyId: string,
  body: UpdateKeyBody,
  now: number,
  trail: AuditTrail,
): Promise<KeyDetailResponse> {
  const edit: KeyEdit = {
    ...(body.note !== undefined && { note: body.note }),
    ...(body.discord_id !== undefined && { discordId: body.discord_id }),
    ...(body.max_uses !== undefined && { maxUses: body.max_uses }),
    ...(body.max_fingerprints !== undefined && { maxFingerprints: body.max_fingerprints }),
  };
  // An id this service could never have made names no key: answered before any write.
  const key = PATH_ID_PATTERN.test(keyId) ? await store.editKey(project.id, keyId, edit) : undefined;
  if (!key) throw new KeyNotFound(keyId);
  await record(trail, project, now, AUDIT_ACTIONS.updateKey, { key_id: keyId, fields: Object.keys(body).sort().join(',') }, { ...body });
  return { key: shownAt(key, now) };
}

/** A key's detail as the API shows it at `now`: a ban whose `until` has passed is over, so it shows as none. */
export const shownAt = (key: KeyDetail, now: number): KeyDetail => ({ ...key, ban: isBanned(key.ban, now) ? key.ban : null });

function record(
  trail: AuditTrail,
  project: Project,
  now: number,
  action: (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS],
  target: AuditDetails,
  outcome: AuditDetails = {},
): Promise<void> {
  return trail.log.record(apiEntry(trail, { projectId: project.id, at: now, action, target, outcome }));
}
