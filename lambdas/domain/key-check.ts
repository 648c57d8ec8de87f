import type { LoaderCheckRequest, LoaderCheckResponse, RefusalCode } from '#schemas/loader';
import type { ExecutionRecord, ValidationRecord, ValidationResult } from '#schemas/telemetry';
import { type AddressTally, clientAddressBucket } from './address-tally';
import { RateLimited } from './errors';
import type { CheckReport, CheckWrite, CountedKey, KeyState } from './key-check-model';
import { hashKeyValue, hasKeyValueForm, keyIdOf } from './key-values';
import { checkTimingOf, executionTimingOf } from './loader-timing';
import type { KeyCheckStore, RateLimitStore, TelemetrySink } from './ports';
import { rateWindowAt } from './rate-limit';
import type { KeyBan, Refusal } from './refusal';
import type { HeldRefusals, RefusalMemory } from './refusal-memory';

export type { CheckReport, CheckWrite, CountedKey, KeyState } from './key-check-model';
export type { KeyBan, Refusal } from './refusal';

/**
 * The loader's key check (the "Loader key check" contract of DESIGN.md): at every execution the buyer's loader
 * asks whether its key may run. A valid check counts one use, atomically; a refusal counts none.
 */

/**
 * Limits on a public endpoint, each within the floors the contract sets so no honest loader is refused: at
 * least 60 checks a minute per key (a key is one buyer's), at least 1,000 a minute from one address (many buyers
 * share one behind carrier NAT). A client address is an IPv4 address or an IPv6 /64 (one subscriber's).
 * Fingerprints are not limited on their own: the loader chooses them, so a limit on them stops nobody.
 */
export const LOADER_LIMITS = { perKeyPerMinute: 120, perAddressPerMinute: 2_400, windowSeconds: 60 } as const;

/**
 * How an address is counted (docs/loader.md, "Limits per address"). Each container counts every address in memory
 * and refuses past `perAddressPerMinute` before any DynamoDB request; it writes the address's shared window only for
 * checks past `sharedAfter` in the minute, so a common check (an address with fewer) makes one DynamoDB request, the
 * key's own write. Across containers an address gets at most `perAddressPerMinute + containers × sharedAfter`.
 * Well-formed keys that do not exist cost a failed conditional write each: past `invalidKeysPerMinute` of them
 * from one address in a container's minute, its checks are refused before the write. Both at or above the 1,000
 * floor, so an address of honest buyers is never refused by them.
 */
export const ADDRESS_COUNTING = { sharedAfter: 100, invalidKeysPerMinute: 1_000 } as const;

/** Whether a ban refuses checks at `now`: from its write until the second of `until` (now ≥ until ends it, as expiry). */
export const isBanned = (ban: KeyBan | null, now: number): ban is KeyBan => ban !== null && (ban.until === null || now < ban.until);

/**
 * Why a key may not run on the machine `fingerprint`, or undefined when it may. When several apply, revoked wins
 * over banned (a ban whose `until` has not come), which wins over expired (now ≥ `expires_at`), which wins over
 * HWID locked (a bound key holding `max_fingerprints` machines, none of them this one), which wins over over-limit
 * (`current_uses ≥ max_uses`). A key that does not exist, that is another project's, or whose stored hash is not
 * the value's, is KEY_INVALID alike: nothing to enumerate. The table states the same rule as the counting write's
 * condition (MAY_RUN in lambdas/adapters/key-check-store.ts); test/integration/key-rule.test.ts drives both
 * through one table of cases.
 */
export function refusalFor(key: KeyState | undefined, projectId: string, keyHash: string, now: number, fingerprint: string): Refusal | undefined {
  if (!key || key.projectId !== projectId || key.keyHash !== keyHash) return { code: 'KEY_INVALID' };
  if (key.revoked) return { code: 'KEY_REVOKED' };
  if (isBanned(key.ban, now)) return { code: 'KEY_BANNED', ban: key.ban };
  if (now >= key.expiresAt) return { code: 'KEY_EXPIRED' };
  if (needsBinding(key, fingerprint) && key.fingerprints.length >= (key.maxFingerprints ?? 0)) return { code: 'KEY_HWID_LOCKED' };
  if (key.maxUses !== null && key.currentUses >= key.maxUses) return { code: 'KEY_OVER_LIMIT' };
  return undefined;
}

/** The code alone of refusalFor: what the table of cases compares with the table's own condition. */
export const refusalOf = (key: KeyState | undefined, projectId: string, keyHash: string, now: number, fingerprint: string): RefusalCode | undefined =>
  refusalFor(key, projectId, keyHash, now, fingerprint)?.code;

/** Whether a check from `fingerprint` would bind a machine: the key is bound and this machine is not one of its. */
export const needsBinding = (key: Pick<KeyState, 'maxFingerprints' | 'fingerprints'>, fingerprint: string): boolean =>
  key.maxFingerprints !== null && !key.fingerprints.includes(fingerprint);

/** `max_uses − current_uses` after this check's use, or null for a key without a cap. */
export const usesLeft = (key: Pick<KeyState, 'maxUses' | 'currentUses'>): number | null =>
  key.maxUses === null ? null : Math.max(0, key.maxUses - key.currentUses);

export interface KeyCheckDeps {
  keys: KeyCheckStore;
  rateLimits: RateLimitStore;
  telemetry: TelemetrySink;
  /** This container's counts per address (one per container: its memory is the point). */
  addresses: AddressTally;
  /** This container's keys refused past the floor, answered with no write (one per container, as `addresses`). */
  refusals: RefusalMemory;
}

const VALIDATION_RESULT: Record<RefusalCode | 'KEY_VALID', ValidationResult> = {
  KEY_VALID: 'ok',
  KEY_REVOKED: 'revoked',
  KEY_BANNED: 'banned',
  KEY_EXPIRED: 'expired',
  KEY_HWID_LOCKED: 'hwid_locked',
  KEY_OVER_LIMIT: 'over_limit',
  KEY_INVALID: 'unknown',
};

/** What one check came to, for the endpoint to answer: validate says it in JSON, a script fetch serves or refuses. */
export type KeyCheckOutcome<Served> =
  | { outcome: 'valid'; keyId: string; key: CountedKey; served: Served }
  | ({ outcome: 'refused' } & Refusal)
  /** The key may run but the guard had nothing to serve (a project without a version): no use counted. */
  | { outcome: 'nothing_to_serve' };

/**
 * What a check guards besides the key's answer: a script fetch's current version, read before any use is counted,
 * so a fetch with nothing to serve counts no use, unless `expected` names the version the project is known to have
 * (a project that had a version always has one: uploads and rollbacks only move its pointer). Then the read and the
 * key's counting write go at once and the fetch waits for one round trip; the execution is reported as of
 * `expected`, which is the version served unless the pointer moved since this container last read it.
 */
export interface CheckGuard<Served extends { versionId: string }> {
  expected: string | undefined;
  read: () => Promise<Served | undefined>;
}

/**
 * One check, the same for `/v1/loader/validate` and `/v1/loader/script`: the client's address within its limit
 * (in memory, then in its shared window once busy), a value of no key's form refused with no request, and beside
 * the shared window what the check guards (a script fetch's version), then the key's own item judged and (when
 * valid) counted in one conditional write that also holds the check's telemetry (the stream takes it to ingest); a
 * refusal is reported to the telemetry sink, except KEY_INVALID. With nothing to serve, the key is judged by a
 * consistent read that counts nothing. Throws RateLimited past a limit; answers every other case, refusals included.
 */
export async function checkKey(deps: KeyCheckDeps, request: LoaderCheckRequest, sourceIp: string, now: number): Promise<KeyCheckOutcome<undefined>>;
export async function checkKey<Served extends { versionId: string }>(
  deps: KeyCheckDeps,
  request: LoaderCheckRequest,
  sourceIp: string,
  now: number,
  guard: CheckGuard<Served>,
): Promise<KeyCheckOutcome<Served>>;
export async function checkKey<Served extends { versionId: string }>(
  deps: KeyCheckDeps,
  request: LoaderCheckRequest,
  sourceIp: string,
  now: number,
  guard?: CheckGuard<Served>,
): Promise<KeyCheckOutcome<Served | undefined>> {
  const window = rateWindowAt(now);
  const address = clientAddressBucket(sourceIp);
  const local = deps.addresses.countCheck(address, window.start);
  const addressLimited = () =>
    new RateLimited(window.resetSeconds, `Too many key checks from this address: at most ${LOADER_LIMITS.perAddressPerMinute} per minute`);
  if (local && local.checks > LOADER_LIMITS.perAddressPerMinute) throw addressLimited();
  if (local && local.invalidKeys >= ADDRESS_COUNTING.invalidKeysPerMinute) {
    throw new RateLimited(window.resetSeconds, `Too many unknown keys from this address: at most ${ADDRESS_COUNTING.invalidKeysPerMinute} per minute`);
  }
  // A value this service cannot have made is no key of any project: answered with no request at all (and, as every
  // KEY_INVALID, reported nowhere), still a check of its address.
  if (!hasKeyValueForm(request.key)) return { outcome: 'refused', code: 'KEY_INVALID' };
  const keyHash = hashKeyValue(request.key);
  const keyId = keyIdOf(keyHash);
  const asked = checkReportOf(request);
  // A key this container keeps refusing is answered from memory before any request (the script's version pointer
  // included), its refusals reported together.
  const remembered = deps.refusals.held(keyId, window.start);
  const summaries = [...deps.refusals.takeLeftOver(), ...(remembered?.toReport ? [remembered.toReport] : [])];
  if (summaries.length > 0) await deps.telemetry.report(summaries.flatMap((held) => heldTelemetry(held, now)));
  if (remembered) return { outcome: 'refused', ...remembered.refusal };
  // The shared window only for a busy address (or one the full tally could not track); a guard's read that must come
  // before the key's write does not depend on it, so both go at once and a fetch waits for as many round trips in a
  // row as validate.
  const shared = local === undefined || local.checks > ADDRESS_COUNTING.sharedAfter;
  const readFirst = guard !== undefined && guard.expected === undefined;
  const [addressCount, readBefore] = await Promise.all([
    shared
      ? deps.rateLimits.countRequest(
          `loader-address#${address}`,
          { start: window.start, seconds: LOADER_LIMITS.windowSeconds },
          LOADER_LIMITS.perAddressPerMinute,
        )
      : 0,
    readFirst ? guard.read() : undefined,
  ]);
  if (addressCount === undefined) throw addressLimited();
  // A refusal writes nothing on the key item, so its telemetry goes to the sink; KEY_INVALID instead counts toward
  // the address's unknown keys and is reported nowhere: ingest could only reject it, and a flood of random keys
  // would otherwise cost a queue message and its ingest per guess.
  const refuse = async (refusal: Refusal, report: CheckReport): Promise<KeyCheckOutcome<Served | undefined>> => {
    if (refusal.code === 'KEY_INVALID') deps.addresses.countInvalidKey(address, window.start);
    else {
      deps.refusals.refused(keyId, refusal, window.start, report);
      await deps.telemetry.report(checkTelemetry(report, keyId, refusal.code, now));
    }
    return { outcome: 'refused', ...refusal };
  };
  if (readFirst && readBefore === undefined) {
    const refusal = refusalFor(await deps.keys.peek(keyId), request.project_id, keyHash, now, request.fingerprint);
    return refusal ? refuse(refusal, asked) : { outcome: 'nothing_to_serve' };
  }
  // A script fetch's execution is of the version served (or, read at once, expected), whatever the request named.
  const servedVersion = readBefore?.versionId ?? guard?.expected;
  const executed = servedVersion ? { ...asked, version_id: servedVersion } : asked;
  // Both are issued after this fetch began, so a rollback or revoke that answered before it is seen by both: the
  // pointer read is strongly consistent and the write is conditional on the key's latest state.
  const count = () =>
    deps.keys.checkAndCount({
      projectId: request.project_id,
      keyId,
      keyHash,
      fingerprint: request.fingerprint,
      now,
      perKeyPerMinute: LOADER_LIMITS.perKeyPerMinute,
      report: executed,
      mayRun: (key) => refusalFor(key, request.project_id, keyHash, now, request.fingerprint) === undefined,
    });
  const [first, readBeside] = await Promise.all([count(), guard && !readFirst ? guard.read() : undefined]);
  const served = readBefore ?? readBeside;
  // The store reads why a write failed after the failure: a state that admits the key under a window that is not full
  // means it was lifted in between (an extend or an unban), so the check is counted again on it, once.
  const lifted = (write: CheckWrite) =>
    write.outcome === 'not_counted' &&
    refusalFor(write.key, request.project_id, keyHash, now, request.fingerprint) === undefined &&
    write.checksThisWindow < LOADER_LIMITS.perKeyPerMinute;
  const counted = lifted(first) ? await count() : first;
  // A blacklisted machine's binding is refused as a ban without end, with the entry's reason.
  if (counted.outcome === 'machine_blacklisted') return refuse({ code: 'KEY_BANNED', ban: { reason: counted.reason, until: null } }, executed);
  if (counted.outcome === 'not_counted') {
    // The write's condition held the key to the rule: the state it saw says why (and a refusal wins over the limit).
    const refusal = refusalFor(counted.key, request.project_id, keyHash, now, request.fingerprint);
    if (refusal) return refuse(refusal, executed);
    if (counted.checksThisWindow >= LOADER_LIMITS.perKeyPerMinute) {
      throw new RateLimited(window.resetSeconds, `Too many checks of this key: at most ${LOADER_LIMITS.perKeyPerMinute} per minute`);
    }
    throw new Error(`The counting write of key ${keyId} was refused on a state refusalOf admits: MAY_RUN and refusalOf disagree`);
  }
  // A pointer never goes back to none, so a project expected to have a version has one; this is a broken table.
  if (guard && served === undefined) throw new Error(`Project ${request.project_id} had a current version and has none now`);
  // A counted check's telemetry rode on its write (`report`): the table's stream carries it to ingest, at no request here.
  return { outcome: 'valid', keyId: counted.keyId, key: counted.key, served };
}

/** What a check tells the detectors, of the request as it came: the stub's timing in the form the key item keeps. */
export const checkReportOf = (request: LoaderCheckRequest): CheckReport => {
  const timing = checkTimingOf(request.timing);
  return {
    project_id: request.project_id,
    executor: request.executor,
    fingerprint: request.fingerprint,
    ...(request.script_hash ? { script_hash: request.script_hash } : {}),
    ...(request.version_id ? { version_id: request.version_id } : {}),
    ...(timing ? { timing } : {}),
  };
};

/** The validate endpoint's answer to a check (it guards nothing, so there is always a verdict). */
export function validateAnswer(outcome: KeyCheckOutcome<undefined>): LoaderCheckResponse {
  if (outcome.outcome === 'valid')
    return { valid: true, code: 'KEY_VALID', key_id: outcome.keyId, expires_at: outcome.key.expiresAt, uses_left: usesLeft(outcome.key) };
  if (outcome.outcome === 'refused') {
    return outcome.code === 'KEY_BANNED' ? { valid: false, code: outcome.code, reason: outcome.ban.reason } : { valid: false, code: outcome.code };
  }
  throw new Error('A check that guards nothing always has a verdict');
}

/** The one record that reports refusals answered from memory: the last one's fields, standing for all of them. */
const heldTelemetry = (held: HeldRefusals, at: number): (ValidationRecord | ExecutionRecord)[] =>
  checkTelemetry(held.report, held.keyId, held.refusal.code, at, held.count);

/**
 * The records a check makes for the analytics detectors, as if reported through the ingest path; `count` > 1 for
 * a validation standing for that many identical refusals (see RefusalMemory).
 */
export function checkTelemetry(
  request: CheckReport,
  keyId: string,
  code: RefusalCode | 'KEY_VALID',
  at: number,
  count = 1,
): (ValidationRecord | ExecutionRecord)[] {
  const validation: ValidationRecord = {
    kind: 'validation',
    projectId: request.project_id,
    keyId,
    result: VALIDATION_RESULT[code],
    executor: request.executor,
    fingerprint: request.fingerprint,
    at,
    ...(count > 1 ? { count } : {}),
  };
  if (code !== 'KEY_VALID') return [validation];
  const execution: ExecutionRecord = {
    kind: 'execution',
    projectId: request.project_id,
    keyId,
    executor: request.executor,
    ...(request.script_hash ? { scriptHash: request.script_hash } : {}),
    ...(request.version_id ? { versionId: request.version_id } : {}),
    at,
    ...(request.timing ? { timing: executionTimingOf(request.timing) } : {}),
  };
  return [validation, execution];
}
