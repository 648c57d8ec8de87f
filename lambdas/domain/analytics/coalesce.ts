import { createHash } from 'node:crypto';
import {
  type AnalyticsEventName,
  type EventSummary,
  type SingleEventData,
  SUMMARIZED_EVENTS,
  SUMMARY_SAMPLE_LIMIT,
  type SummarizedEventName,
} from '#schemas/events';
import type { AnalyticsEvent } from './model';

/**
 * Alert storms: one ingest batch can fire hundreds of events of one kind for one project (500 executors never seen
 * before, a leaked dump tried against 40 keys, a wave of modified copies). Posting each would flood the publisher's
 * channel and Discord's rate limit alike, so more than COALESCE_ABOVE of one name for one project in one batch
 * become ONE summary event (the count, the first and last time, and a sample). Each condition is still remembered
 * under its own dedup key, so a retried batch fires neither the conditions nor the summary again, and a later
 * condition with a new key fires as usual.
 */

/** More than this many new events of one name for one project in one batch are summarized (6 are, 5 are not). */
export const COALESCE_ABOVE = 5;

const isSummarized = (name: AnalyticsEventName): name is SummarizedEventName => (SUMMARIZED_EVENTS as readonly string[]).includes(name);

/** The events to fire one by one, and the storms (more than COALESCE_ABOVE of one summarized name for one project) to summarize. */
export function groupStorms(events: readonly AnalyticsEvent[]): { singles: AnalyticsEvent[]; storms: AnalyticsEvent[][] } {
  const groups = new Map<string, AnalyticsEvent[]>();
  for (const event of events) {
    const id = JSON.stringify([event.projectId, event.name]);
    const group = groups.get(id);
    if (group) group.push(event);
    else groups.set(id, [event]);
  }
  const singles: AnalyticsEvent[] = [];
  const storms: AnalyticsEvent[][] = [];
  for (const group of groups.values()) {
    const [{ name }] = group as [AnalyticsEvent];
    if (group.length > COALESCE_ABOVE && isSummarized(name)) storms.push(group);
    else singles.push(...group);
  }
  return { singles, storms };
}

const byTime = (a: AnalyticsEvent, b: AnalyticsEvent) => a.occurredAt - b.occurredAt || (a.dedupKey < b.dedupKey ? -1 : a.dedupKey > b.dedupKey ? 1 : 0);

/**
 * The one event standing for `events` (all of one summarized name and one project, at least one): dated at the
 * first of them, its sample the first SUMMARY_SAMPLE_LIMIT in time order. Its dedup key is derived from the set of
 * conditions it stands for, so the same storm retried makes the same summary (written once), while any other
 * storm, however alike, makes a summary of its own.
 */
export function summarize(events: readonly AnalyticsEvent[]): AnalyticsEvent {
  const ordered = [...events].sort(byTime);
  const first = ordered[0];
  const last = ordered.at(-1);
  if (!first || !last || !isSummarized(first.name)) throw new Error('summarize takes at least one event of a summarized kind');
  const digest = createHash('sha256')
    .update(JSON.stringify(ordered.map((event) => event.dedupKey).sort()))
    .digest('hex');
  const data: EventSummary<SummarizedEventName> = {
    count: ordered.length,
    firstAt: first.occurredAt,
    lastAt: last.occurredAt,
    sample: ordered.slice(0, SUMMARY_SAMPLE_LIMIT).map((event) => event.data as SingleEventData<SummarizedEventName>),
  };
  // The summary of one name, though the type system sees the summaries of the three names as one union.
  return {
    name: first.name,
    projectId: first.projectId,
    dedupKey: `summary#${digest.slice(0, 32)}`,
    occurredAt: first.occurredAt,
    data: data as AnalyticsEvent['data'],
  };
}
