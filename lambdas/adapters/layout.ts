import { createHash } from 'node:crypto';
import type { StatsDimension, StatsGranularity } from '#domain/analytics/stats';
import type { AuditEntry, AuditSubject } from '#domain/audit';
import { idStart } from '#domain/ids';
import type { KeyBan } from '#domain/key-check';
import type { KeyBatch, NewKey } from '#domain/ports';
import { DAY_SECONDS } from '#domain/time';
import type { TokenLimits, TokenScope } from '#domain/tokens';
import type { AnalyticsEventName, EventData } from '#schemas/events';
import type { Item } from './paging';
import { TABLE } from './table-definition';

/**
 * The one table's layout: every item's key, entity name and lifetime, in one place. Every store module builds its
 * keys here, the CDK stack grants access by the partition prefixes here, and nothing outside `lambdas/adapters/`
 * knows how an item is laid out.
 *
 * | item               | pk                          | sk                                          | kept                     |
 * |--------------------|-----------------------------|---------------------------------------------|--------------------------|
 * | owner              | OWNER#<ownerId>             | OWNER                                       | always                   |
 * | owner's token      | OWNER#<ownerId>             | TOKEN#<tokenId>                             | until the token's revoke |
 * | API token          | TOKEN#<sha256>              | TOKEN                                       | until the token's revoke |
 * | token by id        | TOKEN_ID#<tokenId>          | TOKEN_ID                                    | always, hash till revoke |
 * | audit entry        | AUDIT#PROJECT#<projectId>   | ENTRY#<entryId>                             | 90 days                  |
 * | audit entry        | AUDIT#OWNER#<ownerId>       | ENTRY#<entryId>                             | 90 days                  |
 * | project            | PROJECT#<id>                | PROJECT                                     | always                   |
 * | script version     | PROJECT#<id>                | VERSION#<versionId>                         | always                   |
 * | webhook config     | PROJECT#<id>                | WEBHOOK#<webhookId>                         | always                   |
 * | sequence lease     | SEQUENCE#<id>               | SEQUENCE_LEASE                              | while a writer numbers   |
 * | issue order        | ORDER#<projectId>           | ORDER#<orderId>                             | always (ids never reused)|
 * | key                | KEY#<keyId>                 | KEY                                         | always (never deleted)   |
 * | rate window        | RATE#<bucket>               | WINDOW#<start>                              | 2 windows                |
 * | delivery claim     | DELIVERY#<deliveryId>       | DELIVERY                                    | 7 days                   |
 * | daily executions   | EXECUTIONS#<date>#<shard>   | PROJECT#<projectId>                         | 35 days after the day    |
 * | executor last seen | TELEMETRY#<projectId>       | EXECUTOR#<executor>                         | 30 days after last seen  |
 * | script hash        | TELEMETRY#<projectId>       | SCRIPT_HASH#<scriptId>#<versionId>#<hash>   | 90 days after last seen  |
 * | script tally       | TELEMETRY#<projectId>       | SCRIPT#<scriptId>#<versionId>               | 90 days after last seen  |
 * | validation window  | VALIDATIONS#<keyId>         | HOUR#<projectId>#<hourStart>                | 2 days after the hour    |
 * | analytics event    | EVENTS#<projectId>          | EVENT#<name>#<dedupKey>                     | 30 days                  |
 * | alert hour         | ALERTS#<hourStart>#<shard>  | PROJECT#<projectId>#<name>                  | 2 days after the hour    |
 * | stats counter      | STATS#<projectId>           | <hour|day>#<result|executor|version>#<t>    | 8 / 400 days after it    |
 * | stats unit applied | STATS_UNIT#<sha256(unit)>   | <projectId>#<dayStart>                      | 7 days                   |
 * | owner's project    | OWNER#<ownerId>             | PROJECT#<projectId>                         | always                   |
 * | console session    | SESSION#<sha256>            | SESSION                                     | its expiry (12 h idle, 7 d)|
 * | owner's session    | OWNER#<ownerId>             | SESSION#<tokenId>#<opened>#<sessionId>      | with its session         |
 * | script upload      | PROJECT#<id>                | UPLOAD#<uploadId>                           | 1 hour, or its commit    |
 * | note word          | NOTE#<projectId>            | <word>#<keyId>                              | always (with its key)    |
 * | blacklist entry    | BLACKLIST#<projectId>       | ENTRY#<kind>#<value>                        | until removed            |
 * | blacklist slot     | BLACKLIST#<projectId>       | SLOT#<position, 10 digits>                  | until removed (moves)    |
 * | blacklist count    | BLACKLIST#<projectId>       | COUNT                                       | always                   |
 * | machine's key      | MACHINE#<projectId>#<fp>    | <keyId>                                     | always (keys never go)   |
 * | free-key session   | FREE_SESSION#<sessionId>    | FREE_SESSION                                | its expiry (2 h)         |
 * | free token used    | FREE_TOKEN#<projectId>      | <provider>#<sha256(token)>                  | 2 days                   |
 * | Lootlabs postback  | FREE_POSTBACK#<projectId>   | <click_id>                                  | 1 day                    |
 * | free-key funnel    | FREE_FUNNEL#<projectId>     | DAY#<dayStart>                              | 400 days after the day   |
 *
 * A token is three items written and revoked in one transaction: the authorizer reads the one keyed by the token's
 * hash (one GetItem per uncached request), `token list` queries the owner's, `token revoke` finds the token by id.
 * Audit entries have partitions of their own, so the API's functions may be granted puts there and nowhere else;
 * entry ids sort by time, so a partition read backwards lists the newest first.
 *
 * An analytics event that a summary stood for is kept under its own event key with entity EVENT_COALESCED: the
 * dedup memory of its condition, which the stream filter does not post.
 *
 * Keys get a partition each, so a bulk revoke's writes spread over the table instead of heating one partition.
 * Daily counters live in a partition per day, split in EXECUTION_DAY_SHARDS by project, so the daily detector
 * reads every active project with a few queries and no scan. `versionId` is empty in a script hash's key when
 * the report named no version.
 * An alert hour counts a project's alerts of one event name in one UTC hour (posted, held for the hour's digest,
 * not tracked), so the bound holds across ingest batches (lambdas/domain/analytics/alert-budget.ts). Its partitions are
 * per hour, split in ALERT_HOUR_SHARDS by project, so the hourly digest finds every project that held alerts with
 * a few queries and no scan.
 * A stats counter is one bucket of a project's stats by one dimension (lambdas/domain/analytics/stats.ts): all of a
 * project's counters share its partition and sort by granularity, dimension and bucket start (`t` zero-padded), so an
 * answer is one Query of one sort-key range. A stats unit item marks one delivery unit's records of a project and
 * day as counted; it is written in the same transaction as the counters they move, so a redelivery moves nothing.
 * Telemetry (the last nine rows) lives in partitions of its own, never in a PROJECT# or KEY# partition, so the
 * ingest functions are granted writes on telemetry partitions only and cannot change a key or a project.
 */

export type ItemKey = { pk: string; sk: string };

/** The `entity` attribute of each kind of item; the stream filter reads it to find versions and events. */
export const ENTITY = {
  owner: 'OWNER',
  token: 'TOKEN',
  tokenById: 'TOKEN_ID',
  ownerToken: 'OWNER_TOKEN',
  audit: 'AUDIT',
  project: 'PROJECT',
  version: 'VERSION',
  webhook: 'WEBHOOK',
  key: 'KEY',
  rateWindow: 'RATE',
  event: 'EVENT',
  deliveryClaim: 'DELIVERY',
  dailyExecutions: 'EXECUTIONS',
  /** A condition an event summary stood for: the dedup memory of an event that was not posted by itself. */
  coalescedEvent: 'EVENT_COALESCED',
  executor: 'EXECUTOR',
  scriptHash: 'SCRIPT_HASH',
  scriptTally: 'SCRIPT_TALLY',
  validationWindow: 'VALIDATIONS',
  sequenceLease: 'SEQUENCE_LEASE',
  alertHour: 'ALERT_HOUR',
  order: 'ORDER',
  statsCounter: 'STATS',
  statsUnit: 'STATS_UNIT',
  ownerProject: 'OWNER_PROJECT',
  consoleSession: 'SESSION',
  ownerSession: 'OWNER_SESSION',
  upload: 'UPLOAD',
  noteWord: 'NOTE_WORD',
  blacklistEntry: 'BLACKLIST_ENTRY',
  blacklistSlot: 'BLACKLIST_SLOT',
  blacklistCount: 'BLACKLIST_COUNT',
  machineKey: 'MACHINE_KEY',
  freeSession: 'FREE_SESSION',
  freeToken: 'FREE_TOKEN',
  freePostback: 'FREE_POSTBACK',
  freeFunnel: 'FREE_FUNNEL',
} as const;

/** How partition keys begin, by kind: what `dynamodb:LeadingKeys` conditions in the CDK stack grant by. */
export const PARTITION = {
  owner: 'OWNER#',
  token: 'TOKEN#',
  tokenById: 'TOKEN_ID#',
  projectAudit: 'AUDIT#PROJECT#',
  ownerAudit: 'AUDIT#OWNER#',
  project: 'PROJECT#',
  key: 'KEY#',
  /** Apart from PROJECT#, so the API's issue function may put and delete a lease and nothing of a project. */
  sequenceLease: 'SEQUENCE#',
  order: 'ORDER#',
  rateWindow: 'RATE#',
  deliveryClaim: 'DELIVERY#',
  dailyExecutions: 'EXECUTIONS#',
  telemetry: 'TELEMETRY#',
  validations: 'VALIDATIONS#',
  events: 'EVENTS#',
  alerts: 'ALERTS#',
  stats: 'STATS#',
  statsUnits: 'STATS_UNIT#',
  consoleSession: 'SESSION#',
  /** The console's search by words of a key's note: one item per word of a note (see noteWordItems). */
  noteWords: 'NOTE#',
  /** A project's buyer blacklist: its entries, their dense positions and their count (blacklist-store.ts). */
  blacklist: 'BLACKLIST#',
  /** The keys a machine was bound to, per project: written by the loader before it binds (blacklist-store.ts). */
  machine: 'MACHINE#',
  /** A shop connection, with the keys each of its orders got (lambdas/adapters/shop-store.ts). */
  shop: 'SHOP#',
  /** A project's shop delivery log, 90 days. */
  shopLog: 'SHOPLOG#',
  /** Free keys behind checkpoints (lambdas/adapters/free-key-store.ts): partitions of their own, for the key page's grant. */
  freeSession: 'FREE_SESSION#',
  freeToken: 'FREE_TOKEN#',
  freePostback: 'FREE_POSTBACK#',
  freeFunnel: 'FREE_FUNNEL#',
} as const;
export type Partition = keyof typeof PARTITION;

export const EXECUTION_DAY_SHARDS = 16;
export const ALERT_HOUR_SHARDS = 16;
const shardOf = (projectId: string, shards: number) => (createHash('sha256').update(projectId).digest()[0] ?? 0) % shards;

export interface ScriptKeyParts {
  projectId: string;
  scriptId: string;
  versionId: string | null;
}

export const keyOf = {
  owner: (ownerId: string): ItemKey => ({ pk: `${PARTITION.owner}${ownerId}`, sk: ENTITY.owner }),
  token: (tokenHash: string): ItemKey => ({ pk: `${PARTITION.token}${tokenHash}`, sk: ENTITY.token }),
  tokenById: (tokenId: string): ItemKey => ({ pk: `${PARTITION.tokenById}${tokenId}`, sk: ENTITY.tokenById }),
  ownerToken: (ownerId: string, tokenId: string): ItemKey => ({ pk: `${PARTITION.owner}${ownerId}`, sk: `${CHILD_PREFIX.token}${tokenId}` }),
  /** A session in its owner's list, by token and then by when it opened (ten digits: seconds sort as text). */
  ownerSession: (session: { ownerId: string; tokenId: string; createdAt: number; sessionId: string }): ItemKey => ({
    pk: `${PARTITION.owner}${session.ownerId}`,
    sk: `${CHILD_PREFIX.session}${session.tokenId}#${String(session.createdAt).padStart(10, '0')}#${session.sessionId}`,
  }),
  auditPartition: (subject: AuditSubject): string =>
    subject.projectId !== undefined ? `${PARTITION.projectAudit}${subject.projectId}` : `${PARTITION.ownerAudit}${subject.ownerId}`,
  auditEntry: (entry: AuditSubject & { entryId: string }): ItemKey => ({ pk: keyOf.auditPartition(entry), sk: `${AUDIT_ENTRY_PREFIX}${entry.entryId}` }),
  project: (projectId: string): ItemKey => ({ pk: `${PARTITION.project}${projectId}`, sk: ENTITY.project }),
  version: (projectId: string, versionId: string): ItemKey => ({ pk: `${PARTITION.project}${projectId}`, sk: `VERSION#${versionId}` }),
  webhook: (projectId: string, webhookId: string): ItemKey => ({ pk: `${PARTITION.project}${projectId}`, sk: `WEBHOOK#${webhookId}` }),
  sequenceLease: (projectId: string): ItemKey => ({ pk: `${PARTITION.sequenceLease}${projectId}`, sk: ENTITY.sequenceLease }),
  order: (projectId: string, orderId: string): ItemKey => ({ pk: `${PARTITION.order}${projectId}`, sk: `ORDER#${orderId}` }),
  key: (keyId: string): ItemKey => ({ pk: `${PARTITION.key}${keyId}`, sk: ENTITY.key }),
  rateWindow: (bucket: string, windowStart: number): ItemKey => ({ pk: `${PARTITION.rateWindow}${bucket}`, sk: `WINDOW#${windowStart}` }),
  deliveryClaim: (deliveryId: string): ItemKey => ({ pk: `${PARTITION.deliveryClaim}${deliveryId}`, sk: ENTITY.deliveryClaim }),
  event: (projectId: string, name: AnalyticsEventName, dedupKey: string): ItemKey => ({
    pk: `${PARTITION.events}${projectId}`,
    sk: `EVENT#${name}#${dedupKey}`,
  }),
  dailyExecutionsShard: (date: string, shard: number): string => `${PARTITION.dailyExecutions}${date}#${shard}`,
  dailyExecutions: (date: string, projectId: string): ItemKey => ({
    pk: keyOf.dailyExecutionsShard(date, shardOf(projectId, EXECUTION_DAY_SHARDS)),
    sk: `${PARTITION.project}${projectId}`,
  }),
  executor: (projectId: string, executor: string): ItemKey => ({ pk: `${PARTITION.telemetry}${projectId}`, sk: `EXECUTOR#${executor}` }),
  scriptHash: (script: ScriptKeyParts, hash: string): ItemKey => ({
    pk: `${PARTITION.telemetry}${script.projectId}`,
    sk: `SCRIPT_HASH#${script.scriptId}#${script.versionId ?? ''}#${hash}`,
  }),
  scriptTally: (script: ScriptKeyParts): ItemKey => ({
    pk: `${PARTITION.telemetry}${script.projectId}`,
    sk: `SCRIPT#${script.scriptId}#${script.versionId ?? ''}`,
  }),
  validationWindow: (keyId: string, projectId: string, hourStart: number): ItemKey => ({
    pk: `${PARTITION.validations}${keyId}`,
    sk: `HOUR#${projectId}#${hourStart}`,
  }),
  statsCounter: (projectId: string, granularity: StatsGranularity, dimension: StatsDimension, t: number): ItemKey => ({
    pk: `${PARTITION.stats}${projectId}`,
    sk: statsSortKey(granularity, dimension, t),
  }),
  statsUnit: (unitId: string, projectId: string, day: number): ItemKey => ({
    pk: `${PARTITION.statsUnits}${createHash('sha256').update(unitId).digest('hex').slice(0, 32)}`,
    sk: `${projectId}#${day}`,
  }),
  ownerProject: (ownerId: string, projectId: string): ItemKey => ({ pk: `${PARTITION.owner}${ownerId}`, sk: `${CHILD_PREFIX.project}${projectId}` }),
  consoleSession: (sessionHash: string): ItemKey => ({ pk: `${PARTITION.consoleSession}${sessionHash}`, sk: ENTITY.consoleSession }),
  upload: (projectId: string, uploadId: string): ItemKey => ({ pk: `${PARTITION.project}${projectId}`, sk: `UPLOAD#${uploadId}` }),
  noteWordPartition: (projectId: string): string => `${PARTITION.noteWords}${projectId}`,
  noteWord: (projectId: string, word: string, keyId: string): ItemKey => ({ pk: keyOf.noteWordPartition(projectId), sk: `${word}#${keyId}` }),
  blacklistPartition: (projectId: string): string => `${PARTITION.blacklist}${projectId}`,
  blacklistEntry: (projectId: string, kind: string, value: string): ItemKey => ({ pk: keyOf.blacklistPartition(projectId), sk: `ENTRY#${kind}#${value}` }),
  blacklistSlot: (projectId: string, slot: number): ItemKey => ({ pk: keyOf.blacklistPartition(projectId), sk: blacklistSlotSortKey(slot) }),
  blacklistCount: (projectId: string): ItemKey => ({ pk: keyOf.blacklistPartition(projectId), sk: 'COUNT' }),
  machinePartition: (projectId: string, fingerprint: string): string => `${PARTITION.machine}${projectId}#${fingerprint}`,
  machineKey: (projectId: string, fingerprint: string, keyId: string): ItemKey => ({ pk: keyOf.machinePartition(projectId, fingerprint), sk: keyId }),
  freeSession: (sessionId: string): ItemKey => ({ pk: `${PARTITION.freeSession}${sessionId}`, sk: ENTITY.freeSession }),
  freeToken: (projectId: string, provider: string, tokenId: string): ItemKey => ({
    pk: `${PARTITION.freeToken}${projectId}`,
    sk: `${provider}#${createHash('sha256').update(tokenId).digest('hex')}`,
  }),
  freePostback: (projectId: string, clickId: string): ItemKey => ({ pk: `${PARTITION.freePostback}${projectId}`, sk: clickId }),
  freeFunnel: (projectId: string, dayStart: number): ItemKey => ({
    pk: `${PARTITION.freeFunnel}${projectId}`,
    sk: `DAY#${String(dayStart).padStart(12, '0')}`,
  }),
  alertHourShard: (hourStart: number, shard: number): string => `${PARTITION.alerts}${hourStart}#${shard}`,
  alertHour: (hourStart: number, projectId: string, name: AnalyticsEventName): ItemKey => ({
    pk: keyOf.alertHourShard(hourStart, shardOf(projectId, ALERT_HOUR_SHARDS)),
    sk: `${PARTITION.project}${projectId}#${name}`,
  }),
};

/** A blacklist slot's sort key: positions padded to 10 digits, so a page of positions is one sort-key range. */
export const blacklistSlotSortKey = (slot: number): string => `SLOT#${String(slot).padStart(10, '0')}`;

/** A stats counter's sort key; `t` padded to 11 digits so that keys sort as their bucket starts do. */
export const statsSortKey = (granularity: StatsGranularity, dimension: StatsDimension, t: number): string =>
  `${granularity}#${dimension}#${String(t).padStart(11, '0')}`;

/**
 * A stats counter's attributes besides its key: `total`, the names it keeps one by one (`n:<name>`, at most
 * STORED_NAMES_PER_BUCKET, counted in `nameCount`) and `rest`, what it counted of names past those.
 */
export const STATS_NAME_PREFIX = 'n:';

/**
 * A version's script in the scripts bucket (not the table): under its project, named by the version id, so an
 * upload stores it before the version item exists and a failed version write deletes exactly it.
 */
export const scriptObjectKey = (object: { projectId: string; versionId: string }): string => `scripts/${object.projectId}/${object.versionId}.luau`;

/** Sort-key prefixes of a project's (and an owner's) children, for the queries that list them. */
export const CHILD_PREFIX = { version: 'VERSION#', webhook: 'WEBHOOK#', token: 'TOKEN#', project: 'PROJECT#', session: 'SESSION#' } as const;

/**
 * A staged console upload's object in the scripts bucket: the browser PUTs it there (a presigned URL), the commit
 * checks it and stores it as the version's script, then deletes it.
 */
export const uploadObjectKey = (upload: { projectId: string; uploadId: string }): string => `uploads/${upload.projectId}/${upload.uploadId}`;

const AUDIT_ENTRY_PREFIX = 'ENTRY#';

/** The key id a key item's partition key names. */
export const keyIdOfPartition = (pk: string): string => pk.slice(PARTITION.key.length);

/**
 * How the indexes' partition keys begin: all partition by project (`<projectId>`, `<projectId>#<watermark>`,
 * `<projectId>#<discordId>`, see keyIndexAttributes and discordKeyOf). The partition key an index Query names is the index's, so the CDK stack scopes index
 * queries by these (`dynamodb:LeadingKeys`).
 */
export const INDEX_PARTITION: Readonly<Record<keyof typeof TABLE.indexes, string>> = {
  byIssueOrder: idStart('prj'),
  byWatermark: idStart('prj'),
  byDiscordId: idStart('prj'),
};

/**
 * What the API's updates of shared kinds of items write or test besides the item's key: a rate window's counter
 * (rate-limit-store.ts) and a project's current version (project-store.ts setCurrentVersion). The CDK stack lets the
 * route functions update these items in nothing else (`dynamodb:Attributes`); a test pins the stores to them.
 */
export const UPDATED_ATTRIBUTES = {
  rateWindow: ['requests', TABLE.ttlAttribute, 'entity'],
  currentVersion: ['currentVersionId'],
  /** A bulk revoke completes its audit entry (audit-store.ts `finish`). */
  auditOutcome: ['status', 'outcome'],
  /** An issue call moves the project's key counter (key-store.ts `reserve`). */
  keyCount: ['keyCount'],
  /** A machine reset empties a key's fingerprints, on the condition that it is the project's (key-store.ts). */
  fingerprintReset: ['fingerprints', 'projectId'],
  /** A ban or unban writes the ban, on the condition that the key is the project's (key-store.ts). */
  keyBan: ['ban_reason', 'ban_until', 'projectId'],
  /** An extend moves `expires_at` from its old value or from now, on the condition that the key is the project's. */
  keyExpiry: ['expires_at', 'projectId'],
  /**
   * An edit (PATCH) sets or removes these, on the condition that the key is the project's: a machine limit set on an
   * unbound key gives it its empty `fingerprints` map, one set to null removes both; a Discord id keeps `discordKey`.
   */
  keyEdit: ['note', 'discord_id', 'discordKey', 'max_uses', 'max_fingerprints', 'fingerprints', 'projectId'],
  /**
   * A blacklisting bans the buyer's keys: a ban without end, on the condition that the key is the project's, not
   * revoked, and not banned for good already (blacklist-store.ts banKeys).
   */
  blacklistBan: ['ban_reason', 'ban_until', 'projectId', 'revoked'],
} as const;

/**
 * A key item as issuance writes it. Selling's attributes are written only when set: a key without
 * `max_fingerprints` has no `fingerprints` map and stays unbound for good, and items stay as small as before.
 * A bound key gets its empty map now, so that a check binds a machine with one `SET fingerprints.#fp`. A key linked
 * to a Discord user carries `discordKey` beside `discord_id` (the byDiscordId index), and `hwidResetAt` once the user
 * reset its machines in Discord (the cooldown runs from it; discord-store.ts).
 */
export function keyItem(batch: KeyBatch, key: NewKey, issueSeq: number, userHash: string) {
  return {
    ...keyOf.key(key.id),
    entity: ENTITY.key,
    projectId: batch.projectId,
    id: key.id,
    keyHash: key.keyHash,
    user_hash: userHash,
    tier: batch.tier,
    watermark: key.watermark,
    issued_at: batch.issuedAt,
    expires_at: batch.expiresAt,
    max_uses: batch.maxUses,
    current_uses: 0,
    revoked: 0,
    [TABLE.indexes.byIssueOrder.sortKey]: issueSeq,
    ...keyIndexAttributes(batch.projectId, key.watermark),
    ...(batch.maxFingerprints !== null && { max_fingerprints: batch.maxFingerprints, fingerprints: {} }),
    ...(batch.note !== null && { note: batch.note }),
    ...(batch.discordId !== null && { discord_id: batch.discordId, discordKey: discordKeyOf(batch.projectId, batch.discordId) }),
  };
}

/** The byDiscordId index's partition of a key linked to `discordId` (SHARED-CONTRACTS §1). */
export const discordKeyOf = (projectId: string, discordId: string): string => `${projectId}#${discordId}`;

/**
 * A key item's ban: `ban_reason` while banned, `ban_until` when the ban ends by itself. Flat attributes, so the
 * check's condition tests them by name (MAY_RUN) and an unban removes both.
 */
export function banOf(item: Item): KeyBan | null {
  if (typeof item.ban_reason !== 'string') return null;
  return { reason: item.ban_reason, until: typeof item.ban_until === 'number' ? item.ban_until : null };
}

/** What places a key with a Discord id in the byDiscordId index; removed with the id (contract of issue 27/29/30). */
export const discordIndexAttributes = (projectId: string, discordId: string) => ({
  [TABLE.indexes.byDiscordId.partitionKey]: discordKeyOf(projectId, discordId),
});

/**
 * The console's note search items of a key (1 WCU each, written with the key): one per distinct word of its note
 * (noteWords). A key without a note has none. The item holds nothing but its key: the search reads the keys.
 */
export function noteWordItems(projectId: string, keyId: string, words: readonly string[]) {
  return words.map((word) => ({ ...keyOf.noteWord(projectId, word, keyId), entity: ENTITY.noteWord }));
}

/**
 * A key's link to a Discord user: `discord_id` as the key detail shows it, and `discordKey`, which places the key
 * in the sparse byDiscordId index (written whenever `discord_id` is, removed with it).
 */
export const discordLinkAttributes = (projectId: string, discordId: string) => ({
  discord_id: discordId,
  [TABLE.indexes.byDiscordId.partitionKey]: discordKeyOf(projectId, discordId),
});

/** Attributes of a key item that place it in the indexes (see TABLE.indexes). */
export const keyIndexAttributes = (projectId: string, watermark: string) => ({
  [TABLE.indexes.byIssueOrder.partitionKey]: projectId,
  [TABLE.indexes.byWatermark.partitionKey]: `${projectId}#${watermark}`,
});

/** How long items with a TTL are kept (the `ttl` attribute, Unix seconds), by what each is for. */
export const RETENTION_SECONDS = {
  /** Claims outlive every way a delivery can come back: SQS keeps a message 4 days, a stream keeps records 24 h. */
  deliveryClaim: 7 * DAY_SECONDS,
  /** An event item outlives its delivery by a month: long enough to stay the dedup memory of its condition. */
  event: 30 * DAY_SECONDS,
  dailyExecutions: 35 * DAY_SECONDS,
  /** Longer than new_executor's 7-day absence, so a record never expires while it can still decide. */
  executorLastSeen: 30 * DAY_SECONDS,
  scriptHash: 90 * DAY_SECONDS,
  validationWindow: 2 * DAY_SECONDS,
  /** Past the digest run an hour after, with a day's margin for a late or retried schedule. */
  alertHour: 2 * DAY_SECONDS,
  /** A unit's mark outlives every redelivery of it: SQS keeps a message 4 days, a stream keeps records 24 h. */
  statsUnit: 7 * DAY_SECONDS,
  /** As long as the API's access logs: who revoked what stays answerable for a quarter. */
  audit: 90 * DAY_SECONDS,
  /** A console upload not committed within the hour is abandoned (its staged object has the bucket's own expiry). */
  upload: 3600,
  /** A used checkpoint token is remembered past every provider's own validity (Work.ink's is minutes). */
  freeToken: 2 * DAY_SECONDS,
  /** A Lootlabs postback is taken within the session's life; a day is ample. */
  freePostback: DAY_SECONDS,
  /** The funnel is stats by day: kept as long as the stats' day buckets. */
  freeFunnel: 400 * DAY_SECONDS,
} as const;

/** Rate windows are kept for this many window lengths: the count must outlive its own minute, and no more. */
export const RATE_WINDOWS_KEPT = 2;

/** Distinct fingerprints a validation window keeps: far past the many_fingerprints threshold, and an item stays small. */
export const FINGERPRINTS_KEPT_PER_WINDOW = 64;

/** The item that fires an analytics event: written only if its key is new, so one condition fires once. */
export interface EventItem extends ItemKey {
  entity: typeof ENTITY.event;
  projectId: string;
  name: AnalyticsEventName;
  occurredAt: number;
  data: EventData<AnalyticsEventName>;
  ttl: number;
}

/** What the table knows of a working token. */
export interface StoredToken extends TokenLimits {
  ownerId: string;
  tokenId: string;
  tokenHash: string;
  scope: TokenScope;
  createdAt: number;
}

/** The three items of one token (see the table above); the scope is fixed at creation. */
export function tokenItems(token: StoredToken) {
  const { ownerId, tokenId, tokenHash, scope, createdAt } = token;
  // Absent, not empty, without a limit: a DynamoDB list may not be empty in a set, and absence reads as "none".
  const limits = {
    ...(token.projectId !== undefined && { limitProject: token.projectId }),
    ...(token.routes !== undefined && { limitRoutes: [...token.routes] }),
  };
  return {
    byHash: { ...keyOf.token(tokenHash), entity: ENTITY.token, ownerId, tokenId, scope, createdAt, ...limits },
    byId: { ...keyOf.tokenById(tokenId), entity: ENTITY.tokenById, ownerId, tokenId, tokenHash, scope, createdAt, ...limits },
    ofOwner: { ...keyOf.ownerToken(ownerId, tokenId), entity: ENTITY.ownerToken, tokenId, scope, createdAt, ...limits },
  };
}

/** A token item's limits (tokenItems), as the domain names them. */
export function tokenLimitsOf(item: Record<string, unknown>): TokenLimits {
  return {
    ...(typeof item.limitProject === 'string' && { projectId: item.limitProject }),
    ...(Array.isArray(item.limitRoutes) && { routes: item.limitRoutes.map(String) }),
  };
}

/** An audit entry as the table keeps it: the entry's own fields, plus its key and its expiry. */
function auditItem(entry: AuditEntry) {
  return { ...keyOf.auditEntry(entry), entity: ENTITY.audit, ...entry, [TABLE.ttlAttribute]: entry.at + RETENTION_SECONDS.audit };
}

/**
 * The put of a new audit entry, alone or in a transaction: only where no entry is, so no write can overwrite
 * another's entry (an id clash fails the write, and its transaction with it, instead).
 */
export function auditPut(tableName: string, entry: AuditEntry) {
  return { TableName: tableName, Item: auditItem(entry), ConditionExpression: 'attribute_not_exists(pk)' };
}

/**
 * A condition a summary event stood for: under the key its own event would have had (so it fires once, like any
 * event), but an entity the stream filter leaves out, so only the summary is posted. `summarizedBy` names it.
 */
export interface CoalescedEventItem extends Omit<EventItem, 'entity'> {
  entity: typeof ENTITY.coalescedEvent;
  summarizedBy: string;
}

/**
 * A machine-bound key's `fingerprints` map names each machine by its fingerprint's 32 bytes in base64url (43
 * characters, not 64 hex): every check rewrites the key item, and ten bound machines then stay inside the item's
 * first KB with room for a note (see docs/selling-keys.md).
 */
export const fingerprintAttribute = (fingerprint: string): string => Buffer.from(fingerprint, 'hex').toString('base64url');

/** The machines a key item holds bound, as the loader sent them (lowercase hex), oldest binding first. */
export function boundFingerprints(item: Item): { fingerprint: string; bound_at: number }[] {
  const map = item.fingerprints;
  if (typeof map !== 'object' || map === null) return [];
  return Object.entries(map as Record<string, unknown>)
    .map(([name, boundAt]) => ({ fingerprint: Buffer.from(name, 'base64url').toString('hex'), bound_at: Number(boundAt) }))
    .sort((a, b) => a.bound_at - b.bound_at || a.fingerprint.localeCompare(b.fingerprint));
}
