import type { AnalyticsEvent, KeyUsage, ScriptRef, ValidationDelta } from '#domain/analytics';
import { mapPagesBounded } from '#domain/concurrency';
import type { TelemetryStore } from '#domain/ports';
import { hourStart, utcDate } from '#domain/time';
import type { AnalyticsEventName } from '#schemas/events';
import type { ExecutionRecord, ValidationRecord } from '#schemas/telemetry';
import { COALESCE_ABOVE, groupStorms, summarize } from './coalesce';
import { detectClones, detectKeyAbuse, detectNewExecutor, originalCandidate } from './detectors';
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
}

export interface IngestResult {
  accepted: number;
  rejected: number;
  rejections: Rejection[];
  /** Events this batch fired (a summary stands for many); a condition that had already fired is not listed again. */
  events: FiredEvent[];
}

/**
 * The one ingest entry point (the ingest Lambda and the dashboard CLI both call it): validate each record,
 * fold the valid ones into the store's aggregates and run the ingest-time detectors (new_executor, key_abuse,
 * clone_detected) on the result. Events are written before the state that would stop them from being
 * detected again, so a retried batch fires what a failed one missed, and the dedup key keeps it to once.
 * Counters are not idempotent: a batch ingested twice counts its executions twice.
 */
export async function ingestTelemetry(store: TelemetryStore, records: readonly unknown[], now: number): Promise<IngestResult> {
  const { batch, usage } = await keepKnown(store, parseTelemetryBatch(records, now));
  const fired = await Promise.all([
    countExecutions(store, batch.executions).then(() => []),
    judgeExecutors(store, batch.executions, now),
    judgeScriptHashes(store, batch.executions, now),
    judgeValidations(store, batch.validations, usage, now),
  ]);
  return {
    accepted: batch.executions.length + batch.validations.length,
    rejected: batch.rejections.length,
    rejections: batch.rejections.sort((a, b) => a.index - b.index),
    events: fired.flat(),
  };
}

const keyRef = (record: { projectId: string; keyId: string }) => JSON.stringify([record.projectId, record.keyId]);

/**
 * Records of a project that does not exist, and validations of a key the project does not have, are refused
 * before anything is written: anyone can send a key check for any project id and key value, and such records
 * could only fill the table. Returns the rest, with the use cap of every key that was validated.
 */
async function keepKnown(store: TelemetryStore, parsed: ParsedBatch): Promise<{ batch: ParsedBatch; usage: Map<string, KeyUsage> }> {
  const projectIds = [...new Set([...parsed.executions, ...parsed.validations].map((record) => record.projectId))];
  const existing = new Set((await mapBounded(projectIds, async (id) => ((await store.projectExists(id)) ? id : undefined))).filter((id) => id !== undefined));
  const keys = [...groupBy(parsed.validations.filter((record) => existing.has(record.projectId)), (record) => [record.projectId, record.keyId]).values()].map(([record]) => ({
    projectId: record.projectId,
    keyId: record.keyId,
  }));
  const found = keys.length > 0 ? await store.keyUsage(keys) : [];
  const usage = new Map(keys.flatMap((key, i) => (found[i] ? [[keyRef(key), found[i]] as const] : [])));
  const rejections = [...parsed.rejections];
  const known = <T extends Indexed<{ projectId: string }>>(record: T, why: () => string | undefined): boolean => {
    const reason = existing.has(record.projectId) ? why() : `project ${record.projectId} does not exist`;
    if (reason) rejections.push({ index: record.index, reason });
    return reason === undefined;
  };
  return {
    batch: {
      executions: parsed.executions.filter((record) => known(record, () => undefined)),
      validations: parsed.validations.filter((record) => known(record, () => (usage.has(keyRef(record)) ? undefined : `key ${record.keyId} is not a key of project ${record.projectId}`))),
      rejections,
    },
    usage,
  };
}

/**
 * Write events with bounded parallelism; returns those this call wrote (a condition that already fired is not).
 * More than COALESCE_ABOVE not yet fired of one name for one project become one summary event (see coalesce.ts):
 * the summary is written first, then each condition as dedup memory only, so a batch retried after a failure in
 * between makes the same summary again (written once) and then remembers the rest.
 */
export async function fireEvents(store: TelemetryStore, events: readonly AnalyticsEvent[], now: number): Promise<FiredEvent[]> {
  const { singles, storms } = groupStorms(events);
  // Only a storm pays for this read: which of its conditions are new decides whether it is still a storm.
  const unfired = await mapBounded(storms, (storm) => store.notYetFired(storm));
  const calm = unfired.filter((fresh) => fresh.length <= COALESCE_ABOVE).flat();
  const written = await mapBounded([...singles, ...calm], async (event) => ((await store.putEvent(event, now)) ? firedOf(event) : undefined));
  const summaries: FiredEvent[] = [];
  for (const storm of unfired.filter((fresh) => fresh.length > COALESCE_ABOVE)) {
    const summary = summarize(storm);
    const wrote = await store.putEvent(summary, now);
    await mapBounded(storm, (event) => store.putEvent(event, now, summary.dedupKey));
    if (wrote) summaries.push({ ...firedOf(summary), summarizes: storm.length });
  }
  return [...written.filter((event) => event !== undefined), ...summaries];
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
  }));
  if (executors.length === 0) return [];
  const lastSeen = await store.executorsLastSeen(executors);
  const judged = executors.map((executor, i) => {
    const before = lastSeen[i] ?? null;
    return { executor, before, ...detectNewExecutor({ ...executor, lastSeenAt: before }) };
  });
  const fired = await fireEvents(store, judged.flatMap((judgement) => judgement.events), now);
  const moved = judged.flatMap(({ executor, before, lastSeenAt }) =>
    lastSeenAt !== null && lastSeenAt !== before ? [{ projectId: executor.projectId, executor: executor.executor, lastSeenAt }] : [],
  );
  await mapBounded(moved, (seen) => store.recordExecutorSeen(seen));
  return fired;
}

async function judgeScriptHashes(store: TelemetryStore, executions: readonly ExecutionRecord[], now: number): Promise<FiredEvent[]> {
  const hashed = executions.flatMap((record) => (record.scriptHash ? [{ ...scriptOf(record), hash: record.scriptHash, at: record.at }] : []));
  const sightings = [...groupBy(hashed, (s) => [s.projectId, s.scriptId, s.versionId, s.hash]).values()].map((group) => ({
    projectId: group[0].projectId,
    scriptId: group[0].scriptId,
    versionId: group[0].versionId,
    hash: group[0].hash,
    firstSeenAt: group.reduce((min, s) => Math.min(min, s.at), group[0].at),
    lastSeenAt: group.reduce((max, s) => Math.max(max, s.at), group[0].at),
  }));
  const noted = await mapBounded(sightings, async (sighting) => ({ sighting, ...(await store.recordScriptHash(sighting)) }));
  // One tally write per script: it counts the new hashes and names the original, so no judgement reads a hash list.
  const scripts = [...groupBy(noted, ({ sighting: s }) => [s.projectId, s.scriptId, s.versionId]).values()];
  const judged = await mapBounded(scripts, async (group) => {
    const { projectId, scriptId, versionId } = group[0].sighting;
    const script: ScriptRef = { projectId, scriptId, versionId };
    const tally = await store.tallyScript({
      ...script,
      newHashes: group.filter(({ isNew }) => isNew).length,
      candidate: originalCandidate(group.map(({ sighting }) => sighting)) ?? group[0].sighting.hash,
      seenAt: Math.max(now, ...group.map(({ sighting }) => sighting.lastSeenAt)),
    });
    const unjudged = group.filter(({ judged: done }) => !done).map(({ sighting }) => ({ hash: sighting.hash, firstSeenAt: sighting.firstSeenAt }));
    return { script, ...detectClones({ ...script, tally, unjudged }) };
  });
  const fired = await fireEvents(store, judged.flatMap(({ events }) => events), now);
  await mapBounded(
    judged.filter(({ judged: hashes }) => hashes.length > 0),
    ({ script, judged: hashes }) => store.markHashesJudged(script, hashes),
  );
  return fired;
}

async function judgeValidations(store: TelemetryStore, validations: readonly ValidationRecord[], usage: Map<string, KeyUsage>, now: number): Promise<FiredEvent[]> {
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
  const judged = windows
    .map((window) => ({ window, ...detectKeyAbuse(window, usage.get(keyRef(window))) }))
    .filter(({ events }) => events.length > 0);
  const fired = await fireEvents(store, judged.flatMap(({ events }) => events), now);
  await mapBounded(judged, ({ window, patterns }) => store.markKeyAbuseReported(window, patterns));
  return fired;
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
async function mapBounded<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  async function* onePage() {
    yield items.map((item, index) => ({ item, index }));
  }
  await mapPagesBounded(onePage(), INGEST_CONCURRENCY, async ({ item, index }) => {
    results[index] = await work(item);
  });
  return results;
}
