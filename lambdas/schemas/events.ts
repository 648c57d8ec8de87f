import * as z from 'zod/mini';
import type { EventName } from './resources';

/**
 * What each of the five events carries, from the item that fires it to the embed that shows it.
 * `version_deployed` is made from a version item; the four analytics events from an EVENT item that a
 * detector writes (see EventItem). Both travel the same stream → fan-out → SQS → delivery path.
 */
const VersionDeployedData = z.object({
  versionId: z.string(),
  versionNumber: z.int(),
  sizeBytes: z.int(),
  notes: z.string(),
});

const ExecutionDropData = z.object({
  /** The UTC day that fell (YYYY-MM-DD), compared with the day before it. */
  date: z.string(),
  executions: z.int(),
  previousExecutions: z.int(),
  /** Fall in percent, e.g. 42.5 for a 42.5 % drop. */
  dropPercent: z.number(),
});

const NewExecutorData = z.object({
  executor: z.string(),
  firstSeenAt: z.int(),
  /** When it was last seen before this appearance, if ever (null: never seen). */
  previouslySeenAt: z.nullable(z.int()),
});

export const KEY_ABUSE_PATTERNS = [
  'many_fingerprints',
  'revoked_key_burst',
  'banned_key_burst',
  'expired_key_burst',
  'over_max_uses',
  'hwid_locked_burst',
] as const;
const KeyAbuseData = z.object({
  keyId: z.string(),
  pattern: z.enum(KEY_ABUSE_PATTERNS),
  /** What was counted (distinct fingerprints, validations, uses) and the threshold it passed. */
  count: z.int(),
  threshold: z.int(),
  windowSeconds: z.int(),
});

/** Hashes a clone_detected event lists at most: its size stays the same however many hashes a script has. */
export const CLONE_SAMPLE_LIMIT = 5;
const CloneDetectedData = z.object({
  scriptId: z.string(),
  versionId: z.nullable(z.string()),
  newHash: z.string(),
  /** The first hash reported for the script: the one that is not a clone. */
  originalHash: z.string(),
  /** Distinct hashes reported for the script so far, the original and the new one included. */
  distinctHashes: z.int(),
  /** The original, the new hash and others new at the same time: at most CLONE_SAMPLE_LIMIT. */
  sampleHashes: z.array(z.string()).check(z.maxLength(CLONE_SAMPLE_LIMIT)),
});

/** Conditions a summary event lists besides their count. */
export const SUMMARY_SAMPLE_LIMIT = 5;

/**
 * One event standing for many conditions of one kind, fired in one ingest batch for one project (see
 * lambdas/domain/analytics/coalesce.ts): how many, when the first and the last happened, and a few of them in full.
 */
const summaryOf = <T extends z.ZodMiniType>(single: T) =>
  z.object({
    count: z.int().check(z.positive()),
    firstAt: z.int(),
    lastAt: z.int(),
    sample: z.array(single).check(z.minLength(1), z.maxLength(SUMMARY_SAMPLE_LIMIT)),
  });

/**
 * The digest of one UTC hour of one kind of alert for one project, posted after the hour when the hourly alert
 * budget ran out (see lambdas/domain/analytics/alert-budget.ts): how many alerts were posted before it did, how many
 * conditions were held back since, how many new names keys reported past their hourly limit, and a sample.
 */
const digestOf = <T extends z.ZodMiniType>(single: T) =>
  z.object({
    /** The UTC hour digested, YYYY-MM-DDTHH. */
    hour: z.string(),
    posted: z.int().check(z.nonnegative()),
    held: z.int().check(z.nonnegative()),
    untracked: z.int().check(z.nonnegative()),
    firstAt: z.int(),
    lastAt: z.int(),
    sample: z.array(single).check(z.maxLength(SUMMARY_SAMPLE_LIMIT)),
  });

export const EVENT_DATA = {
  version_deployed: VersionDeployedData,
  execution_drop: ExecutionDropData,
  new_executor: z.union([NewExecutorData, summaryOf(NewExecutorData), digestOf(NewExecutorData)]),
  key_abuse: z.union([KeyAbuseData, summaryOf(KeyAbuseData), digestOf(KeyAbuseData)]),
  clone_detected: z.union([CloneDetectedData, summaryOf(CloneDetectedData), digestOf(CloneDetectedData)]),
} as const satisfies Record<EventName, z.ZodMiniType>;

/** The events whose storms are summarized: those one batch can fire many of for one project. */
export const SUMMARIZED_EVENTS = ['new_executor', 'key_abuse', 'clone_detected'] as const;
export type SummarizedEventName = (typeof SUMMARIZED_EVENTS)[number];

/** The single occurrence a summary of `E` lists in its sample. */
export type SingleEventData<E extends SummarizedEventName> = {
  new_executor: z.infer<typeof NewExecutorData>;
  key_abuse: z.infer<typeof KeyAbuseData>;
  clone_detected: z.infer<typeof CloneDetectedData>;
}[E];

/** A summary of many `E` events. */
export type EventSummary<E extends SummarizedEventName> = { count: number; firstAt: number; lastAt: number; sample: SingleEventData<E>[] };

/** An hour's digest of `E` alerts. */
export type EventDigest<E extends SummarizedEventName> = {
  hour: string;
  posted: number;
  held: number;
  untracked: number;
  firstAt: number;
  lastAt: number;
  sample: SingleEventData<E>[];
};

/** Whether event data is an hour's digest (it counts held alerts). */
export const isDigest = <D extends object>(data: D): data is Extract<D, { held: unknown }> => 'held' in data;

/** Whether event data is a summary (it has a count and a sample) rather than one occurrence or a digest. */
export const isSummary = <D extends object>(data: D): data is Extract<D, { count: unknown; sample: unknown }> => 'sample' in data && !isDigest(data);

export type EventData<E extends EventName> = z.infer<(typeof EVENT_DATA)[E]>;

/** One occurrence of an event for a project, whatever made it. */
export type ProjectEvent = { [E in EventName]: { name: E; projectId: string; occurredAt: number; data: EventData<E> } }[EventName];

/** The events a detector fires from telemetry; `version_deployed` is fired by an upload instead. */
export type AnalyticsEventName = Exclude<EventName, 'version_deployed'>;

const eventSchema = <E extends EventName>(name: E) => z.object({ name: z.literal(name), projectId: z.string(), occurredAt: z.int(), data: EVENT_DATA[name] });

/** A ProjectEvent as it travels (stream, queue): checked again on arrival, because a queue carries whatever was put in it. */
export const ProjectEventSchema = z.discriminatedUnion('name', [
  eventSchema('version_deployed'),
  eventSchema('execution_drop'),
  eventSchema('new_executor'),
  eventSchema('key_abuse'),
  eventSchema('clone_detected'),
]);
