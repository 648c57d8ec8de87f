import type { PostOutcome } from './discord-client';

/** Retry backoff: the message comes back after base × 2^(receives − 1) seconds, capped at 15 min, + up to 25 % jitter. */
export const RETRY_BASE_SECONDS = 10;
export const RETRY_MAX_SECONDS = 900;
/** SQS refuses a visibility timeout above 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 3600;

/** What the decision needs besides Discord's answer, read by the handler from the SQS record and its deps. */
export interface DeliveryAttempt {
  /** SQS's ApproximateReceiveCount: 1 on the first try. */
  receiveCount: number;
  retryBaseSeconds: number;
  /** A draw in [0, 1): the jitter, so messages that failed together do not all come back in the same second. */
  random: number;
}

/** A line for the handler to log, with the delivery's context added. */
export interface DecisionLog {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

export type DeliveryDecision =
  /** Record the claim as sent, so a copy of the message is dropped. */
  | { action: 'mark_sent'; log: DecisionLog }
  /** Bring the message back in `afterSeconds` (whole seconds, within SQS's limit). */
  | { action: 'retry'; afterSeconds: number; reason: string; log: DecisionLog }
  /** Disable the webhook config: no retry. */
  | { action: 'disable_webhook'; log: DecisionLog }
  /** Set the message aside in the DLQ at once: no retry. */
  | { action: 'dead_letter'; reason: string; log: DecisionLog };

/**
 * What to do after Discord answered a post (the claim has already been released unless it was delivered):
 * - delivered: mark sent, so a redelivered copy is not posted twice;
 * - rate_limited: retry after Discord's `retry_after`, at least 1 s (a 0 would hammer it), else after the backoff;
 * - gone: Discord will never accept posts to this webhook again, so its config is disabled and nothing is retried;
 * - refused: the same post would be refused again, so it goes to the DLQ (where the alarm and the operator look)
 *   instead of burning the receives;
 * - failed (5xx, timeout, network): retry after a backoff that doubles with each receive, until the queue's
 *   maxReceiveCount moves it to the DLQ.
 */
export function decideDelivery(outcome: PostOutcome, attempt: DeliveryAttempt): DeliveryDecision {
  switch (outcome.kind) {
    case 'delivered':
      return { action: 'mark_sent', log: { level: 'info', message: 'Delivered', fields: { status: outcome.status } } };
    case 'rate_limited':
      return {
        action: 'retry',
        afterSeconds: visibilitySeconds(Math.max(1, outcome.retryAfterSeconds ?? backoffSeconds(attempt))),
        reason: 'Rate limited',
        log: { level: 'warn', message: 'Rate limited by Discord', fields: { retryAfterSeconds: outcome.retryAfterSeconds } },
      };
    case 'gone':
      return {
        action: 'disable_webhook',
        log: { level: 'warn', message: 'Discord no longer knows this webhook; config disabled, not retried', fields: { status: outcome.status, code: outcome.code } },
      };
    case 'refused':
      return {
        action: 'dead_letter',
        reason: `Discord answered ${outcome.status}: ${outcome.body}`,
        log: { level: 'error', message: 'Discord refused the post; moved to the DLQ, not retried', fields: { status: outcome.status, body: outcome.body } },
      };
    case 'failed':
      return {
        action: 'retry',
        afterSeconds: visibilitySeconds(backoffSeconds(attempt)),
        reason: outcome.reason,
        log: { level: 'warn', message: 'Post failed; will retry', fields: { reason: outcome.reason, receiveCount: attempt.receiveCount } },
      };
  }
}

function backoffSeconds({ receiveCount, retryBaseSeconds, random }: DeliveryAttempt): number {
  const base = Math.min(RETRY_MAX_SECONDS, retryBaseSeconds * 2 ** Math.max(0, receiveCount - 1));
  return Math.ceil(base * (1 + 0.25 * random));
}

/** A delay as SQS's ChangeMessageVisibility takes it: whole seconds from 0 to 12 h. */
export function visibilitySeconds(seconds: number): number {
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(seconds)));
}
