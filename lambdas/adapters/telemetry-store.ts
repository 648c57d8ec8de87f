import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type {
  AlertHour,
  AlertHourRef,
  AnalyticsEvent,
  ExecutorRef,
  HashSighting,
  HeldAlerts,
  KeyAbusePattern,
  KeyHourRef,
  KeyUsage,
  NewNameKind,
  ScriptRef,
  ScriptTally,
  ValidationDelta,
  ValidationWindow,
} from '#domain/analytics/model';
import type { StatsUnit } from '#domain/analytics/stats';
import type { TelemetryStore } from '#domain/ports';
import { DAY_SECONDS, dayStart } from '#domain/time';
import { KEY_ABUSE_PATTERNS, type SingleEventData, SUMMARIZED_EVENTS, SUMMARY_SAMPLE_LIMIT, type SummarizedEventName } from '#schemas/events';
import { VALIDATION_RESULTS, type ValidationResult } from '#schemas/telemetry';
import { batchGetConsistent, itemKeyId } from './batch-get';
import { ifCondition } from './conditions';
import {
  ALERT_HOUR_SHARDS,
  type CoalescedEventItem,
  ENTITY,
  type EventItem,
  EXECUTION_DAY_SHARDS,
  FINGERPRINTS_KEPT_PER_WINDOW,
  type ItemKey,
  keyOf,
  RETENTION_SECONDS,
} from './layout';
import { type Item, queryAll } from './paging';
import { addStatsUnits } from './stats-store';
import { TABLE } from './table-definition';

/**
 * Every read and write of telemetry and analytics events (layout.ts lays the items out). What is kept is what
 * the detectors read, not raw records, and everything carries a TTL past which no detector needs it. A
 * validation window counts the hour's validations by result, keeps the distinct fingerprints as a string set (at
 * most FINGERPRINTS_KEPT_PER_WINDOW) and the key_abuse patterns already reported. A script's hashes are an item
 * each, beside the script's tally (its original and its count of distinct hashes), so no judgement reads them all.
 * Every item written here sits in a telemetry partition (layout.ts); project and key records are only read.
 */

export class DynamoTelemetryStore implements TelemetryStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  addStats(units: readonly StatsUnit[], now: number): Promise<void> {
    return addStatsUnits(this.db, this.tableName, units, now);
  }

  async addExecutions({ projectId, date, executions }: { projectId: string; date: string; executions: number }): Promise<void> {
    const start = dayStart(date);
    if (start === undefined) throw new Error(`Not a YYYY-MM-DD date: ${date}`);
    await this.update(keyOf.dailyExecutions(date, projectId), {
      set: { entity: ENTITY.dailyExecutions, projectId, date, [TABLE.ttlAttribute]: start + DAY_SECONDS + RETENTION_SECONDS.dailyExecutions },
      add: { executions },
    });
  }

  async executionsOn(date: string): Promise<Map<string, number>> {
    const shards = await Promise.all(
      Array.from({ length: EXECUTION_DAY_SHARDS }, (_, shard) =>
        this.partition(keyOf.dailyExecutionsShard(date, shard), '#projectId, #executions', { '#projectId': 'projectId', '#executions': 'executions' }),
      ),
    );
    return new Map(shards.flat().map((item) => [String(item.projectId), Number(item.executions)]));
  }

  async executorsLastSeen(executors: readonly ExecutorRef[]): Promise<(number | null)[]> {
    const keys = executors.map((ref) => keyOf.executor(ref.projectId, ref.executor));
    const found = await batchGetConsistent(this.db, this.tableName, keys, { expression: 'lastSeenAt' });
    return keys.map((key) => {
      const lastSeenAt = found.get(itemKeyId(key))?.lastSeenAt;
      return typeof lastSeenAt === 'number' ? lastSeenAt : null;
    });
  }

  async recordExecutorSeen({ projectId, executor, lastSeenAt }: ExecutorRef & { lastSeenAt: number }): Promise<void> {
    await ifCondition(
      this.update(keyOf.executor(projectId, executor), {
        set: { entity: ENTITY.executor, projectId, executor, lastSeenAt, [TABLE.ttlAttribute]: lastSeenAt + RETENTION_SECONDS.executorLastSeen },
        // Last-seen only moves forward: a batch of older sightings arriving late must not make an executor look absent.
        condition: 'attribute_not_exists(#lastSeenAt) OR #lastSeenAt < :lastSeenAt',
      }),
    );
  }

  async recordScriptHash(sighting: ScriptRef & { hash: string; firstSeenAt: number; lastSeenAt: number }): Promise<HashSighting> {
    const { projectId, scriptId, versionId, hash, firstSeenAt, lastSeenAt } = sighting;
    // The item as it was before this write: none means this write created it, and exactly one writer sees that.
    const before = await this.update(
      keyOf.scriptHash(sighting, hash),
      {
        set: { entity: ENTITY.scriptHash, projectId, scriptId, versionId, hash, lastSeenAt, [TABLE.ttlAttribute]: lastSeenAt + RETENTION_SECONDS.scriptHash },
        setIfNotExists: { firstSeenAt },
      },
      'ALL_OLD',
    );
    return { isNew: before === undefined, judged: before?.judged === 1 };
  }

  async tallyScript(script: ScriptRef & { newHashes: number; candidate: string; seenAt: number }): Promise<ScriptTally> {
    const { projectId, scriptId, versionId } = script;
    const item = await this.update(
      keyOf.scriptTally(script),
      {
        // Touched by every batch that sees the script, so it outlives each of the script's hash records.
        set: { entity: ENTITY.scriptTally, projectId, scriptId, versionId, [TABLE.ttlAttribute]: script.seenAt + RETENTION_SECONDS.scriptHash },
        setIfNotExists: { original: script.candidate },
        add: { distinctHashes: script.newHashes },
      },
      'ALL_NEW',
    );
    return { original: String(item?.original), distinctHashes: Number(item?.distinctHashes ?? 0) };
  }

  async markHashesJudged(script: ScriptRef, hashes: readonly string[]): Promise<void> {
    await Promise.all(
      hashes.map((hash) =>
        // A hash whose record expired meanwhile stays gone rather than coming back as a bare flag.
        ifCondition(this.update(keyOf.scriptHash(script, hash), { set: { judged: 1 }, condition: 'attribute_exists(pk)' })),
      ),
    );
  }

  async addValidations(delta: ValidationDelta): Promise<ValidationWindow> {
    const key = keyOf.validationWindow(delta.keyId, delta.projectId, delta.hourStart);
    const set = {
      entity: ENTITY.validationWindow,
      projectId: delta.projectId,
      keyId: delta.keyId,
      hourStart: delta.hourStart,
      lastAt: delta.lastAt,
      [TABLE.ttlAttribute]: delta.hourStart + RETENTION_SECONDS.validationWindow,
    };
    const add: Record<string, unknown> = Object.fromEntries(VALIDATION_RESULTS.map((result) => [result, delta.counts[result] ?? 0]));
    const fingerprints = delta.fingerprints.slice(0, FINGERPRINTS_KEPT_PER_WINDOW);
    let item: Item | undefined;
    if (fingerprints.length === 0) return toValidationWindow((await this.update(key, { set, add }, 'ALL_NEW')) ?? {});
    try {
      item = await this.update(
        key,
        {
          set,
          add: { ...add, fingerprints: new Set(fingerprints) },
          condition: 'attribute_not_exists(#fingerprints) OR size(#fingerprints) < :fingerprintCap',
          values: { ':fingerprintCap': FINGERPRINTS_KEPT_PER_WINDOW },
        },
        'ALL_NEW',
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The window already holds all the fingerprints it keeps: count the validations, leave the set as it is.
      item = await this.update(key, { set, add }, 'ALL_NEW');
    }
    return toValidationWindow(item ?? {});
  }

  async markKeyAbuseReported(window: Pick<ValidationWindow, 'projectId' | 'keyId' | 'hourStart'>, patterns: readonly KeyAbusePattern[]): Promise<void> {
    if (patterns.length === 0) return;
    await this.update(keyOf.validationWindow(window.keyId, window.projectId, window.hourStart), { add: { reportedPatterns: new Set(patterns) } });
  }

  async keyUsage(keys: readonly { projectId: string; keyId: string }[]): Promise<(KeyUsage | undefined)[]> {
    const found = await batchGetConsistent(
      this.db,
      this.tableName,
      keys.map(({ keyId: id }) => keyOf.key(id)),
      { expression: 'projectId, max_uses, current_uses' },
    );
    return keys.map(({ projectId, keyId: id }) => {
      const item = found.get(itemKeyId(keyOf.key(id)));
      if (!item || item.projectId !== projectId) return undefined;
      return { maxUses: typeof item.max_uses === 'number' ? item.max_uses : null, currentUses: Number(item.current_uses ?? 0) };
    });
  }

  async putEvent(event: AnalyticsEvent, now: number, summarizedBy?: string): Promise<boolean> {
    const fields = { projectId: event.projectId, name: event.name, occurredAt: event.occurredAt, data: event.data, ttl: now + RETENTION_SECONDS.event };
    const key = keyOf.event(event.projectId, event.name, event.dedupKey);
    const item: EventItem | CoalescedEventItem =
      summarizedBy === undefined ? { ...key, entity: ENTITY.event, ...fields } : { ...key, entity: ENTITY.coalescedEvent, summarizedBy, ...fields };
    return ifCondition(this.db.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })));
  }

  async notYetFired(events: readonly AnalyticsEvent[]): Promise<AnalyticsEvent[]> {
    const keys = events.map((event) => keyOf.event(event.projectId, event.name, event.dedupKey));
    const found = await batchGetConsistent(this.db, this.tableName, keys, { expression: 'entity' });
    return events.filter((_, i) => !found.has(itemKeyId(keys[i] as ItemKey)));
  }

  async projectExists(projectId: string): Promise<boolean> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ProjectionExpression: 'pk', ConsistentRead: true }),
    );
    return Item !== undefined;
  }

  async versionHashes(versions: readonly { projectId: string; versionId: string }[]): Promise<(string | undefined)[]> {
    const keys = versions.map(({ projectId, versionId }) => keyOf.version(projectId, versionId));
    const found = await batchGetConsistent(this.db, this.tableName, keys, { expression: 'sha256' });
    return keys.map((key) => {
      const item = found.get(itemKeyId(key));
      // A version uploaded before script delivery has no sha256: it is the project's, with no original to offer.
      return item === undefined ? undefined : typeof item.sha256 === 'string' ? item.sha256 : '';
    });
  }

  // ---- alert budget (lambdas/domain/analytics/alert-budget.ts) ----

  async claimAlerts(hour: AlertHourRef, alerts: number): Promise<number> {
    const item = await this.update(
      keyOf.alertHour(hour.hourStart, hour.projectId, hour.name),
      { set: alertHourIdentity(hour), add: { claimed: alerts } },
      'ALL_NEW',
    );
    return Number(item?.claimed ?? 0);
  }

  async holdAlerts(hour: AlertHourRef, { held, untracked, sample, at }: HeldAlerts): Promise<void> {
    const key = keyOf.alertHour(hour.hourStart, hour.projectId, hour.name);
    const item = await this.update(
      key,
      { set: { ...alertHourIdentity(hour), lastAt: at }, setIfNotExists: { firstAt: at }, add: { held, untracked } },
      'ALL_NEW',
    );
    // Only the ingests that hold the hour's first few conditions add to its sample (concurrent ones may add a
    // few more, which the digest cuts): once it is full, holding costs one write.
    if (sample.length === 0 || Number(item?.held ?? 0) - held >= SUMMARY_SAMPLE_LIMIT) return;
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'SET #sample = list_append(if_not_exists(#sample, :empty), :sample)',
        ExpressionAttributeNames: { '#sample': 'sample' },
        ExpressionAttributeValues: { ':empty': [], ':sample': sample.slice(0, SUMMARY_SAMPLE_LIMIT) },
      }),
    );
  }

  async heldAlerts(hourStart: number): Promise<AlertHour[]> {
    const shards = await Promise.all(
      Array.from({ length: ALERT_HOUR_SHARDS }, (_, shard) =>
        queryAll(
          this.db,
          {
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk',
            FilterExpression: '#held > :none OR #untracked > :none',
            ExpressionAttributeNames: { '#held': 'held', '#untracked': 'untracked' },
            ExpressionAttributeValues: { ':pk': keyOf.alertHourShard(hourStart, shard), ':none': 0 },
            ConsistentRead: true,
          },
          toAlertHour,
        ),
      ),
    );
    return shards.flat().filter((hour) => hour !== undefined);
  }

  async countNewNames(hour: KeyHourRef, kind: NewNameKind, count: number): Promise<number> {
    const item = await this.update(
      keyOf.validationWindow(hour.keyId, hour.projectId, hour.hourStart),
      {
        set: {
          entity: ENTITY.validationWindow,
          projectId: hour.projectId,
          keyId: hour.keyId,
          hourStart: hour.hourStart,
          [TABLE.ttlAttribute]: hour.hourStart + RETENTION_SECONDS.validationWindow,
        },
        add: { [kind]: count },
      },
      'ALL_NEW',
    );
    return Number(item?.[kind] ?? 0);
  }

  async scriptHashesKnown(hashes: readonly (ScriptRef & { hash: string })[]): Promise<boolean[]> {
    const keys = hashes.map((sighting) => keyOf.scriptHash(sighting, sighting.hash));
    const found = await batchGetConsistent(this.db, this.tableName, keys, { expression: 'entity' });
    return keys.map((key) => found.has(itemKeyId(key)));
  }

  // ---- helpers ----

  /**
   * One UpdateItem built from attribute maps, every name behind a placeholder (`hash`, `date` and others are
   * DynamoDB reserved words). Condition expressions refer to attributes as `#name` and to set values as `:name`.
   */
  private async update(
    key: ItemKey,
    parts: { set?: Item; setIfNotExists?: Item; add?: Item; condition?: string; values?: Item },
    returnValues?: 'ALL_NEW' | 'ALL_OLD',
  ): Promise<Item | undefined> {
    const names: Record<string, string> = {};
    const values: Item = { ...parts.values };
    const bind = (name: string, value: unknown) => {
      names[`#${name}`] = name;
      values[`:${name}`] = value;
      return { name: `#${name}`, value: `:${name}` };
    };
    const sets = [
      ...Object.entries(parts.set ?? {})
        .map(([name, value]) => bind(name, value))
        .map((b) => `${b.name} = ${b.value}`),
      ...Object.entries(parts.setIfNotExists ?? {})
        .map(([name, value]) => bind(name, value))
        .map((b) => `${b.name} = if_not_exists(${b.name}, ${b.value})`),
    ];
    const adds = Object.entries(parts.add ?? {})
      .map(([name, value]) => bind(name, value))
      .map((b) => `${b.name} ${b.value}`);
    for (const name of parts.condition?.match(/#\w+/g) ?? []) names[name] = name.slice(1);
    const input: UpdateCommandInput = {
      TableName: this.tableName,
      Key: key,
      UpdateExpression: [sets.length > 0 ? `SET ${sets.join(', ')}` : '', adds.length > 0 ? `ADD ${adds.join(', ')}` : ''].join(' ').trim(),
      ConditionExpression: parts.condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: returnValues,
    };
    const { Attributes } = await this.db.send(new UpdateCommand(input));
    return Attributes;
  }

  /** Every item of a partition, read consistently: a detector run right after an ingest must count it. */
  private partition(pk: string, projection: string, names: Record<string, string>): Promise<Item[]> {
    return queryAll(
      this.db,
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ProjectionExpression: projection,
        ExpressionAttributeNames: names,
        ConsistentRead: true,
      },
      (item) => item,
    );
  }
}

function toValidationWindow(item: Item): ValidationWindow {
  const count = (result: ValidationResult) => Number(item[result] ?? 0);
  const { fingerprints, reportedPatterns } = item;
  return {
    projectId: String(item.projectId),
    keyId: String(item.keyId),
    hourStart: Number(item.hourStart),
    counts: Object.fromEntries(VALIDATION_RESULTS.map((result) => [result, count(result)])) as Record<ValidationResult, number>,
    distinctFingerprints: fingerprints instanceof Set ? fingerprints.size : 0,
    lastAt: Number(item.lastAt),
    reported: reportedPatterns instanceof Set ? KEY_ABUSE_PATTERNS.filter((pattern) => reportedPatterns.has(pattern)) : [],
  };
}

const alertHourIdentity = (hour: AlertHourRef) => ({
  entity: ENTITY.alertHour,
  projectId: hour.projectId,
  name: hour.name,
  hourStart: hour.hourStart,
  [TABLE.ttlAttribute]: hour.hourStart + RETENTION_SECONDS.alertHour,
});

const isSummarizedName = (name: unknown): name is SummarizedEventName => (SUMMARIZED_EVENTS as readonly unknown[]).includes(name);

function toAlertHour(item: Item): AlertHour | undefined {
  if (!isSummarizedName(item.name)) return undefined;
  const hourStart = Number(item.hourStart);
  return {
    projectId: String(item.projectId),
    name: item.name,
    hourStart,
    claimed: Number(item.claimed ?? 0),
    held: Number(item.held ?? 0),
    untracked: Number(item.untracked ?? 0),
    firstAt: Number(item.firstAt ?? hourStart),
    lastAt: Number(item.lastAt ?? hourStart),
    sample: Array.isArray(item.sample) ? (item.sample as SingleEventData<SummarizedEventName>[]) : [],
  };
}
