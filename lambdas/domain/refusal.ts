import type { RefusalCode } from '#schemas/loader';

/**
 * Why a key may not run, as the check and the container's memory of refused keys (refusal-memory.ts) both carry it:
 * a leaf module, so neither imports the other for it.
 */

/** A ban (DESIGN.md, "Key lifecycle"): the reason the buyer reads, and when it ends by itself (null: when unbanned). */
export interface KeyBan {
  reason: string;
  until: number | null;
}

/** Why a check was refused: its code, and for a ban the ban (its reason is the buyer's to read). */
export type Refusal = { code: Exclude<RefusalCode, 'KEY_BANNED'> } | { code: 'KEY_BANNED'; ban: KeyBan };
