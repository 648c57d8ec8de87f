import type { BLACKLIST_FIELDS } from '#schemas/requests';

/**
 * What the buyer blacklist holds (DESIGN.md, "Buyer blacklist"), shared by its rules (blacklist.ts) and the storage
 * ports: a leaf module, so the ports need not import the rules.
 */

/** How an entry names a buyer: a machine fingerprint, a Discord user id, or the SHA-256 of an email address. */
export type BlacklistKind = (typeof BLACKLIST_FIELDS)[number];

/** One buyer as the blacklist names them: `value` is 64 lowercase hex, or 17 to 20 digits for a Discord id. */
export interface BlacklistTarget {
  kind: BlacklistKind;
  value: string;
}

export interface BlacklistEntry extends BlacklistTarget {
  /** Derived from the target (blacklistEntryId): one entry per buyer and project. */
  id: string;
  /** What a refused buyer reads: the reason of the bans it makes, and of a refused binding. */
  reason: string;
  /** Who added it: the token id of the request, or `dashboard`. */
  addedBy: string;
  /** Unix seconds. */
  createdAt: number;
}

export type BlacklistAdd = { outcome: 'added' } | { outcome: 'exists'; entry: BlacklistEntry } | { outcome: 'full' };
