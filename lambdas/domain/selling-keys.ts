import { createHash, randomBytes } from 'node:crypto';
import { PATH_ID_PATTERN } from '#schemas/formats';
import { type IssueKeysBody, LIFETIME_EXPIRES_AT } from '#schemas/requests';
import type { IssueKeysResponse, KeyDetailResponse, ResetHwidResponse } from '#schemas/responses';
import { AUDIT_ACTIONS, type AuditAction, type AuditTrail, apiEntry } from './audit';
import { KeyNotFound, OrderConflict, OrderRepeatClosed } from './errors';
import { shownAt } from './key-lifecycle';
import { hashKeyValue, keyIdOf, newKeyValue, type OrderKeyRef, orderKeyValue, orderWatermark } from './key-values';
import type { Project } from './model';
import type { IssueOrder, KeyBatch, KeySecret, KeyStore } from './ports';

/**
 * Selling keys (DESIGN.md, "Selling keys: issue over the API, bind to machines"): a shop's delivery hook or a bot
 * issues keys, a retried order gets the same keys back, and the owner resets a key's machines in one call.
 */

/** What issuing needs besides the request: where keys and orders are kept, and the secret order keys derive from. */
export interface KeyIssuing {
  store: KeyStore;
  secret: KeySecret;
}

/** The tier keys issued over the API get (the spec's key has one; the API does not choose it). */
const ISSUED_TIER = 'standard';

/**
 * How long an order's repeat is answered with its keys: days of a shop's delivery retries, not forever, so an order id
 * claimed ahead of its buyer (by a token that leaked) cannot sit waiting for the shop to send it.
 */
export const ORDER_REPEAT_WINDOW_SECONDS = 72 * 3600;

/** `expires_at` of keys issued at `issuedAt` for `duration`. */
const expiresAtOf = (duration: IssueKeysBody['duration'], issuedAt: number): number => (duration === 'lifetime' ? LIFETIME_EXPIRES_AT : issuedAt + duration);

/**
 * What a request asks for, as one hash: its parsed body (defaults applied, a duration preset as its seconds) without
 * the order id, in a fixed field order. `{}` and `{"count": 1}` ask for the same; any other difference is another
 * body, which the same order id refuses.
 */
export function bodyHashOf(body: IssueKeysBody): string {
  const meaning = [body.count, body.duration, body.max_uses, body.max_fingerprints, body.watermark ?? null, body.note ?? null, body.discord_id ?? null];
  return createHash('sha256').update(JSON.stringify(meaning)).digest('hex');
}

/** A key with its raw value, before it is stored as its hash. */
interface RawKey {
  id: string;
  key: string;
  watermark: string;
}

/** Raw keys from their values and watermarks: the id is derived from the value's hash (see #domain/key-values). */
function rawKeys(count: number, keyValueOf: (index: number) => string, watermarkOf: (index: number) => string): RawKey[] {
  return Array.from({ length: count }, (_, index) => {
    const key = keyValueOf(index);
    return { id: keyIdOf(hashKeyValue(key)), key, watermark: watermarkOf(index) };
  });
}

/** Keys with random values, as the dashboard and order-less API calls issue them: `watermark` for all, or one fresh each. */
export function randomKeys(count: number, watermark?: string): RawKey[] {
  return rawKeys(count, newKeyValue, () => watermark ?? randomBytes(8).toString('hex'));
}

/** An order's keys, derived again identically by every repeat of it. */
function orderKeys(secret: Uint8Array, order: OrderKeyRef, count: number, watermark?: string): RawKey[] {
  return rawKeys(
    count,
    (index) => orderKeyValue(secret, order, index),
    (index) => watermark ?? orderWatermark(secret, order, index),
  );
}

/** The batch the store writes: hashes only, never a raw value. */
export function batchOf(projectId: string, keys: readonly RawKey[], fields: Omit<KeyBatch, 'projectId' | 'keys'>): KeyBatch {
  return { projectId, keys: keys.map(({ id, key, watermark }) => ({ id, keyHash: hashKeyValue(key), watermark })), ...fields };
}

/**
 * `POST /v1/projects/:id/keys`. Without `order_id`, fresh random keys. With one, the keys of that order: the first
 * call records the order with the keys' numbers in one atomic write, and every value derives from the stack's
 * secret, the project, the order id and the key's index; a repeat (or a concurrent call that lost the race to
 * record it) issues nothing, writes any key the first call did not get to, and answers the same keys with
 * `repeated: true` and the first call's `issued_at`. Only the token that placed the order may repeat it, within
 * ORDER_REPEAT_WINDOW_SECONDS.
 * The audit entry names the order, the count and the ids, never a raw value (`action`: a shop's delivery is entered
 * as `shop.deliver`).
 */
export async function issueKeys(
  issuing: KeyIssuing,
  project: Project,
  body: IssueKeysBody,
  now: number,
  trail: AuditTrail,
  action: AuditAction = AUDIT_ACTIONS.issueKeys,
): Promise<IssueKeysResponse> {
  const orderId = body.order_id;
  const bodyHash = bodyHashOf(body);
  const fieldsAt = (issuedAt: number): Omit<KeyBatch, 'projectId' | 'keys'> => ({
    tier: ISSUED_TIER,
    maxUses: body.max_uses,
    maxFingerprints: body.max_fingerprints,
    note: body.note ?? null,
    discordId: body.discord_id ?? null,
    issuedAt,
    expiresAt: expiresAtOf(body.duration, issuedAt),
  });
  const audited = async (keys: readonly RawKey[], issuedCount: number, batch: KeyBatch): Promise<IssueKeysResponse> => {
    await trail.log.record(
      apiEntry(trail, {
        projectId: project.id,
        at: now,
        action,
        target: { order_id: orderId ?? null, count: body.count },
        outcome: { issued_count: issuedCount, key_ids: keys.map((key) => key.id).join(',') },
      }),
    );
    return {
      keys: keys.map(({ id, key, watermark }) => ({ id, key, watermark, expires_at: batch.expiresAt })),
      repeated: issuedCount === 0,
      issued_at: batch.issuedAt,
    };
  };

  if (orderId === undefined) {
    const keys = randomKeys(body.count, body.watermark);
    const batch = batchOf(project.id, keys, fieldsAt(now));
    await issuing.store.issue(batch);
    return audited(keys, keys.length, batch);
  }

  const ref = { projectId: project.id, orderId };
  const secret = await issuing.secret.get();
  const repeat = async (order: IssueOrder): Promise<IssueKeysResponse> => {
    // Another token's repeat and another body get the same refusal, so neither learns what the order holds; only
    // the token that placed it, sending the same body, gets the keys back, and only within the window.
    const placedByAnother = order.tokenId !== undefined && order.tokenId !== trail.actor.tokenId;
    if (placedByAnother || order.bodyHash !== bodyHash) throw new OrderConflict(orderId);
    if (now >= order.issuedAt + ORDER_REPEAT_WINDOW_SECONDS) throw new OrderRepeatClosed(orderId, ORDER_REPEAT_WINDOW_SECONDS);
    const keys = orderKeys(secret, ref, order.count, body.watermark);
    // A failure of the service, not of the request: the caller must not get keys its order never had.
    if (keys[0]?.id !== order.firstKeyId)
      throw new Error(`Order ${orderId} of project ${project.id} derives other keys than it issued: the key secret was replaced`);
    const batch = batchOf(project.id, keys, fieldsAt(order.issuedAt));
    // Keys a first call recorded but did not live to write; none on a plain repeat.
    await issuing.store.completeOrder(batch, order.firstSeq);
    return audited(keys, 0, batch);
  };
  const recorded = await issuing.store.findOrder(project.id, orderId);
  if (recorded) return repeat(recorded);
  const keys = orderKeys(secret, ref, body.count, body.watermark);
  const batch = batchOf(project.id, keys, fieldsAt(now));
  const outcome = await issuing.store.issue(batch, { orderId, bodyHash, tokenId: trail.actor.tokenId });
  if (outcome.outcome === 'order_exists') return repeat(outcome.order);
  return audited(keys, keys.length, batch);
}

/** `GET /v1/projects/:id/keys/:key_id`: 404 for a key of another project or none, as a revoke answers. */
export async function keyDetail(store: KeyStore, project: Project, keyId: string, now: number): Promise<KeyDetailResponse> {
  // An id this service could never have made names no key: answered before any table read.
  const key = PATH_ID_PATTERN.test(keyId) ? await store.getKey(project.id, keyId) : undefined;
  if (!key) throw new KeyNotFound(keyId);
  return { key: shownAt(key, now) };
}

/**
 * `POST /v1/projects/:id/keys/reset-hwid`: every machine of the key unbound in one write; the next checks bind
 * anew. A key that is not bound has nothing to clear and answers `cleared: 0`.
 */
export async function resetHwid(store: KeyStore, project: Project, keyId: string, now: number, trail: AuditTrail): Promise<ResetHwidResponse> {
  const cleared = await store.resetFingerprints(project.id, keyId);
  if (cleared === undefined) throw new KeyNotFound(keyId);
  await trail.log.record(apiEntry(trail, { projectId: project.id, at: now, action: AUDIT_ACTIONS.resetHwid, target: { key_id: keyId }, outcome: { cleared } }));
  return { ok: true, cleared };
}
