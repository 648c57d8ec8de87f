import { afterAll, beforeAll, describe } from 'vitest';
import type { StoredStatsBucket } from '#domain/analytics/stats';
import type { AuditEntry, AuditSubject } from '#domain/audit';
import { newId } from '#domain/ids';
import type { KeyBan } from '#domain/key-check';
import { refusalFor } from '#domain/key-check';
import { hashKeyValue } from '#domain/key-values';
import type {
  AuditLog,
  BlacklistStore,
  DeliveryStore,
  DiscordKeyStore,
  FanoutStore,
  KeyBatch,
  KeyCheckStore,
  KeyStore,
  ProjectStore,
  RateLimitStore,
  TokenStore,
} from '#domain/ports';
import { batchOf, randomKeys } from '#domain/selling-keys';
import { hashToken, issueToken, revokeToken, type TokenLimits, type TokenScope } from '#domain/tokens';
import type { EventName } from '#schemas/resources';
import { createTestTable, FIXED_NOW, type TestTable } from '#test-support/fixtures';
import { MemoryDiscordStore } from '#test-support/memory-discord-store';
import { MemoryKeyCheckStore, MemoryStores } from '#test-support/memory-stores';

/**
 * The two implementations of each storage port, behind one seeding interface, so a contract test runs the same
 * steps and assertions on both: the in-memory fakes of test/support/ and the DynamoDB stores of lambdas/adapters/
 * on the run's DynamoDB Local (one table per file). Seeding goes through the ports where one does it (keys are
 * issued with KeyStore.issue on both sides), and otherwise as the dashboard would: its store on the table, the
 * fake's seeding helpers in memory. Tests seed their own projects, so they never see each other's items.
 */

export const OWNER_ID = 'own_contract';

/** What a test may ask of a key batch; the rest gets the dashboard's defaults. */
type KeyFields = Partial<Omit<KeyBatch, 'projectId' | 'keys'>>;

/** The stores the API and the webhook pipeline use (one table, or one MemoryStores), and how to seed them. */
export interface StoreWorld {
  projects: ProjectStore;
  keys: KeyStore;
  tokens: TokenStore;
  audit: AuditLog;
  rateLimits: RateLimitStore;
  delivery: FanoutStore & DeliveryStore;
  blacklist: BlacklistStore;
  newProject(name?: string): Promise<string>;
  /** Keys issued through KeyStore.issue; their raw values, ids and watermarks. */
  issueKeys(projectId: string, count: number, fields?: KeyFields & { watermark?: string }): Promise<{ id: string; key: string; watermark: string }[]>;
  /** A version uploaded as the dashboard does: the next number, and made current. */
  uploadVersion(projectId: string, notes: string, now: number): Promise<string>;
  addWebhook(projectId: string, webhook: { url: string; events: EventName[]; enabled: boolean; now: number }): Promise<string>;
  addToken(ownerId: string, token: string, scope: TokenScope, limits?: TokenLimits): Promise<void>;
  revokeToken(token: string): Promise<void>;
  /** Every entry of the project or owner (at most 50), newest first. */
  auditEntries(subject: AuditSubject): Promise<AuditEntry[]>;
  /** A stats counter as ingest leaves it. */
  addStatsBucket(projectId: string, granularity: 'hour' | 'day', by: 'result' | 'executor', bucket: Omit<StoredStatsBucket, 'rest'>): Promise<void>;
}

/** A key as the loader check meets it, with what a check must name. */
export interface CheckedKeyRef {
  projectId: string;
  keyId: string;
  keyHash: string;
}

export interface KeyCheckWorld {
  store: KeyCheckStore;
  issueKey(fields: { watermark: string; expiresAt?: number; maxUses?: number | null; maxFingerprints?: number | null }): Promise<CheckedKeyRef>;
  revoke(key: CheckedKeyRef): Promise<void>;
  ban(key: CheckedKeyRef, ban: KeyBan | null): Promise<void>;
}

export interface DiscordWorld {
  store: DiscordKeyStore;
  newProject(): Promise<string>;
  issueKey(projectId: string, fields?: { discordId?: string; maxFingerprints?: number; expiresAt?: number }): Promise<{ keyId: string; keyHash: string }>;
  /** Machines bound to the key by counted loader checks from `fingerprints`. */
  bindMachines(projectId: string, key: { keyId: string; keyHash: string }, fingerprints: readonly string[]): Promise<void>;
  revoke(projectId: string, keyId: string): Promise<void>;
}

interface Worlds {
  stores: StoreWorld;
  keyChecks: KeyCheckWorld;
  discord: DiscordWorld;
}

/** Thirty days, as the dashboard issues keys. */
const KEY_LIFETIME = 30 * 86_400;

const batchFields = (fields: KeyFields): Omit<KeyBatch, 'projectId' | 'keys'> => ({
  tier: 'standard',
  maxUses: null,
  maxFingerprints: null,
  note: null,
  discordId: null,
  issuedAt: FIXED_NOW,
  expiresAt: FIXED_NOW + KEY_LIFETIME,
  ...fields,
});

/** A loader check's `mayRun`, as checkKey passes it: the key rule, for this key and machine. */
export const mayRunFor = (key: Pick<CheckedKeyRef, 'projectId' | 'keyHash'>, now: number, fingerprint: string) => (state: Parameters<typeof refusalFor>[0]) =>
  refusalFor(state, key.projectId, key.keyHash, now, fingerprint) === undefined;

function memoryWorlds(): Worlds {
  const memory = new MemoryStores();
  const stores: StoreWorld = {
    projects: memory,
    keys: memory,
    tokens: memory,
    audit: memory,
    rateLimits: memory,
    delivery: memory,
    blacklist: memory,
    async newProject(name = 'Contract Script') {
      return memory.addProject({ id: newId('prj'), ownerId: OWNER_ID, name, createdAt: FIXED_NOW }).id;
    },
    async issueKeys(projectId, count, { watermark, ...fields } = {}) {
      const keys = randomKeys(count, watermark);
      await memory.issue(batchOf(projectId, keys, batchFields(fields)));
      return keys.map(({ id, key, watermark }) => ({ id, key, watermark }));
    },
    async uploadVersion(projectId, notes, now) {
      const id = newId('ver');
      const number = (await memory.listVersions(projectId)).length + 1;
      memory.addVersions(projectId, { id, version_number: number, uploaded_at: now, size_bytes: 1024, notes });
      await memory.setCurrentVersion(projectId, id);
      return id;
    },
    async addWebhook(projectId, { url, events, enabled, now }) {
      const id = newId('whk');
      memory.addWebhooks(projectId, { id, url, events: JSON.stringify(events), enabled: enabled ? 1 : 0, created_at: now, updated_at: now });
      return id;
    },
    async addToken(ownerId, token, scope, limits) {
      memory.addToken(ownerId, token, scope, limits);
    },
    async revokeToken(token) {
      memory.revokeToken(token);
    },
    async auditEntries(subject) {
      const of = (entry: AuditEntry) => (subject.projectId !== undefined ? entry.projectId === subject.projectId : entry.ownerId === subject.ownerId);
      return memory.auditEntries().filter(of).reverse();
    },
    async addStatsBucket(projectId, granularity, by, bucket) {
      memory.addStatsBucket(projectId, granularity, by, { ...bucket, rest: 0 });
    },
  };

  const checks = new MemoryKeyCheckStore();
  const keyChecks: KeyCheckWorld = {
    store: checks,
    async issueKey({ watermark, expiresAt = FIXED_NOW + KEY_LIFETIME, maxUses = null, maxFingerprints = null }) {
      const projectId = newId('prj');
      const { id, key } = checks.issue(projectId, { watermark, expiresAt, maxUses, maxFingerprints });
      return { projectId, keyId: id, keyHash: hashKeyValue(key) };
    },
    async revoke(key) {
      checks.revoke(key.keyId);
    },
    async ban(key, ban) {
      checks.setBan(key.keyId, ban);
    },
  };

  const links = new MemoryDiscordStore();
  const discord: DiscordWorld = {
    store: links,
    async newProject() {
      const projectId = newId('prj');
      links.projects.add(projectId);
      return projectId;
    },
    async issueKey(projectId, { discordId, maxFingerprints, expiresAt = FIXED_NOW + KEY_LIFETIME } = {}) {
      const [raw] = randomKeys(1);
      if (!raw) throw new Error('no key');
      const keyHash = hashKeyValue(raw.key);
      links.keys.set(raw.id, {
        id: raw.id,
        projectId,
        keyHash,
        discordId: discordId ?? null,
        revoked: false,
        expiresAt,
        maxUses: null,
        currentUses: 0,
        maxFingerprints: maxFingerprints ?? null,
        boundMachines: 0,
        hwidResetAt: null,
      });
      return { keyId: raw.id, keyHash };
    },
    async bindMachines(_projectId, { keyId }, fingerprints) {
      const key = links.keys.get(keyId);
      if (!key) throw new Error(`no key ${keyId}`);
      key.boundMachines += fingerprints.length;
      key.currentUses += fingerprints.length;
    },
    async revoke(_projectId, keyId) {
      const key = links.keys.get(keyId);
      if (key) key.revoked = true;
    },
  };
  return { stores, keyChecks, discord };
}

function dynamoWorlds(table: TestTable): Worlds {
  const { stores: dynamo } = table;
  const newProject = (name = 'Contract Script') => dynamo.dashboard.createProject({ ownerId: OWNER_ID, name, plan: 'business', now: FIXED_NOW });
  const issueKeys: StoreWorld['issueKeys'] = async (projectId, count, { watermark, ...fields } = {}) => {
    const keys = randomKeys(count, watermark);
    await dynamo.keys.issue(batchOf(projectId, keys, batchFields(fields)));
    return keys.map(({ id, key, watermark }) => ({ id, key, watermark }));
  };
  const stores: StoreWorld = {
    projects: dynamo.projects,
    keys: dynamo.keys,
    tokens: dynamo.tokens,
    audit: dynamo.audit,
    rateLimits: dynamo.rateLimits,
    delivery: dynamo.delivery,
    blacklist: dynamo.blacklist,
    newProject,
    issueKeys,
    async uploadVersion(projectId, notes, now) {
      const id = newId('ver');
      await dynamo.dashboard.uploadVersion({ id, projectId, sizeBytes: 1024, sha256: 'a'.repeat(64), notes, now });
      return id;
    },
    addWebhook: (projectId, webhook) => dynamo.dashboard.addWebhook({ projectId, ...webhook }),
    async addToken(ownerId, token, scope, limits) {
      await issueToken(dynamo.tokens, { ownerId, tokenHash: hashToken(token), now: FIXED_NOW, scope, limits });
    },
    async revokeToken(token) {
      const found = await dynamo.tokens.findToken(hashToken(token));
      const record = found && (await dynamo.tokens.tokenById(found.tokenId));
      if (!record || record.revokedAt !== undefined) throw new Error('no working token to revoke');
      await revokeToken(dynamo.tokens, record, FIXED_NOW);
    },
    auditEntries: (subject) => dynamo.audit.list(subject, 50),
    async addStatsBucket(projectId, granularity, by, bucket) {
      const day = bucket.t - (bucket.t % 86_400);
      const delta = { granularity, dimension: by, t: bucket.t, total: bucket.total, counts: new Map(Object.entries(bucket.counts)) };
      await dynamo.telemetry.addStats([{ unitId: newId('evt'), projectId, day, deltas: [delta] }], FIXED_NOW);
    },
  };

  const keyChecks: KeyCheckWorld = {
    store: dynamo.keyChecks,
    async issueKey({ watermark, expiresAt = FIXED_NOW + KEY_LIFETIME, maxUses = null, maxFingerprints = null }) {
      const projectId = await newProject();
      const [key] = await issueKeys(projectId, 1, { watermark, expiresAt, maxUses, maxFingerprints });
      if (!key) throw new Error('no key issued');
      return { projectId, keyId: key.id, keyHash: hashKeyValue(key.key) };
    },
    async revoke(key) {
      await dynamo.projects.revokeKey(key.projectId, key.keyId, FIXED_NOW);
    },
    async ban(key, ban) {
      await dynamo.keys.setBan(key.projectId, key.keyId, ban);
    },
  };

  const discord: DiscordWorld = {
    store: dynamo.discord,
    newProject: () => newProject(),
    async issueKey(projectId, { discordId, maxFingerprints, expiresAt } = {}) {
      const [key] = await issueKeys(projectId, 1, { discordId: discordId ?? null, maxFingerprints: maxFingerprints ?? null, ...(expiresAt && { expiresAt }) });
      if (!key) throw new Error('no key issued');
      return { keyId: key.id, keyHash: hashKeyValue(key.key) };
    },
    async bindMachines(projectId, { keyId, keyHash }, fingerprints) {
      for (const fingerprint of fingerprints) {
        const ref = { projectId, keyHash };
        await dynamo.keyChecks.checkAndCount({
          projectId,
          keyId,
          keyHash,
          fingerprint,
          now: FIXED_NOW,
          perKeyPerMinute: 1_000,
          report: { project_id: projectId, executor: 'contract', fingerprint },
          mayRun: mayRunFor(ref, FIXED_NOW, fingerprint),
        });
      }
    },
    async revoke(projectId, keyId) {
      await dynamo.projects.revokeKey(projectId, keyId, FIXED_NOW);
    },
  };
  return { stores, keyChecks, discord };
}

/**
 * `body` once per implementation, inside a describe named for it: the same tests, the same assertions. The
 * DynamoDB one gets a fresh table of the real definition on the run's DynamoDB Local.
 */
export function forEachImplementation<K extends keyof Worlds>(port: K, body: (world: () => Worlds[K]) => void): void {
  const implementations = [
    { name: 'in memory (test/support)', open: async () => ({ worlds: memoryWorlds(), close: async () => undefined }) },
    {
      name: 'on DynamoDB Local (lambdas/adapters)',
      open: async () => {
        const table = await createTestTable('store-contract');
        return { worlds: dynamoWorlds(table), close: table.drop };
      },
    },
  ];
  describe.each(implementations)('$name', ({ open }) => {
    let opened: Awaited<ReturnType<typeof open>> | undefined;
    beforeAll(async () => {
      opened = await open();
    });
    afterAll(async () => {
      await opened?.close();
    });
    body(() => {
      if (!opened) throw new Error('the implementation is not open yet');
      return opened.worlds[port];
    });
  });
}
