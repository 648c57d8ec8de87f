import type { LoaderCheckRequest } from '#schemas/loader';
import type { CheckTiming } from '#schemas/telemetry';
import type { KeyBan } from './refusal';

/**
 * What a key check reads, writes and reports, shared by the check's rule (key-check.ts) and the storage ports: a
 * leaf module, so the ports need not import the rule.
 */

/** The state of a key a check is judged on, as its item holds it. */
export interface KeyState {
  projectId: string;
  keyHash: string;
  revoked: boolean;
  expiresAt: number;
  maxUses: number | null;
  currentUses: number;
  /** Machines the key may be bound to; null for a key that is not bound (every key issued before binding). */
  maxFingerprints: number | null;
  /** The fingerprints bound so far (none for an unbound key). */
  fingerprints: readonly string[];
  /** What a served script is stamped with (`WM_<watermark>`), so a leaked dump names its key. */
  watermark: string;
  /** The publisher's ban, as the key item holds it (one whose `until` has passed stays there until unbanned). */
  ban: KeyBan | null;
}

/** What a counted check answers with: the key's expiry and uses after the count. */
export type CountedKey = Pick<KeyState, 'expiresAt' | 'maxUses' | 'currentUses'>;

/**
 * What the key's counting write did, and the key as the table held it: its state after a counted use, or as it was
 * when the write's condition refused to count one (undefined: no such item). `checksThisWindow` is how many checks
 * the key's current one-minute window had counted then. The store states facts; checkKey decides what they mean.
 */
export type CheckWrite =
  | { outcome: 'counted'; keyId: string; key: CountedKey }
  | { outcome: 'not_counted'; keyId: string; key: KeyState | undefined; checksThisWindow: number }
  /** The key would have bound the asking machine, which the project blacklisted (DESIGN.md, "Buyer blacklist"): nothing counted or bound. */
  | { outcome: 'machine_blacklisted'; keyId: string; reason: string };

/**
 * What a check tells the detectors: the request's fields the telemetry records are made of, and the stub's timing
 * of its earlier requests when it sent one (an execution's `timing`, read by lambdas/domain/loader-timing.ts).
 */
export type CheckReport = Pick<LoaderCheckRequest, 'project_id' | 'executor' | 'fingerprint' | 'script_hash' | 'version_id'> & { timing?: CheckTiming };
