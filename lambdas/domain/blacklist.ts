import { createHash } from 'node:crypto';
import { type AddBlacklistBody, BLACKLIST_FIELDS, type ListBlacklistQuery } from '#schemas/requests';
import type { AddBlacklistResponse, BlacklistEntrySchema, ListBlacklistResponse, OkResponse } from '#schemas/responses';
import { AUDIT_ACTIONS, type AuditTrail, apiEntry } from './audit';
import type { BlacklistEntry, BlacklistKind, BlacklistTarget } from './blacklist-model';
import { BlacklistEntryNotFound, InvalidInput } from './errors';
import type { Project } from './model';
import type { BlacklistStore } from './ports';

export type { BlacklistEntry, BlacklistTarget } from './blacklist-model';

/**
 * The buyer blacklist (DESIGN.md, "Buyer blacklist"): banning a key stops one key, and a leaker buys another. An
 * entry names a buyer by machine fingerprint, Discord id or email hash; adding it bans the keys already bound to
 * that machine or linked to that Discord id, and from then on the buyer gets no new binding, redeem or key.
 */

export const BLACKLIST_LIMITS = {
  /** Entries one project may hold: the count item's condition keeps it, so a full list refuses one more (400). */
  entriesPerProject: 10_000,
  /**
   * Keys one add bans at most: the keys a machine was ever bound to, or a Discord user's, are a buyer's few; a
   * bound keeps one request's writes (and its time) bounded whatever a shared machine did.
   */
  keysBannedPerEntry: 1_000,
  /** Bans written at once by one add. */
  banConcurrency: 16,
} as const;

/** An entry's id names its target: one entry per buyer, found by one GetItem. The hex kinds as base64url, so ids stay path-sized. */
const ID_PREFIX: Record<BlacklistKind, string> = { fingerprint: 'blf_', discord_id: 'bld_', email_sha256: 'ble_' };
const HEX64 = /^[0-9a-f]{64}$/;
const DISCORD_ID = /^[0-9]{17,20}$/;

export function blacklistEntryId({ kind, value }: BlacklistTarget): string {
  return `${ID_PREFIX[kind]}${kind === 'discord_id' ? value : Buffer.from(value, 'hex').toString('base64url')}`;
}

/** The target an entry id names, or undefined for a string no entry of any project could have as its id. */
function targetOfEntryId(id: string): BlacklistTarget | undefined {
  const kind = BLACKLIST_FIELDS.find((field) => id.startsWith(ID_PREFIX[field]));
  if (kind === undefined) return undefined;
  const rest = id.slice(ID_PREFIX[kind].length);
  if (kind === 'discord_id') return DISCORD_ID.test(rest) ? { kind, value: rest } : undefined;
  if (!/^[A-Za-z0-9_-]{43}$/.test(rest)) return undefined;
  const value = Buffer.from(rest, 'base64url').toString('hex');
  return HEX64.test(value) && blacklistEntryId({ kind, value }) === id ? { kind, value } : undefined;
}

/** The email hash an entry (and a shop's key) names a buyer by: SHA-256 hex of the trimmed, lowercased address. */
export const emailSha256 = (email: string): string => createHash('sha256').update(email.trim().toLowerCase()).digest('hex');

function targetOfBody(body: AddBlacklistBody): BlacklistTarget {
  for (const kind of BLACKLIST_FIELDS) {
    const value = body[kind];
    if (value !== undefined) return { kind, value };
  }
  // The body's schema requires exactly one; this is a broken schema, not a caller's mistake.
  throw new Error('A blacklist body named no buyer');
}

/** An entry as the API shows it: its one target field under its own name. */
const shownEntry = (entry: BlacklistEntry): BlacklistEntrySchema => ({
  id: entry.id,
  [entry.kind]: entry.value,
  reason: entry.reason,
  added_by: entry.addedBy,
  created_at: entry.createdAt,
});

/**
 * `POST /v1/projects/:id/blacklist`: the entry, then a ban without end (with the entry's reason) on each of the
 * buyer's keys that is not revoked and not banned for good already. A buyer already on the list keeps their entry
 * (its reason and time) and their keys are banned again: a repeat is safe. `banned_keys` counts the bans this call wrote.
 */
export async function addToBlacklist(
  store: BlacklistStore,
  project: Project,
  body: AddBlacklistBody,
  now: number,
  trail: AuditTrail,
): Promise<AddBlacklistResponse> {
  const target = targetOfBody(body);
  const fresh: BlacklistEntry = { ...target, id: blacklistEntryId(target), reason: body.reason, addedBy: trail.actor.tokenId, createdAt: now };
  const added = await store.addEntry(project.id, fresh, BLACKLIST_LIMITS.entriesPerProject);
  if (added.outcome === 'full') {
    throw new InvalidInput(
      `This project's blacklist holds ${BLACKLIST_LIMITS.entriesPerProject.toLocaleString('en-US')} entries, its limit: remove one before adding another`,
    );
  }
  const entry = added.outcome === 'exists' ? added.entry : fresh;
  const keyIds = await store.keyIdsOfBuyer(project.id, target, BLACKLIST_LIMITS.keysBannedPerEntry);
  const bannedKeys = await store.banKeys(project.id, keyIds, entry.reason);
  await trail.log.record(
    apiEntry(trail, {
      projectId: project.id,
      at: now,
      action: AUDIT_ACTIONS.addToBlacklist,
      target: { [target.kind]: target.value, reason: body.reason },
      outcome: { id: entry.id, banned_keys: bannedKeys, already_listed: added.outcome === 'exists' },
    }),
  );
  return { id: entry.id, banned_keys: bannedKeys };
}

/** `GET /v1/projects/:id/blacklist`: `limit` entries from position `offset`, and how many there are. */
export async function listBlacklist(store: BlacklistStore, project: Project, query: ListBlacklistQuery): Promise<ListBlacklistResponse> {
  const { entries, total } = await store.listEntries(project.id, query.offset, query.limit);
  return { entries: entries.map(shownEntry), total };
}

/**
 * `DELETE /v1/projects/:id/blacklist/:entry_id`: the buyer may bind, redeem and get keys again. The keys the entry
 * banned stay banned until each is unbanned (a ban is the owner's word on a key, not the list's).
 */
export async function removeFromBlacklist(store: BlacklistStore, project: Project, entryId: string, now: number, trail: AuditTrail): Promise<OkResponse> {
  const target = targetOfEntryId(entryId);
  const removed = target && (await store.removeEntry(project.id, target));
  if (!target || !removed) throw new BlacklistEntryNotFound(entryId);
  await trail.log.record(
    apiEntry(trail, {
      projectId: project.id,
      at: now,
      action: AUDIT_ACTIONS.removeFromBlacklist,
      target: { entry_id: entryId },
      outcome: { [removed.kind]: removed.value, reason: removed.reason },
    }),
  );
  return { ok: true };
}

/** A buyer about to get a key, as far as the issuer knows them. */
export interface Buyer {
  fingerprint?: string;
  discordId?: string;
  emailSha256?: string;
}

/**
 * The entry that refuses this buyer a key, or undefined: what a shop order, a free key and a Discord redeem ask
 * before they issue or link (one consistent GetItem per name the buyer is known by, sent at once).
 */
export async function blacklistProblem(store: BlacklistStore, projectId: string, buyer: Buyer): Promise<BlacklistEntry | undefined> {
  const targets: BlacklistTarget[] = [
    ...(buyer.fingerprint !== undefined ? [{ kind: 'fingerprint' as const, value: buyer.fingerprint }] : []),
    ...(buyer.discordId !== undefined ? [{ kind: 'discord_id' as const, value: buyer.discordId }] : []),
    ...(buyer.emailSha256 !== undefined ? [{ kind: 'email_sha256' as const, value: buyer.emailSha256 }] : []),
  ];
  const found = await Promise.all(targets.map((target) => store.findEntry(projectId, target)));
  return found.find((entry) => entry !== undefined);
}
