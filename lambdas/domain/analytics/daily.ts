import type { TelemetryStore } from '#domain/ports';
import { addDays } from '#domain/time';
import { detectExecutionDrop } from './detectors';
import { type FiredEvent, fireEvents } from './ingest';

export interface DailyDetectionResult {
  /** The UTC day judged: the day before `today`. */
  date: string;
  /** Projects that had executions the day before `date`: the only ones that can drop. */
  projectsJudged: number;
  events: FiredEvent[];
}

/**
 * The daily detector (execution_drop, see detectExecutionDrop): run shortly after UTC midnight with `today`
 * the new day, it judges the day that just ended against the one before it, for every project that had
 * executions then. Safe to rerun: each project fires at most once per judged day.
 */
export async function runDailyDetection(store: TelemetryStore, today: string, now: number): Promise<DailyDetectionResult> {
  const date = addDays(today, -1);
  const [executions, previous] = await Promise.all([store.executionsOn(date), store.executionsOn(addDays(today, -2))]);
  const drops = [...previous].flatMap(([projectId, previousExecutions]) => {
    const event = detectExecutionDrop({ projectId, date, executions: executions.get(projectId) ?? 0, previousExecutions }, now);
    return event ? [event] : [];
  });
  return { date, projectsJudged: previous.size, events: await fireEvents(store, drops, now) };
}
