import { redactWebhookUrl } from '#domain/webhooks/discord-webhook-url';
import type { ListKeysQuery, ListPageQuery, StatsQuery } from '#schemas/requests';
import type {
  ListKeysResponse,
  ListVersionsResponse,
  ListWebhooksResponse,
  OkResponse,
  RevokeBulkResponse,
  RollbackResponse,
  StatsResponse,
} from '#schemas/responses';
import { authorizeProjectAccess } from './access';
import { bucketStarts, statsAnswer, statsWindow } from './analytics/stats';
import { AUDIT_ACTIONS, type AuditTrail, apiEntry, type ManyWritesAuditTrail, withCountedRevokes } from './audit';
import { mapPagesBounded } from './concurrency';
import { KeyNotFound, ProjectNotFound, VersionNotFound } from './errors';
import type { Caller, Project } from './model';
import type { ProjectStore } from './ports';
import type { TokenScope } from './tokens';

/** Conditional writes a bulk revoke keeps in flight: enough for 10,000 keys well inside API Gateway's 29 s. */
export const BULK_REVOKE_CONCURRENCY = 64;

/**
 * A bulk revoke stops starting writes when less than this is left of its function's time: the writes in flight
 * (64 single-item updates) and the answer need a fraction of it, so the caller always learns what was done,
 * never a timeout.
 */
export const BULK_REVOKE_ANSWER_RESERVE_MS = 8_000;

/**
 * The project the caller may use, or the 404/403 the spec asks for (spec §4, §5). A token limited to one project
 * finds no other: the same 404 as a project of another owner, before anything is read.
 */
export async function openProject(store: ProjectStore, caller: Caller, projectId: string): Promise<Project> {
  if (caller.projectId !== undefined && caller.projectId !== projectId) throw new ProjectNotFound();
  return authorizeProjectAccess(await store.getProject(projectId), caller.ownerId);
}

/**
 * Spec §4.1. `offset` is a position in issue order, so it maps to a sequence range, not a skip. With our additive
 * `watermark` filter, the page and `total` count only the keys carrying it (revoked ones included, as in the list).
 */
export async function listKeys(store: ProjectStore, project: Project, query: ListKeysQuery): Promise<ListKeysResponse> {
  if (query.watermark !== undefined) return store.listKeysWithWatermark(project.id, query.watermark, query.offset, query.limit);
  const keys = await store.listKeysAfter(project.id, query.offset, query.limit);
  return { keys, total: project.keyCount };
}

/**
 * Spec §4.2. Revoking an already revoked key succeeds again (idempotent), so a retried call is safe. The audit
 * entry is written with the revoke; a call that found the key already revoked changed nothing and is entered
 * on its own with `revoked_count` 0.
 */
export async function revokeKey(store: ProjectStore, project: Project, keyId: string, now: number, trail: AuditTrail): Promise<OkResponse> {
  const entry = apiEntry(trail, { projectId: project.id, at: now, action: AUDIT_ACTIONS.revokeKey, target: { key_id: keyId }, outcome: { revoked_count: 1 } });
  const outcome = await store.revokeKey(project.id, keyId, now, entry);
  if (outcome === 'not_found') throw new KeyNotFound(keyId);
  if (outcome === 'already_revoked') await trail.log.record({ ...entry, outcome: { revoked_count: 0 } });
  return { ok: true };
}

/** How many selected keys are revoked at once: each is one transaction (the revoke and its entry). */
const REVOKE_SELECTED_CONCURRENCY = 10;

/**
 * The console's "Revoke selected": each key revoked as revokeKey revokes one (its `key.revoke` entry in the same
 * transaction), a few at a time. `revoked_count` counts the keys this call revoked; a key not found or already
 * revoked counts nothing and is entered nowhere.
 */
export async function revokeSelected(
  store: ProjectStore,
  project: Project,
  keyIds: readonly string[],
  now: number,
  trail: AuditTrail,
): Promise<{ revoked_count: number }> {
  let revoked = 0;
  for (let start = 0; start < keyIds.length; start += REVOKE_SELECTED_CONCURRENCY) {
    const outcomes = await Promise.all(
      keyIds.slice(start, start + REVOKE_SELECTED_CONCURRENCY).map((keyId) => {
        const entry = apiEntry(trail, {
          projectId: project.id,
          at: now,
          action: AUDIT_ACTIONS.revokeKey,
          target: { key_id: keyId },
          outcome: { revoked_count: 1 },
        });
        return store.revokeKey(project.id, keyId, now, entry);
      }),
    );
    revoked += outcomes.filter((outcome) => outcome === 'revoked').length;
  }
  return { revoked_count: revoked };
}

/**
 * Spec §4.3. Revokes every active key of this project carrying the watermark. `revoked_count` counts only
 * keys this call changed: each write is conditional on the key still being active, so two concurrent bulk
 * revokes never both count a key. No match is a success with 0. When the time budget runs out first
 * (`timeLeftMs` below BULK_REVOKE_ANSWER_RESERVE_MS), no further write starts and the answer says
 * `complete: false`: the caller repeats the call for the rest, and the repeat counts only the keys it changes.
 *
 * No key is read before its write while the writes succeed: the conditional write tells active from revoked. A
 * repeat after `complete: false` meets the keys the first call revoked, each a failed condition that costs as much
 * as a write; once most finished writes failed (REVOKED_KEYS_AHEAD), the rest of the index is read first, 100 keys a
 * request, and only the active ones are written, so every repeat gets further than the one before.
 */
export async function revokeBulk(
  store: ProjectStore,
  project: Project,
  watermark: string,
  now: number,
  timeLeftMs: () => number,
  /** Who revokes (an API token's id), recorded on each key. */
  by?: string,
): Promise<RevokeBulkResponse> {
  const writes = { finished: 0, refused: 0 };
  const revokedAhead = () => writes.finished >= REVOKED_KEYS_AHEAD.sample && writes.refused * 2 > writes.finished;
  async function* chunks(): AsyncIterable<string[]> {
    for await (const page of store.keyIdsWithWatermark(project.id, watermark))
      for (let start = 0; start < page.length; start += REVOKED_KEYS_AHEAD.chunk) {
        const chunk = page.slice(start, start + REVOKED_KEYS_AHEAD.chunk);
        yield revokedAhead() ? await store.activeAmong(chunk) : chunk;
      }
  }
  const { results, stopped } = await mapPagesBounded(
    chunks(),
    BULK_REVOKE_CONCURRENCY,
    async (keyId) => {
      const revoked = await store.revokeIfActive(project.id, keyId, now, by);
      writes.finished++;
      if (!revoked) writes.refused++;
      return revoked;
    },
    () => timeLeftMs() < BULK_REVOKE_ANSWER_RESERVE_MS,
  );
  return { ok: true, revoked_count: results.filter(Boolean).length, complete: !stopped };
}

/**
 * When a bulk revoke starts reading keys before writing them: after `sample` finished writes of which most found the
 * key already revoked (a repeat call). `chunk` is one consistent BatchGetItem's worth of keys.
 */
export const REVOKED_KEYS_AHEAD = { sample: 32, chunk: 100 } as const;

/**
 * revokeBulk with its audit entry. Its writes are many, so the entry is written as `started` before the first, its
 * `revoked_count` null (not known yet), then `completed` with the answer's counts; a failure part-way marks it
 * `failed` with the number of keys revoked by then, and rethrows. A function killed outright leaves it `started`
 * with a null count: the watermark and the token are named, and how many keys went is not claimed.
 * When the revokes succeeded but the entry cannot be completed, the keys are revoked all the same, so the caller
 * gets its 200 and the count; `trail.unsettled` is told (the handler logs it, with the count, at error level).
 */
export async function revokeBulkAudited(
  store: ProjectStore,
  project: Project,
  watermark: string,
  now: number,
  timeLeftMs: () => number,
  trail: ManyWritesAuditTrail,
): Promise<RevokeBulkResponse> {
  const entry = apiEntry(trail, {
    projectId: project.id,
    at: now,
    action: AUDIT_ACTIONS.revokeBulk,
    target: { watermark },
    outcome: { revoked_count: null },
    status: 'started',
  });
  await trail.log.record(entry);
  const counted = withCountedRevokes(store);
  let result: RevokeBulkResponse;
  try {
    result = await revokeBulk(counted.store, project, watermark, now, timeLeftMs, trail.actor.tokenId);
  } catch (error) {
    // The revoke's own failure is what the caller must hear of; if this update fails too the entry stays `started`.
    await trail.log
      .finish(entry, 'failed', { revoked_count: counted.revoked() })
      .catch((finishError: unknown) => trail.unsettled(entry, { revoked_count: counted.revoked() }, finishError));
    throw error;
  }
  const { ok: _ok, ...outcome } = result;
  await trail.log.finish(entry, 'completed', outcome).catch((error: unknown) => trail.unsettled(entry, outcome, error));
  return result;
}

/**
 * Spec §4.4: highest `version_number` first, as the spec's sample shows; a page of them when `limit` is given. The
 * project's version items are read whole (their ids are random, so the table holds them in no order to page by);
 * the answer is what is bounded.
 */
export async function listVersions(store: ProjectStore, project: Project, page: ListPageQuery): Promise<ListVersionsResponse> {
  const versions = await store.listVersions(project.id);
  versions.sort((a, b) => b.version_number - a.version_number);
  return { versions: pageOf(versions, page), current_version_id: project.currentVersionId, total: versions.length };
}

/** The page `limit`/`offset` asks for: every item from `offset` when no `limit` is given (ListPageQuery). */
const pageOf = <Item>(items: Item[], page: ListPageQuery): Item[] => items.slice(page.offset, page.limit === undefined ? undefined : page.offset + page.limit);

/**
 * Spec §4.5. Rolling back to the current version is a no-op success. The audit entry is written in the pointer's
 * transaction; its `previous_version_id` is the current version as this request read it just before.
 */
export async function rollback(store: ProjectStore, project: Project, versionId: string, now: number, trail: AuditTrail): Promise<RollbackResponse> {
  const entry = apiEntry(trail, {
    projectId: project.id,
    at: now,
    action: AUDIT_ACTIONS.rollback,
    target: { version_id: versionId },
    outcome: { previous_version_id: project.currentVersionId, current_version_id: versionId },
  });
  if (!(await store.setCurrentVersion(project.id, versionId, entry))) throw new VersionNotFound(versionId);
  return { ok: true, current_version_id: versionId };
}

/** Spec §4.6: every configuration of the project (a page of them when `limit` is given), read-only, in a stable order. */
/**
 * A webhook URL carries its own secret: whoever holds it can post to the channel. So only a write token sees it
 * whole; a read token sees each URL with its token part redacted (the webhook id stays, to tell them apart).
 */
export async function listWebhooks(store: ProjectStore, project: Project, scope: TokenScope, page: ListPageQuery): Promise<ListWebhooksResponse> {
  const all = await store.listWebhooks(project.id);
  const webhooks = pageOf(all, page);
  return {
    webhooks: scope === 'write' ? webhooks : webhooks.map((webhook) => ({ ...webhook, url: redactWebhookUrl(webhook.url) })),
    total: all.length,
  };
}

/**
 * DESIGN.md "Stats": the window asked for (defaults filled in, limits checked), read from the project's counters in
 * one Query and zero-filled.
 */
export async function projectStats(store: ProjectStore, project: Project, query: StatsQuery, now: number): Promise<StatsResponse> {
  const window = statsWindow(query, now);
  const starts = bucketStarts(window.from, window.to, window.granularity);
  const first = starts[0] ?? window.from;
  const stored = await store.statsBuckets({ projectId: project.id, granularity: window.granularity, by: window.by, first, last: starts.at(-1) ?? first });
  return statsAnswer(window, stored);
}
