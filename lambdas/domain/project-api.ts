import type { ListKeysQuery } from '#schemas/requests';
import type {
  ListKeysResponse,
  ListVersionsResponse,
  ListWebhooksResponse,
  OkResponse,
  RevokeBulkResponse,
  RollbackResponse,
} from '#schemas/responses';
import { authorizeProjectAccess } from './access';
import { mapPagesBounded } from './concurrency';
import { KeyNotFound, VersionNotFound } from './errors';
import type { Caller, Project } from './model';
import type { ProjectStore } from './ports';

/** Conditional writes a bulk revoke keeps in flight: enough for 10,000 keys well inside API Gateway's 29 s. */
export const BULK_REVOKE_CONCURRENCY = 64;

/**
 * A bulk revoke stops starting writes when less than this is left of its function's time: the writes in flight
 * (64 single-item updates) and the answer need a fraction of it, so the caller always learns what was done,
 * never a timeout.
 */
export const BULK_REVOKE_ANSWER_RESERVE_MS = 8_000;

/** The project the caller may use, or the 404/403 the spec asks for (spec §4, §5). */
export async function openProject(store: ProjectStore, caller: Caller, projectId: string): Promise<Project> {
  return authorizeProjectAccess(await store.getProject(projectId), caller.ownerId);
}

/** Spec §4.1. `offset` is a position in issue order, so it maps to a sequence range, not a skip. */
export async function listKeys(store: ProjectStore, project: Project, query: ListKeysQuery): Promise<ListKeysResponse> {
  const keys = await store.listKeysAfter(project.id, query.offset, query.limit);
  return { keys, total: project.keyCount };
}

/** Spec §4.2. Revoking an already revoked key succeeds again (idempotent), so a retried call is safe. */
export async function revokeKey(store: ProjectStore, project: Project, keyId: string, now: number): Promise<OkResponse> {
  const outcome = await store.revokeKey(project.id, keyId, now);
  if (outcome === 'not_found') throw new KeyNotFound(keyId);
  return { ok: true };
}

/**
 * Spec §4.3. Revokes every active key of this project carrying the watermark. `revoked_count` counts only
 * keys this call changed: each write is conditional on the key still being active, so two concurrent bulk
 * revokes never both count a key. No match is a success with 0. When the time budget runs out first
 * (`timeLeftMs` below BULK_REVOKE_ANSWER_RESERVE_MS), no further write starts and the answer says
 * `complete: false`: the caller repeats the call for the rest, and the repeat counts only the keys it changes.
 */
export async function revokeBulk(store: ProjectStore, project: Project, watermark: string, now: number, timeLeftMs: () => number): Promise<RevokeBulkResponse> {
  const { results, stopped } = await mapPagesBounded(
    store.activeKeyIdsWithWatermark(project.id, watermark),
    BULK_REVOKE_CONCURRENCY,
    (keyId) => store.revokeIfActive(project.id, keyId, now),
    () => timeLeftMs() < BULK_REVOKE_ANSWER_RESERVE_MS,
  );
  return { ok: true, revoked_count: results.filter(Boolean).length, complete: !stopped };
}

/** Spec §4.4: highest `version_number` first, as the spec's sample shows. */
export async function listVersions(store: ProjectStore, project: Project): Promise<ListVersionsResponse> {
  const versions = await store.listVersions(project.id);
  versions.sort((a, b) => b.version_number - a.version_number);
  return { versions, current_version_id: project.currentVersionId };
}

/** Spec §4.5. Rolling back to the current version is a no-op success. */
export async function rollback(store: ProjectStore, project: Project, versionId: string): Promise<RollbackResponse> {
  if (!(await store.setCurrentVersion(project.id, versionId))) throw new VersionNotFound(versionId);
  return { ok: true, current_version_id: versionId };
}

/** Spec §4.6: every configuration of the project, read-only. */
export async function listWebhooks(store: ProjectStore, project: Project): Promise<ListWebhooksResponse> {
  return { webhooks: await store.listWebhooks(project.id) };
}
