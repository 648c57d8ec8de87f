import { randomBytes, randomUUID } from 'node:crypto';
import { type LastCheck, lastCheckOf } from '#adapters/key-check-store';
import type { StatsDimension, StatsGranularity, StoredStatsBucket } from '#domain/analytics/stats';
import type { AuditDetails, AuditEntry, AuditStatus } from '#domain/audit';
import type { BlacklistAdd, BlacklistEntry, BlacklistTarget } from '#domain/blacklist-model';
import { type CheckWrite, type KeyBan, type KeyState, needsBinding } from '#domain/key-check';
import { hashKeyValue, keyIdOf, newKeyValue } from '#domain/key-values';
import type { Key, KeyDetail, Project, Version, Webhook } from '#domain/model';
import type {
  AuditLog,
  BlacklistStore,
  ClaimResult,
  DeliveryStore,
  FanoutStore,
  IssueOrder,
  IssueOutcome,
  KeyBatch,
  KeyCheck,
  KeyCheckStore,
  KeyEdit,
  KeyStore,
  NewOrder,
  ProjectStore,
  RateLimitStore,
  RevokeOutcome,
  ScriptObject,
  ScriptStore,
  StatsBucketsQuery,
  TokenStore,
  WebhookTarget,
} from '#domain/ports';
import { rateWindowAt } from '#domain/rate-limit';
import { hashToken, type TokenGrant, type TokenLimits, type TokenScope, tokenIdOf } from '#domain/tokens';

/**
 * The API's and the webhook pipeline's storage ports in memory, with the semantics of the DynamoDB stores in
 * `lambdas/adapters/`: test/integration/store-contract/ runs the same tests on both, so a fake that drifts from its
 * store fails there. Handler and domain tests run on this, so what they pin is the service's behaviour, not the
 * commands it sends. Seeding helpers stand in for the dashboard.
 */

/** A key as the table holds it: the spec's fields and what places it in the indexes. */
export interface StoredKey extends Key {
  projectId: string;
  /** Dense per project, 1..n in issue order (the byIssueOrder index's sort key). */
  issueSeq: number;
  revokedAt?: number;
  revokedBy?: string | undefined;
  /** What selling adds (KeyDetail's fields), as the key item holds them. */
  selling?: Omit<KeyDetail, keyof Key | 'revoked_by'>;
}

/** A rate-limit counter: one per bucket and window start, as the table keeps one item each. */
export interface RateWindowCount {
  bucket: string;
  start: number;
  seconds: number;
  requests: number;
}

/** Keys per page of the watermark index: small, so a bulk revoke of a few dozen keys reads several pages. */
const WATERMARK_PAGE_SIZE = 25;

const SEEDED_AT = 1_700_000_000;

export class MemoryStores implements ProjectStore, RateLimitStore, TokenStore, AuditLog, KeyStore, FanoutStore, DeliveryStore, BlacklistStore {
  private readonly projects = new Map<string, Project>();
  /** By key id: keys have a partition each, so ids are unique across projects. */
  private readonly keys = new Map<string, StoredKey>();
  private readonly versions = new Map<string, Map<string, Version>>();
  private readonly webhooks = new Map<string, Map<string, Webhook>>();
  private readonly tokens = new Map<string, TokenGrant>();
  /** In the order written; an entry written with a change is written only when the change is made, as in one transaction. */
  private readonly entries: AuditEntry[] = [];
  private readonly windows = new Map<string, RateWindowCount>();
  private keysIssued = 0;
  private readonly orders = new Map<string, IssueOrder>();
  /** Stats counters by project, `<granularity>#<dimension>` and bucket start, as ingest would have left them. */
  private readonly statsCounters = new Map<string, Map<string, Map<number, StoredStatsBucket>>>();
  /** Webhook delivery claims by delivery id. */
  private readonly claims = new Map<string, DeliveryClaim>();
  /** Each project's blacklist in its dense positions (position n is index n - 1). */
  private readonly blacklists = new Map<string, BlacklistEntry[]>();
  /** `<projectId>#<fingerprint>` → ids of the keys the machine was bound to, as the loader records them. */
  private readonly machines = new Map<string, Set<string>>();

  // ---- Seeding, as the dashboard would ----

  /** A blacklist entry, at the end of the project's positions (as addEntry leaves it). */
  addBlacklistEntry(projectId: string, entry: BlacklistEntry): void {
    this.blacklist(projectId).push({ ...entry });
  }

  /** A machine's binding of a key, as the loader leaves it: in the key's machines and in the machine's record. */
  bindMachine(projectId: string, keyId: string, fingerprint: string, boundAt = SEEDED_AT): void {
    const key = this.projectKey(projectId, keyId);
    if (!key) throw new Error(`bindMachine: no key ${keyId} in ${projectId}`);
    const selling = { ...(key.selling ?? NO_SELLING) };
    selling.fingerprints = [...selling.fingerprints, { fingerprint, bound_at: boundAt }];
    key.selling = selling;
    const record = this.machines.get(`${projectId}#${fingerprint}`) ?? new Set<string>();
    this.machines.set(`${projectId}#${fingerprint}`, record.add(keyId));
  }

  addProject(project: Pick<Project, 'id' | 'ownerId'> & Partial<Project>): Project {
    const full: Project = { name: 'Test Script', plan: 'business', currentVersionId: null, keyCount: 0, createdAt: SEEDED_AT, ...project };
    this.projects.set(full.id, full);
    return { ...full };
  }

  /** Issue keys in order, each the next of the project's sequence (after `keyCount`); unset fields get plausible values. */
  addKeys(projectId: string, keys: readonly Partial<Key>[]): Key[] {
    const project = this.projects.get(projectId);
    if (!project) throw new Error(`addKeys: no project ${projectId}`);
    return keys.map((fields) => {
      this.keysIssued += 1;
      project.keyCount += 1;
      const key: StoredKey = {
        id: `key_${String(this.keysIssued).padStart(20, '0')}`,
        user_hash: 'b'.repeat(64),
        tier: 'standard',
        watermark: '0123456789abcdef',
        issued_at: SEEDED_AT,
        expires_at: SEEDED_AT + 30 * 86_400,
        max_uses: null,
        current_uses: 0,
        revoked: 0,
        ...fields,
        projectId,
        issueSeq: project.keyCount,
      };
      this.keys.set(key.id, key);
      return toKey(key);
    });
  }

  addVersions(projectId: string, ...versions: Version[]): void {
    const stored = childrenOf(this.versions, projectId);
    for (const version of versions) stored.set(version.id, { ...version });
  }

  addStatsBucket(projectId: string, granularity: StatsGranularity, by: StatsDimension, bucket: StoredStatsBucket): void {
    const ofProject = this.statsCounters.get(projectId) ?? new Map<string, Map<number, StoredStatsBucket>>();
    this.statsCounters.set(projectId, ofProject);
    const series = ofProject.get(`${granularity}#${by}`) ?? new Map<number, StoredStatsBucket>();
    ofProject.set(`${granularity}#${by}`, series);
    series.set(bucket.t, { ...bucket, counts: { ...bucket.counts } });
  }

  addWebhooks(projectId: string, ...webhooks: Webhook[]): void {
    const stored = childrenOf(this.webhooks, projectId);
    for (const webhook of webhooks) stored.set(webhook.id, { ...webhook });
  }

  /** Only the token's SHA-256 is kept, as the dashboard stores it. */
  addToken(ownerId: string, token: string, scope: TokenScope = 'write', limits: TokenLimits = {}): void {
    const tokenHash = hashToken(token);
    this.tokens.set(tokenHash, { ownerId, tokenId: tokenIdOf(tokenHash), scope, ...structuredClone(limits) });
  }

  /** As the dashboard's revoke leaves the table: the token's hash is gone. */
  revokeToken(token: string): void {
    this.tokens.delete(hashToken(token));
  }

  // ---- Inspection ----

  storedKey(keyId: string): StoredKey | undefined {
    const key = this.keys.get(keyId);
    return key && { ...key };
  }

  auditEntries(): AuditEntry[] {
    return structuredClone(this.entries);
  }

  rateWindows(): RateWindowCount[] {
    return [...this.windows.values()].map((window) => ({ ...window }));
  }

  // ---- ProjectStore ----

  async getProject(projectId: string): Promise<Project | undefined> {
    const project = this.projects.get(projectId);
    return project && { ...project };
  }

  async listKeysAfter(projectId: string, afterSeq: number, limit: number): Promise<Key[]> {
    return this.keysOf(projectId)
      .filter((key) => key.issueSeq > afterSeq)
      .slice(0, limit)
      .map(toKey);
  }

  async listKeysWithWatermark(projectId: string, watermark: string, offset: number, limit: number): Promise<{ keys: Key[]; total: number }> {
    const matching = this.keysOf(projectId).filter((key) => key.watermark === watermark);
    return { keys: matching.slice(offset, offset + limit).map(toKey), total: matching.length };
  }

  /** Conditional on the key being this project's and active: another project's key is as unknown as a missing one. */
  async revokeKey(projectId: string, keyId: string, now: number, entry?: AuditEntry, by = entry?.tokenId ?? entry?.source): Promise<RevokeOutcome> {
    const key = this.keys.get(keyId);
    if (!key || key.projectId !== projectId) return 'not_found';
    if (key.revoked === 1) return 'already_revoked';
    if (entry) this.refuseClash(entry);
    key.revoked = 1;
    key.revokedAt = now;
    key.revokedBy = by;
    if (entry) this.entries.push(structuredClone(entry));
    return 'revoked';
  }

  /** The watermark index read page by page, revoked keys too, WATERMARK_PAGE_SIZE keys a page. */
  async *keyIdsWithWatermark(projectId: string, watermark: string): AsyncIterable<string[]> {
    const marked = this.keysOf(projectId).filter((key) => key.watermark === watermark);
    for (let start = 0; start === 0 || start < marked.length; start += WATERMARK_PAGE_SIZE)
      yield marked.slice(start, start + WATERMARK_PAGE_SIZE).map((key) => key.id);
  }

  async revokeIfActive(projectId: string, keyId: string, now: number, by?: string): Promise<boolean> {
    return (await this.revokeKey(projectId, keyId, now, undefined, by)) === 'revoked';
  }

  async activeAmong(keyIds: readonly string[]): Promise<string[]> {
    return keyIds.filter((keyId) => this.keys.get(keyId)?.revoked === 0);
  }

  /** In sort-key order (by id), as the table returns a project's children; the domain orders them for the API. */
  async listVersions(projectId: string): Promise<Version[]> {
    return sortedById(this.versions.get(projectId));
  }

  async setCurrentVersion(projectId: string, versionId: string, entry?: AuditEntry): Promise<boolean> {
    const project = this.projects.get(projectId);
    if (!project || !this.versions.get(projectId)?.has(versionId)) return false;
    if (entry) this.refuseClash(entry);
    project.currentVersionId = versionId;
    if (entry) this.entries.push(structuredClone(entry));
    return true;
  }

  async listWebhooks(projectId: string): Promise<Webhook[]> {
    return sortedById(this.webhooks.get(projectId));
  }

  async statsBuckets({ projectId, granularity, by, first, last }: StatsBucketsQuery): Promise<StoredStatsBucket[]> {
    const series = this.statsCounters.get(projectId)?.get(`${granularity}#${by}`) ?? new Map<number, StoredStatsBucket>();
    return [...series.values()].filter(({ t }) => t >= first && t <= last).sort((a, b) => a.t - b.t);
  }

  // ---- KeyStore ----

  async findOrder(projectId: string, orderId: string): Promise<IssueOrder | undefined> {
    const order = this.orders.get(`${projectId}#${orderId}`);
    return order && { ...order };
  }

  async issue(batch: KeyBatch, order?: NewOrder): Promise<IssueOutcome> {
    const project = this.projects.get(batch.projectId);
    if (!project) throw new Error(`Project ${batch.projectId} does not exist`);
    if (order) {
      const recorded = this.orders.get(`${batch.projectId}#${order.orderId}`);
      if (recorded) return { outcome: 'order_exists', order: { ...recorded } };
    }
    const firstSeq = project.keyCount + 1;
    project.keyCount += batch.keys.length;
    if (order)
      this.orders.set(`${batch.projectId}#${order.orderId}`, {
        projectId: batch.projectId,
        ...order,
        firstSeq,
        count: batch.keys.length,
        issuedAt: batch.issuedAt,
        firstKeyId: batch.keys[0]?.id ?? '',
      });
    await this.completeOrder(batch, firstSeq);
    return { outcome: 'issued', firstSeq };
  }

  async completeOrder(batch: KeyBatch, firstSeq: number): Promise<number> {
    const missing = batch.keys.filter((key) => !this.keys.has(key.id));
    for (const key of missing) {
      this.keys.set(key.id, {
        id: key.id,
        user_hash: 'b'.repeat(64),
        tier: batch.tier,
        watermark: key.watermark,
        issued_at: batch.issuedAt,
        expires_at: batch.expiresAt,
        max_uses: batch.maxUses,
        current_uses: 0,
        revoked: 0,
        projectId: batch.projectId,
        issueSeq: firstSeq + batch.keys.indexOf(key),
        selling: { ...NO_SELLING, note: batch.note, discord_id: batch.discordId, max_fingerprints: batch.maxFingerprints },
      });
    }
    return missing.length;
  }

  async getKey(projectId: string, keyId: string): Promise<KeyDetail | undefined> {
    const key = this.keys.get(keyId);
    if (!key || key.projectId !== projectId) return undefined;
    return { ...toKey(key), ...structuredClone(key.selling ?? NO_SELLING), revoked_by: key.revoked === 1 ? (key.revokedBy ?? null) : null };
  }

  async setBan(projectId: string, keyId: string, ban: KeyBan | null): Promise<boolean> {
    const key = this.projectKey(projectId, keyId);
    if (!key) return false;
    key.selling = { ...(key.selling ?? NO_SELLING), ban: ban && { ...ban } };
    return true;
  }

  async extendExpiry(projectId: string, keyId: string, extension: { seconds: number; now: number } | { lifetimeAt: number }): Promise<number | undefined> {
    const key = this.projectKey(projectId, keyId);
    if (!key) return undefined;
    key.expires_at = 'lifetimeAt' in extension ? extension.lifetimeAt : Math.max(extension.now, key.expires_at) + extension.seconds;
    return key.expires_at;
  }

  async editKey(projectId: string, keyId: string, edit: KeyEdit): Promise<KeyDetail | undefined> {
    if (Object.values(edit).every((value) => value === undefined)) throw new Error('An edit of a key must change something');
    const key = this.projectKey(projectId, keyId);
    if (!key) return undefined;
    const selling = { ...(key.selling ?? NO_SELLING) };
    if (edit.note !== undefined) selling.note = edit.note;
    if (edit.discordId !== undefined) selling.discord_id = edit.discordId;
    if (edit.maxUses !== undefined) key.max_uses = edit.maxUses;
    if (edit.maxFingerprints !== undefined) {
      selling.max_fingerprints = edit.maxFingerprints;
      if (edit.maxFingerprints === null) selling.fingerprints = [];
    }
    key.selling = selling;
    return this.getKey(projectId, keyId);
  }

  private projectKey(projectId: string, keyId: string): StoredKey | undefined {
    const key = this.keys.get(keyId);
    return key?.projectId === projectId ? key : undefined;
  }

  // ---- Buyer blacklist ----

  async findEntry(projectId: string, target: BlacklistTarget): Promise<BlacklistEntry | undefined> {
    const entry = this.blacklist(projectId).find((listed) => listed.kind === target.kind && listed.value === target.value);
    return entry && { ...entry };
  }

  async addEntry(projectId: string, entry: BlacklistEntry, maxEntries: number): Promise<BlacklistAdd> {
    const existing = await this.findEntry(projectId, entry);
    if (existing) return { outcome: 'exists', entry: existing };
    const list = this.blacklist(projectId);
    if (list.length >= maxEntries) return { outcome: 'full' };
    list.push({ ...entry });
    return { outcome: 'added' };
  }

  async removeEntry(projectId: string, target: BlacklistTarget): Promise<BlacklistEntry | undefined> {
    const list = this.blacklist(projectId);
    const at = list.findIndex((listed) => listed.kind === target.kind && listed.value === target.value);
    if (at === -1) return undefined;
    const removed = list[at] as BlacklistEntry;
    // As the table does: the last position moves into the freed one.
    const last = list.pop() as BlacklistEntry;
    if (at < list.length) list[at] = last;
    return removed;
  }

  async listEntries(projectId: string, offset: number, limit: number): Promise<{ entries: BlacklistEntry[]; total: number }> {
    const list = this.blacklist(projectId);
    return { entries: list.slice(offset, offset + limit).map((entry) => ({ ...entry })), total: list.length };
  }

  async keyIdsOfBuyer(projectId: string, target: BlacklistTarget, limit: number): Promise<string[]> {
    if (target.kind === 'email_sha256') return [];
    const ids =
      target.kind === 'fingerprint' ? [...(this.machines.get(`${projectId}#${target.value}`) ?? [])] : await this.keyIdsByDiscordId(projectId, target.value);
    return ids.slice(0, limit);
  }

  async banKeys(projectId: string, keyIds: readonly string[], reason: string): Promise<number> {
    let banned = 0;
    for (const keyId of keyIds) {
      const key = this.projectKey(projectId, keyId);
      if (!key || key.revoked === 1 || (key.selling?.ban && key.selling.ban.until === null)) continue;
      key.selling = { ...(key.selling ?? NO_SELLING), ban: { reason, until: null } };
      banned += 1;
    }
    return banned;
  }

  private blacklist(projectId: string): BlacklistEntry[] {
    const list = this.blacklists.get(projectId) ?? [];
    this.blacklists.set(projectId, list);
    return list;
  }

  async keyIdsByDiscordId(projectId: string, discordId: string): Promise<string[]> {
    return [...this.keys.values()]
      .filter((key) => key.projectId === projectId && key.selling?.discord_id === discordId)
      .sort((a, b) => a.issueSeq - b.issueSeq)
      .map((key) => key.id);
  }

  async keyDetails(projectId: string, keyIds: readonly string[]): Promise<KeyDetail[]> {
    const details = await Promise.all(keyIds.map((keyId) => this.getKey(projectId, keyId)));
    return details.filter((detail) => detail !== undefined);
  }

  async resetFingerprints(projectId: string, keyId: string): Promise<number | undefined> {
    const key = this.keys.get(keyId);
    if (!key || key.projectId !== projectId) return undefined;
    const cleared = key.selling?.fingerprints.length ?? 0;
    if (key.selling) key.selling.fingerprints = [];
    return cleared;
  }

  // ---- TokenStore ----

  async findToken(tokenHash: string): Promise<TokenGrant | undefined> {
    const grant = this.tokens.get(tokenHash);
    return grant && { ...grant };
  }

  // ---- AuditLog ----

  /** Like the conditional put: an entry id already written (for the same project or owner) is refused. */
  async record(entry: AuditEntry): Promise<void> {
    this.refuseClash(entry);
    this.entries.push(structuredClone(entry));
  }

  /** An entry's put is conditional on no entry there, alone or in a change's transaction (which then fails whole). */
  private refuseClash(entry: AuditEntry): void {
    if (this.entries.some((written) => sameAuditEntry(written, entry))) throw new Error(`audit entry ${entry.entryId} exists already`);
  }

  /** Like the conditional update: only an entry that was written. */
  async finish(entry: AuditEntry, status: Exclude<AuditStatus, 'started'>, outcome: AuditDetails): Promise<void> {
    const written = this.entries.find((candidate) => sameAuditEntry(candidate, entry));
    if (!written) throw new Error(`finish: no audit entry ${entry.entryId}`);
    Object.assign(written, { status, outcome: { ...outcome } });
  }

  // ---- RateLimitStore ----

  /** Like the conditional ADD: a window's first request always counts, later ones only below the limit. */
  async countRequest(bucket: string, window: { start: number; seconds: number }, limit: number): Promise<number | undefined> {
    const id = `${bucket}#${window.start}`;
    const counted = this.windows.get(id) ?? { bucket, start: window.start, seconds: window.seconds, requests: 0 };
    if (counted.requests > 0 && counted.requests >= limit) return undefined;
    this.windows.set(id, { ...counted, seconds: window.seconds, requests: counted.requests + 1 });
    return counted.requests + 1;
  }

  async isFull(bucket: string, window: { start: number; seconds: number }, limit: number): Promise<boolean> {
    return (this.windows.get(`${bucket}#${window.start}`)?.requests ?? 0) >= limit;
  }

  // ---- FanoutStore and DeliveryStore ----

  async webhooksOf(projectId: string): Promise<WebhookTarget[]> {
    return sortedById(this.webhooks.get(projectId)).map(({ id, url, events, enabled }) => ({ id, url, events, enabled }));
  }

  async projectName(projectId: string): Promise<string | undefined> {
    return this.projects.get(projectId)?.name;
  }

  async webhookState(projectId: string, webhookId: string): Promise<{ enabled: number; url: string } | undefined> {
    const webhook = this.webhooks.get(projectId)?.get(webhookId);
    return webhook && { enabled: webhook.enabled, url: webhook.url };
  }

  /** Like the conditional put: no claim yet, a released one, or one still sending since `staleAfterSeconds` or more. */
  async claimDelivery(deliveryId: string, now: number, staleAfterSeconds: number): Promise<ClaimResult> {
    const old = this.claims.get(deliveryId);
    if (!old || old.state === 'released' || (old.state === 'sending' && old.claimedAt <= now - staleAfterSeconds)) {
      const token = randomUUID();
      this.claims.set(deliveryId, { state: 'sending', token, claimedAt: now });
      return { outcome: 'claimed', token };
    }
    if (old.state === 'sent') return { outcome: 'sent' };
    return { outcome: 'held', retryInSeconds: Math.max(1, old.claimedAt + staleAfterSeconds - now + 1) };
  }

  async markSent(deliveryId: string, token: string, _now: number): Promise<boolean> {
    return this.updateOwnClaim(deliveryId, token, 'sent');
  }

  async releaseClaim(deliveryId: string, token: string): Promise<void> {
    this.updateOwnClaim(deliveryId, token, 'released');
  }

  async disableWebhook(projectId: string, webhookId: string, url: string, now: number): Promise<boolean> {
    const webhook = this.webhooks.get(projectId)?.get(webhookId);
    if (webhook?.enabled !== 1 || webhook.url !== url) return false;
    webhook.enabled = 0;
    webhook.updated_at = now;
    return true;
  }

  /** Only while the claim is still this attempt's (same token, still sending). */
  private updateOwnClaim(deliveryId: string, token: string, state: DeliveryClaim['state']): boolean {
    const claim = this.claims.get(deliveryId);
    if (!claim || claim.token !== token || claim.state !== 'sending') return false;
    claim.state = state;
    return true;
  }

  private keysOf(projectId: string): StoredKey[] {
    return [...this.keys.values()].filter((key) => key.projectId === projectId).sort((a, b) => a.issueSeq - b.issueSeq);
  }
}

/** A webhook delivery's claim: 'sending' from claim to post, then 'sent'; 'released' when the post failed. */
interface DeliveryClaim {
  state: 'sending' | 'sent' | 'released';
  token: string;
  claimedAt: number;
}

/** The table keys an entry by its project or owner and its id. */
const sameAuditEntry = (a: AuditEntry, b: AuditEntry): boolean => a.entryId === b.entryId && a.projectId === b.projectId && a.ownerId === b.ownerId;

/** A key issued without what selling and the lifecycle add. */
const NO_SELLING: Omit<KeyDetail, keyof Key | 'revoked_by'> = {
  note: null,
  discord_id: null,
  max_fingerprints: null,
  fingerprints: [],
  last_check_at: null,
  ban: null,
};

/** Exactly the spec's fields: what the table keeps besides them never leaves the store. */
function toKey(key: StoredKey): Key {
  const { id, user_hash, tier, watermark, issued_at, expires_at, max_uses, current_uses, revoked } = key;
  return { id, user_hash, tier, watermark, issued_at, expires_at, max_uses, current_uses, revoked };
}

function childrenOf<T>(byProject: Map<string, Map<string, T>>, projectId: string): Map<string, T> {
  const children = byProject.get(projectId) ?? new Map<string, T>();
  byProject.set(projectId, children);
  return children;
}

function sortedById<T extends { id: string }>(children: Map<string, T> | undefined): T[] {
  return [...(children?.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((child) => ({ ...child }));
}

// ---- The loader key check ----

/** A key as the loader check reads it, with the key's current one-minute window of checks kept beside it. */
export interface CheckedKey extends KeyState {
  checkWindow?: number;
  checkCount: number;
  /** The last counted check's telemetry, as the counting write leaves it on the key item (lastCheckOf). */
  lastCheck?: LastCheck;
}

/**
 * The loader check's store in memory, with the semantics of DynamoKeyCheckStore (test/integration/store-contract/
 * holds both to one contract; test/integration/loader-check.test.ts drives the real one): one use counted only when the key may run and its
 * window of the key's own has room for one more of `perKeyPerMinute`; otherwise nothing written, and the key's
 * state as it was. Where the table evaluates its condition (which test/integration/key-rule.test.ts proves is the
 * rule), this fake applies the rule the check hands it (`mayRun`): it holds no copy of the rule.
 */
export class MemoryKeyCheckStore implements KeyCheckStore {
  private readonly keys = new Map<string, CheckedKey>();

  /** A key as the dashboard issues one: its raw value, shown once; the store keeps its hash under the id derived from it. */
  issue(projectId: string, fields: Partial<Omit<KeyState, 'projectId' | 'keyHash'>> = {}): { id: string; key: string } {
    const key = newKeyValue();
    const keyHash = hashKeyValue(key);
    const id = keyIdOf(keyHash);
    this.keys.set(id, {
      projectId,
      keyHash,
      revoked: false,
      expiresAt: SEEDED_AT + 30 * 86_400,
      maxUses: null,
      currentUses: 0,
      maxFingerprints: null,
      fingerprints: [],
      watermark: randomBytes(8).toString('hex'),
      ban: null,
      checkCount: 0,
      ...fields,
    });
    return { id, key };
  }

  /** As a revoke through the owner API leaves the key item. */
  revoke(keyId: string): void {
    const key = this.keys.get(keyId);
    if (key) key.revoked = true;
  }

  /** As a ban (or with null, an unban) through the owner API leaves the key item. */
  setBan(keyId: string, ban: KeyState['ban']): void {
    const key = this.keys.get(keyId);
    if (key) key.ban = ban;
  }

  storedKey(keyId: string): CheckedKey | undefined {
    const key = this.keys.get(keyId);
    return key && { ...key };
  }

  async peek(keyId: string): Promise<KeyState | undefined> {
    const key = this.keys.get(keyId);
    return key && stateOf(key);
  }

  async watermarkOf(keyId: string): Promise<string | undefined> {
    return this.keys.get(keyId)?.watermark;
  }

  async checkAndCount(check: KeyCheck): Promise<CheckWrite> {
    const key = this.keys.get(check.keyId);
    if (!key) return { outcome: 'not_counted', keyId: check.keyId, key: undefined, checksThisWindow: 0 };
    const window = rateWindowAt(check.now);
    // A window opened by a clock a little ahead counts as this one, as in the table.
    const checksThisWindow = key.checkWindow !== undefined && key.checkWindow >= window.start ? key.checkCount : 0;
    if (!check.mayRun(stateOf(key)) || checksThisWindow >= check.perKeyPerMinute) {
      return { outcome: 'not_counted', keyId: check.keyId, key: stateOf(key), checksThisWindow };
    }
    if (checksThisWindow === 0) key.checkWindow = window.start;
    key.checkCount = checksThisWindow + 1;
    key.currentUses += 1;
    if (needsBinding(key, check.fingerprint)) key.fingerprints = [...key.fingerprints, check.fingerprint];
    key.lastCheck = lastCheckOf(check);
    // What the counting write reads back (UPDATED_NEW): the expiry and the uses, nothing else of the key.
    return { outcome: 'counted', keyId: check.keyId, key: { expiresAt: key.expiresAt, maxUses: key.maxUses, currentUses: key.currentUses } };
  }
}

function stateOf(key: CheckedKey): KeyState {
  const { checkWindow: _window, checkCount: _count, lastCheck: _lastCheck, ...state } = key;
  return state;
}

// ---- Script delivery ----

/**
 * Version scripts in memory, for tests whose subject is not where scripts live (the delivery tests use s3rver).
 * It keeps and answers copies, as S3 does: a caller's buffer changed after a put, or an answer changed after a get,
 * changes nothing stored.
 */
export class MemoryScriptStore implements ScriptStore {
  private readonly objects = new Map<string, Uint8Array>();
  /** GetObject calls made, as a wrapped S3 client counts them. */
  gets = 0;

  async put(object: ScriptObject, body: Uint8Array): Promise<void> {
    this.objects.set(`${object.projectId}/${object.versionId}`, new Uint8Array(body));
  }

  async get(object: ScriptObject): Promise<Uint8Array | undefined> {
    this.gets += 1;
    const stored = this.objects.get(`${object.projectId}/${object.versionId}`);
    return stored && new Uint8Array(stored);
  }

  async delete(object: ScriptObject): Promise<void> {
    this.objects.delete(`${object.projectId}/${object.versionId}`);
  }

  has(object: ScriptObject): boolean {
    return this.objects.has(`${object.projectId}/${object.versionId}`);
  }
}
