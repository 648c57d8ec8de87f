import { randomBytes } from 'node:crypto';
import type { Checkpoint, FreeKeySettings, FreeProvider } from '#schemas/free-keys';

/**
 * The buyer's way through a project's checkpoints (DESIGN.md, "Free keys behind checkpoints"; docs/free-keys.md):
 * started → checkpoint 1 passed → … → last passed → key issued. A session is bound to the machine (fingerprint) and
 * the client address that started it; every return from a provider is judged here before anything advances.
 */

/**
 * The least time between sending the buyer to a checkpoint and their return. No provider documents a minimum for
 * the publisher's side; 10 s is below what a person spends on any of the three ad pages (Work.ink and Lootlabs show
 * timed tasks, Linkvertise's steps take longer) and above what a bypass userscript takes, which returns at once. It is
 * also Linkvertise's own window: its hash is valid about 10 s after the redirect (its anti-bypass documentation), so
 * the check is made as soon as the buyer arrives, never held back.
 */
export const MIN_CHECKPOINT_SECONDS: Record<FreeProvider, number> = { workink: 10, linkvertise: 10, lootlabs: 10 };

/** How long a session lives: long enough for five checkpoints done slowly, short enough not to pile up (TTL). */
export const FREE_SESSION_SECONDS = 2 * 3600;

/** Sessions one client address or one machine may start in an hour: a flood cannot fill the table or mint keys. */
export const FREE_SESSION_LIMITS = { perAddressPerHour: 30, perMachinePerHour: 10, windowSeconds: 3600 } as const;

/**
 * How long the service waits for a provider's verification answer: the buyer is waiting on the page, and a provider
 * that does not answer in 3 s is shown as down (nothing issued, the buyer retries) rather than held.
 */
export const PROVIDER_TIMEOUT_MS = 3000;

export const FINGERPRINT = /^[0-9a-f]{64}$/;
/** Session ids are 128 random bits, hex: the capability of the return URL, together with its address and machine. */
export const SESSION_ID = /^[0-9a-f]{32}$/;

export interface FreeSession {
  id: string;
  projectId: string;
  fingerprint: string;
  address: string;
  startedAt: number;
  /** How many checkpoints are passed: the buyer is now at checkpoint `passed` (0-based), or done when it is their count. */
  passed: number;
  /** When the buyer was last sent to the current checkpoint (the start of its minimum time). */
  sentAt: number;
  /** Fresh for every sending: Lootlabs' `puid`, which its postback returns as `click_id`. */
  nonce: string;
  /** The key issued at the end: set once, then the session only shows that it is finished. */
  keyId?: string;
  expiresAt: number;
}

const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

export function startSession(input: { projectId: string; fingerprint: string; address: string; now: number }): FreeSession {
  return {
    id: randomHex(16),
    projectId: input.projectId,
    fingerprint: input.fingerprint,
    address: input.address,
    startedAt: input.now,
    passed: 0,
    sentAt: input.now,
    nonce: randomHex(16),
    expiresAt: input.now + FREE_SESSION_SECONDS,
  };
}

/** The session sent (again) to its current checkpoint: a fresh nonce and a fresh minimum time. */
export const sendAgain = (session: FreeSession, now: number): FreeSession => ({ ...session, sentAt: now, nonce: randomHex(16) });

/** Why a return was refused as a bypass attempt; each is counted in the funnel. */
const BYPASSES = ['no_token', 'reused_token', 'too_fast', 'other_address', 'other_machine', 'invalid_token', 'other_link'] as const;
export type Bypass = (typeof BYPASSES)[number];

/** What the provider's own API said of a token (lambdas/adapters/free-key-providers.ts). */
export type Verdict =
  | {
      kind: 'valid';
      /** The token's identity for single use on our side (the token, hash or unique_id). */
      tokenId: string;
      /** The link the provider says the token belongs to, where its answer names one (Work.ink). */
      linkId?: string;
      /** The address the provider saw complete the link, where its answer names one (Work.ink, Lootlabs). */
      address?: string;
    }
  | { kind: 'invalid' }
  | { kind: 'unavailable'; detail: string };

/** The provider check behind a port: the HTTP adapters in AWS and locally, scripted ones in tests. */
export interface CheckpointVerifier {
  verify(checkpoint: Checkpoint, ret: { token: string; nonce: string; projectId: string }): Promise<Verdict>;
}

/** What a return carries: the provider's token (if any), the client's address and the machine it names. */
export interface CheckpointReturn {
  token: string | undefined;
  address: string;
  fingerprint: string | undefined;
}

export type ReturnOutcome =
  | { kind: 'passed'; session: FreeSession; done: boolean }
  | { kind: 'bypass'; reason: Bypass; session: FreeSession }
  | { kind: 'unavailable'; detail: string }
  | { kind: 'finished' };

export interface ReturnDeps {
  verifier: CheckpointVerifier;
  /** Claim a token as used (true) or find it used before (false): single use on our side whatever the provider does. */
  claimToken(projectId: string, provider: FreeProvider, tokenId: string, now: number): Promise<boolean>;
}

/** The checks that need no provider: a refusal here spends no token at the provider. */
function precheck(session: FreeSession, checkpoint: Checkpoint, ret: CheckpointReturn, now: number): Bypass | undefined {
  if (ret.fingerprint !== undefined && ret.fingerprint !== session.fingerprint) return 'other_machine';
  if (ret.address !== session.address) return 'other_address';
  // Lootlabs returns no token to the page: its proof is the postback recorded under the session's nonce.
  if (checkpoint.provider !== 'lootlabs' && (ret.token === undefined || ret.token === '')) return 'no_token';
  if (now - session.sentAt < MIN_CHECKPOINT_SECONDS[checkpoint.provider]) return 'too_fast';
  return undefined;
}

/** The verdict against the session: the provider's link and address where its answer names them. */
function verdictBypass(verdict: Extract<Verdict, { kind: 'valid' }>, checkpoint: Checkpoint, session: FreeSession): Bypass | undefined {
  if (verdict.linkId !== undefined && verdict.linkId !== checkpoint.link_id) return 'other_link';
  if (verdict.address !== undefined && verdict.address !== session.address) return 'other_address';
  return undefined;
}

/**
 * Judge a return from the session's current checkpoint. A bypass sends the buyer to the same checkpoint again (fresh
 * nonce and minimum time); a provider that does not answer changes nothing, so the buyer may simply retry.
 */
export async function judgeReturn(
  deps: ReturnDeps,
  settings: FreeKeySettings,
  session: FreeSession,
  ret: CheckpointReturn,
  now: number,
): Promise<ReturnOutcome> {
  const checkpoint = settings.checkpoints[session.passed];
  if (session.keyId !== undefined || checkpoint === undefined) return { kind: 'finished' };
  const refuse = (reason: Bypass): ReturnOutcome => ({ kind: 'bypass', reason, session: sendAgain(session, now) });
  const early = precheck(session, checkpoint, ret, now);
  if (early) return refuse(early);
  const verdict = await deps.verifier.verify(checkpoint, { token: ret.token ?? '', nonce: session.nonce, projectId: session.projectId });
  if (verdict.kind === 'unavailable') return verdict;
  if (verdict.kind === 'invalid') return refuse('invalid_token');
  const late = verdictBypass(verdict, checkpoint, session);
  if (late) return refuse(late);
  if (!(await deps.claimToken(session.projectId, checkpoint.provider, verdict.tokenId, now))) return refuse('reused_token');
  const passed = session.passed + 1;
  return { kind: 'passed', session: { ...sendAgain(session, now), passed }, done: passed === settings.checkpoints.length };
}

/** The fixed windows a session start counts in: one per address and one per machine (FREE_SESSION_LIMITS). */
export function sessionWindows(projectId: string, address: string, fingerprint: string, now: number) {
  const seconds = FREE_SESSION_LIMITS.windowSeconds;
  const window = { start: now - (now % seconds), seconds };
  return [
    { bucket: `free#addr#${projectId}#${address}`, window, limit: FREE_SESSION_LIMITS.perAddressPerHour },
    { bucket: `free#machine#${projectId}#${fingerprint}`, window, limit: FREE_SESSION_LIMITS.perMachinePerHour },
  ];
}

/** The day window in which a machine's free keys are counted against `keys_per_machine_per_day`. */
export function keyDayWindow(projectId: string, fingerprint: string, settings: FreeKeySettings, now: number) {
  const seconds = 86_400;
  return { bucket: `free#keys#${projectId}#${fingerprint}`, window: { start: now - (now % seconds), seconds }, limit: settings.keys_per_machine_per_day };
}

/** The key a finished session is issued: bound to the session's machine, for the settings' duration. */
export const freeKeyTerms = (settings: FreeKeySettings) => ({
  duration: settings.duration_hours * 3600,
  max_fingerprints: settings.machines,
  max_uses: null,
  note: 'free key (checkpoints)',
});
