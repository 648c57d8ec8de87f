import type { Key, KeyDetail, Version, Webhook } from '#schemas/resources';
import type { TokenScope } from './token-model';

export type { Key, KeyDetail, Version, Webhook };

export const PLANS = ['business', 'pro', 'free'] as const;
export type Plan = (typeof PLANS)[number];

/** Spec §2.4 leaves the project record open; this is what the API and the notifications need of it. */
export interface Project {
  id: string;
  ownerId: string;
  /** Shown as the script name in notifications; the project id is the script id. */
  name: string;
  plan: Plan;
  currentVersionId: string | null;
  /** Keys ever issued (keys are never deleted), the `total` of the key list. */
  keyCount: number;
  createdAt: number;
}

/** Who is calling, as the authorizer established it. */
export interface Caller {
  ownerId: string;
  /** SHA-256 of the bearer token: the rate-limit bucket and the usage-plan key; never the token itself. */
  tokenHash: string;
  /** The token's id (`tok_…`), what the audit trail names it by. */
  tokenId: string;
  scope: TokenScope;
  /** The one project the token may reach (TokenLimits); absent: every project of the owner. */
  projectId?: string;
  /** The only routes the token may call (TokenLimits); absent: every route its scope allows. */
  routes?: readonly string[];
}

/** Unix seconds, the unit of every timestamp in the API (spec §2.4 leaves it open; the samples fit seconds). */
export const unixSeconds = (date: Date = new Date()): number => Math.floor(date.getTime() / 1000);
