import type { LoaderTiming } from '#schemas/loader';
import type { CheckTiming, ConnectionReading, ExecutionTiming } from '#schemas/telemetry';

/**
 * Does the buyer's executor reuse a connection? (issue 32, docs/loader.md "Does the executor reuse a connection?")
 * Neither `game:HttpGet` nor an executor's `request` says, so the stub times its own script request and the next run
 * sends the figures (LoaderTiming). A request on a new HTTPS connection waits three round trips (TCP, TLS 1.3, the
 * request; four with TLS 1.2), one on a reused connection one, plus the server's time either way. Round-trip times
 * are unknown here, so only a ratio can tell: the previous request against the session's first answered alike
 * (a script body, or none), the request least likely to have found a connection open.
 */
export const CONNECTION_RULE = {
  /**
   * At most this share of the first's time: it skipped handshakes the first one paid, so it reused a connection.
   * With TLS ending in the Region (the direct URL), (R + s) / (3R + s) is 0.33 with no server time s, 0.5 with
   * s = R and 0.6 with s = 2R. Through the front door the handshakes end at a nearby edge and reuse saves only those
   * (the bench's model: 0.80 to 0.89 of a fresh run): such a request reads `unknown`, never `reused`.
   */
  reusedAtMost: 0.6,
  /**
   * At least this share: it cost what the first cost, so it opened a connection if the first did (or reused one if
   * the first did: a ratio cannot tell those apart). Above the 0.80 to 0.89 of a reused connection behind the edge.
   */
  newAtLeast: 0.95,
  /** A first request faster than this is judged on no ratio: whole milliseconds would be much of the difference. */
  minFirstMs: 20,
} as const;

/** What the figures say of the previous request's connection; `unknown` without both figures or between the bounds. */
export function previousConnection(timing: Pick<CheckTiming, 'previousRequestMs' | 'firstRequestMs'>): ConnectionReading {
  const { previousRequestMs: previous, firstRequestMs: first } = timing;
  if (previous === undefined || first === undefined || first < CONNECTION_RULE.minFirstMs) return 'unknown';
  const ratio = previous / first;
  if (ratio <= CONNECTION_RULE.reusedAtMost) return 'reused';
  if (ratio >= CONNECTION_RULE.newAtLeast) return 'new';
  return 'unknown';
}

/** The request's timing as a check's report keeps it (on the key item's `lastCheck`): the figures the stub sent. */
export function checkTimingOf(timing: LoaderTiming | undefined): CheckTiming | undefined {
  if (!timing) return undefined;
  return {
    runInSession: timing.run_in_session,
    ...(typeof timing.previous_request_ms === 'number' ? { previousRequestMs: timing.previous_request_ms } : {}),
    ...(typeof timing.first_request_ms === 'number' ? { firstRequestMs: timing.first_request_ms } : {}),
  };
}

/** An execution record's timing: the figures and what they say (previousConnection). */
export const executionTimingOf = (timing: CheckTiming): ExecutionTiming => ({ ...timing, previousConnection: previousConnection(timing) });
