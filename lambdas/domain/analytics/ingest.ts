import { randomUUID } from 'node:crypto';
import { mapPagesBounded } from '#domain/concurrency';
import type { TelemetryStore } from '#domain/ports';
import { hourStart, utcDate } from '#domain/time';
import { type AnalyticsEventName, type SingleEventData, SUMMARY_SAMPLE_LIMIT, type SummarizedEventName } from '#schemas/events';
import type { ExecutionRecord, ValidationRecord } from '#schemas/telemetry';
import { ALERTS_PER_HOUR, admittedOf, digestKey, isBudgeted, NEW_EXECUTORS_PER_KEY_PER_HOUR, NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR } from './alert-budget';
import { COALESCE_ABOVE, groupStorms, summarize } from './coalesce';
import { detectClones, detectKeyAbuse, detectNewExecutor, originalCandidate } from './detectors';
import type { AlertHourRef, AnalyticsEvent, KeyUsage, NewNameKind, ScriptRef, ValidationDelta } from './model';
import { bucketStart, foldStats, type StatsUnit } from './stats';
import { type Indexed, type ParsedBatch, parseTelemetryBatch, type Rejection } from './telemetry';

/**
 * Requests each ingest step keeps in flight. A batch is first folded in memory (one counter update per project
 * and day, one window update per key and hour, one last-seen per executor, one upsert per script hash and one
 * tally per script), so
 * 1,000 records cost requests per distinct aggregate, not per record, and those go out this many at a time
 * instead of one after another.
 */
export const INGEST_CONCURRENCY = 16;

export interface FiredEvent {
  name: AnalyticsEventName;
  projectId: string;
  dedupKey: string;
  /** A summary's count of the conditions it stands for (each remembered as fired, none posted by itself). */
  summarizes?: number;
  /** Conditions past the hour's alert budget, held for the hour's digest (named by `dedupKey`) instead of posted. */
  held?: number;
}

export interface IngestResult {
  accepted: number;
  rejected: number;
  rejections: Rejection[];
  /** Events this batch fired (a summary stands for many); a condition that had already fired is not listed again. */
  events: FiredEvent[];
}

/**
 * How a batch's records were delivered, so that the stats count a redelivered record once: the id of the unit its
 * source redelivers whole. One id for the whole batch (a stream batch, retried as it was; a direct invocation's
 * request id; a CLI call), or one per record (the queue message it came in, which SQS may redeliver in another
 * batch).
 */
export type DeliveryUnits = string | readonly string[];

/**
 * The one ingest entry point (the ingest Lambda and the dashboard CLI both call it): validate each record,
 * fold the valid ones into the store's aggregates and run the ingest-time detectors (new_executor, key_abuse,
 * clone_detected) on the result. Events are written before the state that would stop them from being
 * detected again, so a retried batch fires what a failed one missed, and the dedup key keeps it to once.
 * The stats counters are exactly once per delivery unit (`units`, default: this call's own); the daily execution
 * counters and validation windows are not idempotent: a batch ingested twice counts there twice.
 */
export async function ingestTelemetry(
  store: TelemetryStore,
  records: readonly unknown[],
  now: number,
  units: DeliveryUnits = randomUUID(),
): Promise<IngestResult> {
  const { batch, usage, versionHashes } = await keepKnown(store, parseTelemetryBatch(records, now));
  const fired = await Promise.all([
    countExecutions(store, batch.executions).then(() => []),
    countStats(store, batch, units, now).then(() => []),
    judgeExecutors(store, batch.executions, now),
    judgeScriptHashes(store, batch.executions, versionHashes, now),
    judgeValidations(store, batch.validations, usage, now),
  ]);
  return {
    accepted: batch.executions.length + batch.validations.length,
    rejected: batch.rejections.length,
    rejections: batch.rejections.sort((a, b) => a.index - b.index),
    events: fired.flat(),
  };
}

/**
 * The stats counters: one unit per delivery unit, project and UTC day, each applied at most once by the store
 * (its counters move in one transaction with the unit's marker), so one counter write covers a whole batch.
 */
async function countStats(store: TelemetryStore, batch: ParsedBatch, units: DeliveryUnits, now: number): Promise<void> {
  const unitOf = (index: number) => {
    const unit = typeof units === 'string' ? units : units[index];
    if (unit === undefined) throw new Error(`No delivery unit for record ${index}`);
    return unit;
  };
  const groups = new Map<string, { unit: Omit<StatsUnit, 'deltas'>; validations: ValidationRecord[]; executions: ExecutionRecord[] }>();
  const groupOf = (record: Indexed<{ projectId: string; at: number }>) => {
    const unit = { unitId: unitOf(record.index), projectId: record.projectId, day: bucketStart(record.at, 'day') };
    const id = JSON.stringify([unit.unitId, unit.projectId, unit.day]);
    let group = groups.get(id);
    if (!group) {
      group = { unit, validations: [], executions: [] };
      groups.set(id, group);
    }
    return group;
  };
  for (const record of batch.validations) groupOf(record).validations.push(record);
  for (const record of batch.executions) groupOf(record).executions.push(record);
  const statsUnits = [...groups.values()]
    .map(({ unit, validations, executions }) => ({ ...unit, deltas: foldStats(validations, executions) }))
    .filter((unit) => unit.deltas.length > 0);
  // A project's units of one day touch the same counters: the store packs them into as few transactions as fit.
  const perProjectDay = [...groupBy(statsUnits, (unit) => [unit.projectId, unit.day]).values()];
  await mapBounded(perProjectDay, (sameCounters) => store.addStats(sameCounters, now));
}

const keyRef = (record: { projectId: string; keyId: string }) => JSON.stringify([record.projectId, record.keyId]);
const versionRef = (record: { projectId: string; versionId: string }) => JSON.stringify([record.projectId, record.versionId]);

/**
 * Records of a project that does not exist, validations of a key the project does not have, and executions of a
 * version the project does not have are refused before anything is written: anyone can send a key check for any
 * project id, key value and version id, and such records could only fill the table (or, for a version, make any
 * hash the "original" a clone is judged against). Returns the rest, with the use cap of every key that was
 * validated and the uploaded SHA-256 of every version executed.
 */
async function keepKnown(
  store: TelemetryStore,
  parsed: ParsedBatch,
): Promise<{ batch: ParsedBatch; usage: Map<string, KeyUsage>; versionHashes: Map<string, string> }> {
  const projectIds = [...new Set([...parsed.executions, ...parsed.validations].map((record) => record.projectId))];
  const existing = new Set((await mapBounded(projectIds, async (id) => ((await store.projectExists(id)) ? id : undefined))).filter((id) => id !== undefined));
  const keys = [
    ...groupBy(
      parsed.validations.filter((record) => existing.has(record.projectId)),
      (record) => [record.projectId, record.keyId],
    ).values(),
  ].map(([record]) => ({
    projectId: record.projectId,
    keyId: record.keyId,
  }));
  const versions = [
    ...groupBy(
      parsed.executions.flatMap((record) =>
        record.versionId !== undefined && existing.has(record.projectId) ? [{ projectId: record.projectId, versionId: record.versionId }] : [],
      ),
      (version) => [version.projectId, version.versionId],
    ).values(),
  ].map(([version]) => version);
  const [found, hashes] = await Promise.all([keys.length > 0 ? store.keyUsage(keys) : [], versions.length > 0 ? store.versionHashes(versions) : []]);
  const usage = new Map(keys.flatMap((key, i) => (found[i] ? [[keyRef(key), found[i]] as const] : [])));
  const versionHashes = new Map(versions.flatMap((version, i) => (hashes[i] !== undefined ? [[versionRef(version), hashes[i]] as const] : [])));
  const rejections = [...parsed.rejections];
  const known = <T extends Indexed<{ projectId: string }>>(record: T, why: () => string | undefined): boolean => {
    const reason = existing.has(record.projectId) ? why() : `project ${record.projectId} does not exist`;
    if (reason) rejections.push({ index: record.index, reason });
    return reason === undefined;
  };
  return {
    batch: {
      executions: parsed.executions.filter((record) =>
        known(record, () =>
          record.versionId === undefined || versionHashes.has(versionRef({ projectId: record.projectId, versionId: record.versionId }))
            ? undefined
            : `version ${record.versionId} is not a version of project ${record.projectId}`,
        ),
      ),
      validations: parsed.validations.filter((record) =>
        known(record, () => (usage.has(keyRef(record)) ? undefined : `key ${record.keyId} is not a key of project ${record.projectId}`)),
      ),
      rejections,
    },
    usage,
    versionHashes,
  };
}

/**
 * Write events with bounded parallelism; returns those this call wrote (a condition that already fired is not).
 * More than COALESCE_ABOVE not yet fired of one name for one project become one summary event (see coalesce.ts):
 * the summary is written first, then each condition as dedup memory only, so a batch retried after a failure in
 * between makes the same summary again (written once) and then remembers the rest.
 * Each single event and each summary is then one alert of its project's hourly budget (alert-budget.ts): those
 * past it are held instead, written as dedup memory of the hour's digest and counted for it.
 */
export async function fireEvents(store: TelemetryStore, events: readonly AnalyticsEvent[], now: number): Promise<FiredEvent[]> {
  const { singles, storms } = groupStorms(events);
  // Only a storm pays for this read: which of its conditions are new decides whether it is still a storm.
  const unfired = await mapBounded(storms, (storm) => store.notYetFired(storm));
  const calm = unfired.filter((fresh) => fresh.length <= COALESCE_ABOVE).flat();
  const alerts: Alert[] = [
    ...[...singles, ...calm].map((event) => ({ post: event, conditions: [event] })),
    ...unfired.filter((fresh) => fresh.length > COALESCE_ABOVE).map((storm) => ({ post: summarize(storm), conditions: storm })),
  ];
  const budgets = [...groupBy(alerts, ({ post }) => [post.projectId, post.name]).values()];
  // One budget at a time: each already posts its alerts, and each alert its conditions, INGEST_CONCURRENCY at a time,
  // so a third level in parallel would multiply the requests in flight past the ingest's bound.
  const outcomes: (FiredEvent | undefined)[][] = [];
  for (const group of budgets) outcomes.push(await fireBudget(store, group, now));
  return outcomes.flat().filter((event) => event !== undefined);
}

/** The alerts of one project and kind: posted while the hour's budget lasts, held for the digest after it. */
async function fireBudget(store: TelemetryStore, group: readonly [Alert, ...Alert[]], now: number): Promise<(FiredEvent | undefined)[]> {
  const { projectId, name } = group[0].post;
  if (!isBudgeted(name)) return mapBounded(group, (alert) => postAlert(store, alert, now));
  // A condition that already fired (a retried batch) must not spend the hour's budget; a storm's were read already.
  const singles = group.filter((alert) => alert.conditions.length === 1).map(({ post }) => post);
  const unposted = new Set(singles.length === 0 ? [] : (await store.notYetFired(singles)).map(({ dedupKey }) => dedupKey));
  const fresh = group.filter((alert) => alert.conditions.length > 1 || unposted.has(alert.post.dedupKey));
  if (fresh.length === 0) return [];
  const hour: AlertHourRef = { projectId, name, hourStart: hourStart(now) };
  const admitted = admittedOf(await store.claimAlerts(hour, fresh.length), fresh.length, ALERTS_PER_HOUR);
  const posted = await mapBounded(fresh.slice(0, admitted), (alert) => postAlert(store, alert, now));
  return [...posted, await holdAlerts(store, hour, fresh.slice(admitted), now)];
}

/** What one alert posts (a condition, or the summary of a batch's storm) and the conditions it stands for. */
interface Alert {
  post: AnalyticsEvent;
  conditions: readonly AnalyticsEvent[];
}

async function postAlert(store: TelemetryStore, { post, conditions }: Alert, now: number): Promise<FiredEvent | undefined> {
  const wrote = await store.putEvent(post, now);
  if (conditions.length === 1 && conditions[0] === post) return wrote ? firedOf(post) : undefined;
  await mapBounded(conditions, (event) => store.putEvent(event, now, post.dedupKey));
  return wrote ? { ...firedOf(post), summarizes: conditions.length } : undefined;
}

/** Conditions past the hour's budget: remembered as summarized by the hour's digest, and counted for it. */
async function holdAlerts(store: TelemetryStore, hour: AlertHourRef, alerts: readonly Alert[], now: number): Promise<FiredEvent | undefined> {
  if (alerts.length === 0) return undefined;
  const digest = digestKey(hour.hourStart);
  const conditions = alerts.flatMap((alert) => alert.conditions);
  const wrote = await mapBounded(conditions, (event) => store.putEvent(event, now, digest));
  const held = conditions.filter((_, i) => wrote[i]);
  if (held.length === 0) return undefined;
  const sample = held.slice(0, SUMMARY_SAMPLE_LIMIT).map((event) => event.data as SingleEventData<SummarizedEventName>);
  await store.holdAlerts(hour, { held: held.length, untracked: 0, sample, at: now });
  return { name: hour.name, projectId: hour.projectId, dedupKey: digest, held: held.length };
}

const firedOf = ({ name, projectId, dedupKey }: AnalyticsEvent): FiredEvent => ({ name, projectId, dedupKey });

async function countExecutions(store: TelemetryStore, executions: readonly ExecutionRecord[]): Promise<void> {
  const perDay = groupBy(executions, (record) => [record.projectId, utcDate(record.at)]);
  await mapBounded([...perDay.values()], (records) =>
    store.addExecutions({ projectId: records[0].projectId, date: utcDate(records[0].at), executions: records.length }),
  );
}

async function judgeExecutors(store: TelemetryStore, executions: readonly ExecutionRecord[], now: number): Promise<FiredEvent[]> {
  const executors = [...groupBy(executions, (record) => [record.projectId, record.executor]).values()].map((records) => ({
    projectId: records[0].projectId,
    executor: records[0].executor,
    sightings: records.map((record) => record.at),
    keyId: firstKeyOf(records),
  }));
  if (executors.length === 0) return [];
  const lastSeen = await store.executorsLastSeen(executors);
  const seen = executors.map((executor, i) => ({ executor, before: lastSeen[i] ?? null }));
  // Only a name the project has no record of costs a record: those are what a key may add a few of an hour.
  const tracked = await withinNewNameLimit(
    store,
    seen,
    ({ before }) => before === null,
    ({ executor }) => executor,
    'newExecutors',
    'new_executor',
    now,
  );
  const judged = tracked.map(({ executor, before }) => ({ executor, before, ...detectNewExecutor({ ...executor, lastSeenAt: before }) }));
  const fired = await fireEvents(
    store,
    judged.flatMap((judgement) => judgement.events),
    now,
  );
  const moved = judged.flatMap(({ executor, before, lastSeenAt }) =>
    lastSeenAt !== null && lastSeenAt !== before ? [{ projectId: executor.projectId, executor: executor.executor, lastSeenAt }] : [],
  );
  await mapBounded(moved, (seen) => store.recordExecutorSeen(seen));
  return fired;
}

/**
 * clone_detected: a version's original is the SHA-256 of the script uploaded for it (the version item keeps it);
 * only a script reported with no version falls back to its first reported hash.
 */
async function judgeScriptHashes(
  store: TelemetryStore,
  executions: readonly ExecutionRecord[],
  versionHashes: Map<string, string>,
  now: number,
): Promise<FiredEvent[]> {
  const hashed = executions.flatMap((record) =>
    record.scriptHash ? [{ ...scriptOf(record), hash: record.scriptHash, at: record.at, keyId: record.keyId }] : [],
  );
  const sightings = [...groupBy(hashed, (s) => [s.projectId, s.scriptId, s.versionId, s.hash]).values()].map((group) => ({
    projectId: group[0].projectId,
    scriptId: group[0].scriptId,
    versionId: group[0].versionId,
    hash: group[0].hash,
    firstSeenAt: group.reduce((min, s) => Math.min(min, s.at), group[0].at),
    lastSeenAt: group.reduce((max, s) => Math.max(max, s.at), group[0].at),
    keyId: firstKeyOf(group),
  }));
  if (sightings.length === 0) return [];
  const known = await store.scriptHashesKnown(sightings);
  const tracked = await withinNewNameLimit(
    store,
    sightings.map((sighting, i) => ({ sighting, known: known[i] === true })),
    ({ known: isKnown }) => !isKnown,
    ({ sighting }) => sighting,
    'newScriptHashes',
    'clone_detected',
    now,
  );
  const noted = await mapBounded(
    tracked.map(({ sighting }) => sighting),
    async (sighting) => ({ sighting, ...(await store.recordScriptHash(sighting)) }),
  );
  // One tally write per script: it counts the new hashes and names the original, so no judgement reads a hash list.
  const scripts = [...groupBy(noted, ({ sighting: s }) => [s.projectId, s.scriptId, s.versionId]).values()];
  const judged = await mapBounded(scripts, async (group) => {
    const { projectId, scriptId, versionId } = group[0].sighting;
    const script: ScriptRef = { projectId, scriptId, versionId };
    const tally = await store.tallyScript({
      ...script,
      newHashes: group.filter(({ isNew }) => isNew).length,
      candidate:
        (versionId !== null && versionHashes.get(versionRef({ projectId, versionId }))) ||
        (originalCandidate(group.map(({ sighting }) => sighting)) ?? group[0].sighting.hash),
      seenAt: Math.max(now, ...group.map(({ sighting }) => sighting.lastSeenAt)),
    });
    const unjudged = group.filter(({ judged: done }) => !done).map(({ sighting }) => ({ hash: sighting.hash, firstSeenAt: sighting.firstSeenAt }));
    return { script, ...detectClones({ ...script, tally, unjudged }) };
  });
  const fired = await fireEvents(
    store,
    judged.flatMap(({ events }) => events),
    now,
  );
  await mapBounded(
    judged.filter(({ judged: hashes }) => hashes.length > 0),
    ({ script, judged: hashes }) => store.markHashesJudged(script, hashes),
  );
  return fired;
}

async function judgeValidations(
  store: TelemetryStore,
  validations: readonly ValidationRecord[],
  usage: Map<string, KeyUsage>,
  now: number,
): Promise<FiredEvent[]> {
  const deltas: ValidationDelta[] = [...groupBy(validations, (record) => [record.projectId, record.keyId, hourStart(record.at)]).values()].map((group) => {
    const counts: ValidationDelta['counts'] = {};
    for (const record of group) counts[record.result] = (counts[record.result] ?? 0) + 1;
    return {
      projectId: group[0].projectId,
      keyId: group[0].keyId,
      hourStart: hourStart(group[0].at),
      counts,
      fingerprints: [...new Set(group.map((record) => record.fingerprint))],
      lastAt: group.reduce((max, record) => Math.max(max, record.at), group[0].at),
    };
  });
  const windows = await mapBounded(deltas, (delta) => store.addValidations(delta));
  const judged = windows.map((window) => ({ window, ...detectKeyAbuse(window, usage.get(keyRef(window))) })).filter(({ events }) => events.length > 0);
  const fired = await fireEvents(
    store,
    judged.flatMap(({ events }) => events),
    now,
  );
  await mapBounded(judged, ({ window, patterns }) => store.markKeyAbuseReported(window, patterns));
  return fired;
}

/** The key of a group's earliest record that names one: the key a new name is counted against. */
const firstKeyOf = (records: readonly { keyId?: string; at: number }[]): string | undefined =>
  [...records].sort((a, b) => a.at - b.at).find((record) => record.keyId !== undefined)?.keyId;

const NEW_NAME_LIMITS: Record<NewNameKind, number> = { newExecutors: NEW_EXECUTORS_PER_KEY_PER_HOUR, newScriptHashes: NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR };

/**
 * `items` without the new names (those `isNew` picks) their key reported past its hourly limit (alert-budget.ts):
 * each key's new names are counted in one atomic ADD and the first up to the limit are kept. A name reported with
 * no key (the ingest Lambda invoked directly, not the public check) is kept. Names left out are counted in the
 * project's alert hour of `event`, so the hour's digest tells the owner.
 */
async function withinNewNameLimit<T>(
  store: TelemetryStore,
  items: readonly T[],
  isNew: (item: T) => boolean,
  sighting: (item: T) => { projectId: string; keyId?: string | undefined },
  kind: NewNameKind,
  event: SummarizedEventName,
  now: number,
): Promise<T[]> {
  const byKey = [
    ...groupBy(
      items.filter((item) => isNew(item) && sighting(item).keyId !== undefined),
      (item) => [sighting(item).projectId, sighting(item).keyId],
    ).values(),
  ];
  const untracked = new Set<T>();
  await mapBounded(byKey, async (group) => {
    const { projectId, keyId } = sighting(group[0]);
    if (keyId === undefined) return;
    const admitted = admittedOf(
      await store.countNewNames({ projectId, keyId, hourStart: hourStart(now) }, kind, group.length),
      group.length,
      NEW_NAME_LIMITS[kind],
    );
    for (const item of group.slice(admitted)) untracked.add(item);
  });
  const perProject = [...groupBy([...untracked], (item) => [sighting(item).projectId]).values()];
  await mapBounded(perProject, (group) =>
    store.holdAlerts(
      { projectId: sighting(group[0]).projectId, name: event, hourStart: hourStart(now) },
      { held: 0, untracked: group.length, sample: [], at: now },
    ),
  );
  return items.filter((item) => !untracked.has(item));
}

const scriptOf = (record: ExecutionRecord): ScriptRef => ({
  projectId: record.projectId,
  scriptId: record.scriptId ?? record.projectId,
  versionId: record.versionId ?? null,
});

/** Items grouped by a composite key; every group is non-empty. */
function groupBy<T>(items: readonly T[], key: (item: T) => readonly unknown[]): Map<string, [T, ...T[]]> {
  const groups = new Map<string, [T, ...T[]]>();
  for (const item of items) {
    const id = JSON.stringify(key(item));
    const group = groups.get(id);
    if (group) group.push(item);
    else groups.set(id, [item]);
  }
  return groups;
}

/** `work` on every item, INGEST_CONCURRENCY at a time; results in input order. */
export async function mapBounded<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  async function* onePage() {
    yield items.map((item, index) => ({ item, index }));
  }
  await mapPagesBounded(onePage(), INGEST_CONCURRENCY, async ({ item, index }) => {
    results[index] = await work(item);
  });
  return results;
}
