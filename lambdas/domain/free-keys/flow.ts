import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { BlacklistStore, KeyStore, RateLimitStore, SecretSealer } from '#domain/ports';
import { batchOf, randomKeys } from '#domain/selling-keys';
import type { FreeKeySettings, FreeProvider } from '#schemas/free-keys';
import { blacklistProblem } from '../blacklist';
import { openSettings } from './sealing';
import {
  type Bypass,
  type CheckpointVerifier,
  FINGERPRINT,
  type FreeSession,
  freeKeyTerms,
  judgeReturn,
  keyDayWindow,
  SESSION_ID,
  sessionWindows,
  startSession,
} from './session';

/**
 * The key page's steps (DESIGN.md, "Free keys behind checkpoints"): what `GET /v1/free/{project_id}` and its
 * `/return` do, as plain functions over ports; lambdas/http/free-key-page.ts turns each outcome into a page.
 */

/** The free-key store's calls the page makes (lambdas/adapters/free-key-store.ts). */
export interface FreeKeyFlowStore {
  settings(projectId: string): Promise<FreeKeySettings | undefined>;
  putSession(session: FreeSession): Promise<void>;
  session(sessionId: string, now: number): Promise<FreeSession | undefined>;
  replaceSession(previous: FreeSession, next: FreeSession): Promise<boolean>;
  claimToken(projectId: string, provider: FreeProvider, tokenId: string, now: number): Promise<boolean>;
  recordPostback(projectId: string, clickId: string, postback: { ip: string; uniqueId: string }, now: number): Promise<void>;
  countFunnel(projectId: string, step: `passed_${number}` | `bypass_${Bypass}` | 'started' | 'issued', now: number): Promise<void>;
}

export interface FreeKeyFlowDeps {
  store: FreeKeyFlowStore;
  sealer: SecretSealer;
  verifier: CheckpointVerifier;
  rateLimits: RateLimitStore;
  keys: Pick<KeyStore, 'issue'>;
  /**
   * The buyer blacklist's check before a key is issued (DESIGN.md, "Buyer blacklist"): a sentence when the machine is
   * blacklisted, nothing issued (machineBlacklist below, over the project's blacklist).
   */
  blacklistProblem?: (projectId: string, fingerprint: string) => Promise<string | undefined>;
}

/** Where the buyer goes next: the checkpoint's link (with the nonce where the provider carries one back). */
interface CheckpointStep {
  index: number;
  of: number;
  provider: FreeProvider;
  href: string;
}

export type FreePage =
  | { kind: 'off' }
  | { kind: 'bad_machine' }
  | { kind: 'too_many'; retryAfterSeconds: number }
  | { kind: 'checkpoint'; session: FreeSession; step: CheckpointStep; refused?: Bypass }
  | { kind: 'expired' }
  | { kind: 'provider_down'; session: FreeSession; step: CheckpointStep; detail: string }
  | { kind: 'daily_limit' }
  | { kind: 'blacklisted'; reason: string }
  | { kind: 'key'; key: string; expiresAt: number }
  | { kind: 'finished' };

/** The settings in force, opened; undefined when free keys are off or not set up. */
async function settingsOf(deps: Pick<FreeKeyFlowDeps, 'store' | 'sealer'>, projectId: string): Promise<FreeKeySettings | undefined> {
  const stored = await deps.store.settings(projectId);
  if (!stored?.enabled) return undefined;
  return openSettings(deps.sealer, projectId, stored);
}

/** The checkpoint's link: Lootlabs carries `puid`, which its postback returns as `click_id` (the session's nonce). */
function stepOf(settings: FreeKeySettings, session: FreeSession): CheckpointStep {
  const checkpoint = settings.checkpoints[session.passed];
  if (!checkpoint) throw new Error('A finished session has no checkpoint');
  const url = new URL(checkpoint.url);
  if (checkpoint.provider === 'lootlabs') url.searchParams.set('puid', session.nonce);
  return { index: session.passed + 1, of: settings.checkpoints.length, provider: checkpoint.provider, href: url.toString() };
}

/** `GET /v1/free/{project_id}?m=<fingerprint>`: a new session, counted per address and machine, at checkpoint 1. */
export async function startPage(deps: FreeKeyFlowDeps, input: { projectId: string; fingerprint: string; address: string; now: number }): Promise<FreePage> {
  if (!FINGERPRINT.test(input.fingerprint)) return { kind: 'bad_machine' };
  const settings = await settingsOf(deps, input.projectId);
  if (!settings) return { kind: 'off' };
  for (const limit of sessionWindows(input.projectId, input.address, input.fingerprint, input.now)) {
    if ((await deps.rateLimits.countRequest(limit.bucket, limit.window, limit.limit)) === undefined) {
      return { kind: 'too_many', retryAfterSeconds: limit.window.start + limit.window.seconds - input.now };
    }
  }
  const session = startSession(input);
  await deps.store.putSession(session);
  await deps.store.countFunnel(input.projectId, 'started', input.now);
  return { kind: 'checkpoint', session, step: stepOf(settings, session) };
}

/** `GET /v1/free/{project_id}/return?s=<session>&…`: judge the return, then the next checkpoint or the key. */
export async function returnPage(
  deps: FreeKeyFlowDeps,
  input: { projectId: string; sessionId: string; token: string | undefined; fingerprint: string | undefined; address: string; now: number },
): Promise<FreePage> {
  const settings = await settingsOf(deps, input.projectId);
  if (!settings) return { kind: 'off' };
  const session = SESSION_ID.test(input.sessionId) ? await deps.store.session(input.sessionId, input.now) : undefined;
  if (!session || session.projectId !== input.projectId) return { kind: 'expired' };
  const outcome = await judgeReturn(
    { verifier: deps.verifier, claimToken: deps.store.claimToken.bind(deps.store) },
    settings,
    session,
    { token: input.token, address: input.address, fingerprint: input.fingerprint },
    input.now,
  );
  if (outcome.kind === 'finished') return { kind: 'finished' };
  if (outcome.kind === 'unavailable') return { kind: 'provider_down', session, step: stepOf(settings, session), detail: outcome.detail };
  // A return that lost a race with another one on the same session shows the session as the winner left it.
  if (!(await deps.store.replaceSession(session, outcome.session))) return { kind: 'expired' };
  if (outcome.kind === 'bypass') {
    await deps.store.countFunnel(input.projectId, `bypass_${outcome.reason}`, input.now);
    return { kind: 'checkpoint', session: outcome.session, step: stepOf(settings, outcome.session), refused: outcome.reason };
  }
  await deps.store.countFunnel(input.projectId, `passed_${outcome.session.passed}`, input.now);
  if (!outcome.done) return { kind: 'checkpoint', session: outcome.session, step: stepOf(settings, outcome.session) };
  return issueFreeKey(deps, settings, outcome.session, input.now);
}

/** The last checkpoint passed: one key a machine may get per day, issued like every key and bound to machines. */
async function issueFreeKey(deps: FreeKeyFlowDeps, settings: FreeKeySettings, session: FreeSession, now: number): Promise<FreePage> {
  const banned = await deps.blacklistProblem?.(session.projectId, session.fingerprint);
  if (banned) return { kind: 'blacklisted', reason: banned };
  const day = keyDayWindow(session.projectId, session.fingerprint, settings, now);
  if ((await deps.rateLimits.countRequest(day.bucket, day.window, day.limit)) === undefined) return { kind: 'daily_limit' };
  const terms = freeKeyTerms(settings);
  const raw = randomKeys(1);
  const expiresAt = now + terms.duration;
  const batch = batchOf(session.projectId, raw, {
    tier: 'free',
    maxUses: terms.max_uses,
    maxFingerprints: terms.max_fingerprints,
    note: terms.note,
    discordId: null,
    issuedAt: now,
    expiresAt,
  });
  await deps.keys.issue(batch);
  const [key] = raw;
  if (!key) throw new Error('No key was made');
  // The session remembers its key by id only: reloading the page never shows the raw value again.
  await deps.store.replaceSession(session, { ...session, keyId: key.id });
  await deps.store.countFunnel(session.projectId, 'issued', now);
  return { kind: 'key', key: key.key, expiresAt };
}

const sameText = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const POSTBACK_VALUE = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Lootlabs' postback (https://help.lootlabs.gg/en/article/postback-api-1ndz3i2), `GET …/postback?secret=…&click_id=
 * <puid>&ip=<IP>&unique_id=<id>`: Lootlabs does not sign it, so the URL the publisher pastes carries the checkpoint's
 * secret, compared in constant time. Recorded under the click id (the session's nonce) for the return to find.
 */
export async function recordLootlabsPostback(
  deps: Pick<FreeKeyFlowDeps, 'store' | 'sealer'>,
  input: { projectId: string; secret: string; clickId: string; ip: string; uniqueId: string; now: number },
): Promise<'recorded' | 'unauthorized' | 'malformed'> {
  const settings = await settingsOf(deps, input.projectId);
  const known = settings?.checkpoints.some((c) => c.provider === 'lootlabs' && sameText(c.secret, input.secret));
  if (!known) return 'unauthorized';
  if (!POSTBACK_VALUE.test(input.clickId) || !POSTBACK_VALUE.test(input.uniqueId) || isIP(input.ip) === 0) return 'malformed';
  await deps.store.recordPostback(input.projectId, input.clickId, { ip: input.ip, uniqueId: input.uniqueId }, input.now);
  return 'recorded';
}

/** The project's blacklist as the key page consults it: by the machine that would get the key; the entry's reason. */
export const machineBlacklist =
  (store: BlacklistStore) =>
  async (projectId: string, fingerprint: string): Promise<string | undefined> =>
    (await blacklistProblem(store, projectId, { fingerprint }))?.reason;
