import type { TelemetryStore } from '#domain/ports';
import { HOUR_SECONDS, hourStart } from '#domain/time';
import { digestEvent } from './alert-budget';
import { type FiredEvent, mapBounded } from './ingest';

export interface AlertDigestResult {
  /** Start of the UTC hour digested. */
  hourStart: number;
  events: FiredEvent[];
}

/**
 * The hourly alert digest: run shortly after an hour ends, it posts one event per project and event name whose
 * alerts of that hour went past the budget (see alert-budget.ts). Safe to rerun: a digest's dedup key names its
 * hour, so each fires once.
 */
export async function runAlertDigest(store: TelemetryStore, scheduledAt: number, now: number): Promise<AlertDigestResult> {
  const digested = hourStart(scheduledAt) - HOUR_SECONDS;
  const hours = await store.heldAlerts(digested);
  const written = await mapBounded(hours, async (hour) => {
    const event = digestEvent(hour);
    return (await store.putEvent(event, now))
      ? { name: event.name, projectId: event.projectId, dedupKey: event.dedupKey, summarizes: hour.held + hour.untracked }
      : undefined;
  });
  return { hourStart: digested, events: written.filter((event) => event !== undefined) };
}
