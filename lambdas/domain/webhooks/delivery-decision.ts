/** How Discord answered a post, sorted by what the delivery does next. */
export type PostOutcome =
  | { kind: 'delivered'; status: number }
  /** 429: try again after `retryAfterSeconds` (undefined when Discord did not say). */
  | { kind: 'rate_limited'; retryAfterSeconds: number | undefined }
  /** The webhook no longer exists or its token is wrong: the config is dead. */
  | { kind: 'gone'; status: number; code: number | undefined }
  /** Any other 4xx, or a 3xx (redirects are not followed): the same post would be refused again. */
  | { kind: 'refused'; status: number; body: string }
  /** 5xx, timeout or network failure: worth another try later. */
  | { kind: 'failed'; reason: string };

/** Retry backoff: the message comes back after base × 2^(receives − 1) seconds, capped at 15 min, + up to 25 % jitter. */
export const RETRY_BASE_SECONDS = 10;
export const RETRY_MAX_SECONDS = 900;
/** SQS refuses a visibility timeout above 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 3600;
/** SQS delays a message at most 15 minutes (SendMessage DelaySeconds). */
export const MAX_DELAY_SECONDS = 900;
/**
 * A delivery Discord has kept answering 429 for this long goes to the DLQ: a notification a day late misleads
 * more than it helps, and a webhook rate limited for a day is not coming back by itself.
 */
export const RATE_LIMITED_GIVE_UP_SECONDS = 24 * 3600;

/** The 429s a delivery has met: how many, and when the first came (carried in the message, see DeliveryMessage). */
interface RateLimitHistory {
  times: number;
  since: number;
}

/** What the decision needs besides Discord's answer, read by the handler from the SQS record and its deps. */
export interface DeliveryAttempt {
  /** SQS's ApproximateReceiveCount: 1 on the first try. */
  receiveCount: number;
  retryBaseSeconds: number;
  /** A draw in [0, 1): the jitter, so messages that failed together do not all come back in the same second. */
  random: number;
  /** Unix seconds. */
  now: number;
  /** The 429s met before this attempt, none on a first try. */
  rateLimited?: RateLimitHistory;
}

/** A line for the handler to log, with the delivery's context added. */
interface DecisionLog {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

export type DeliveryDecision =
  /** Record the claim as sent, so a copy of the message is dropped. */
  | { action: 'mark_sent'; log: DecisionLog }
  /** Bring the message back in `afterSeconds` (whole seconds, within SQS's limit). */
  | { action: 'retry'; afterSeconds: number; reason: string; log: DecisionLog }
  /**
   * Send a copy delayed `delaySeconds` (1 to 900) carrying `rateLimited`, and delete this one: a 429 is Discord
   * saying "later", not a failure, so it must not spend the receives that move a message to the DLQ.
   */
  | { action: 'resend'; delaySeconds: number; rateLimited: RateLimitHistory; log: DecisionLog }
  /** Disable the webhook config: no retry. */
  | { action: 'disable_webhook'; log: DecisionLog }
  /** Set the message aside in the DLQ at once: no retry. */
  | { action: 'dead_letter'; reason: string; log: DecisionLog };

/**
 * What to do after Discord answered a post (the claim has already been released unless it was delivered):
 * - delivered: mark sent, so a redelivered copy is not posted twice;
 * - rate_limited: resend a copy delayed by Discord's `retry_after` (at least 1 s, since a 0 would hammer it, at most
 *   SQS's 15 min), else by the backoff of the 429s met so far, plus jitter, so 429s never reach maxReceiveCount; a
 *   delivery rate limited for RATE_LIMITED_GIVE_UP_SECONDS goes to the DLQ instead;
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
    case 'rate_limited': {
      const rateLimited = { times: (attempt.rateLimited?.times ?? 0) + 1, since: attempt.rateLimited?.since ?? attempt.now };
      const fields = { retryAfterSeconds: outcome.retryAfterSeconds, rateLimitedTimes: rateLimited.times };
      if (attempt.now - rateLimited.since >= RATE_LIMITED_GIVE_UP_SECONDS) {
        const reason = `Rate limited by Discord ${rateLimited.times} times over ${Math.floor((attempt.now - rateLimited.since) / 3600)} h`;
        return { action: 'dead_letter', reason, log: { level: 'error', message: 'Rate limited by Discord for too long; moved to the DLQ', fields } };
      }
      const wait = Math.max(1, outcome.retryAfterSeconds ?? backoffBase(rateLimited.times, attempt.retryBaseSeconds));
      return {
        action: 'resend',
        delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.ceil(wait * (1 + 0.25 * attempt.random))),
        rateLimited,
        log: { level: 'warn', message: 'Rate limited by Discord; sent again delayed', fields },
      };
    }
    case 'gone':
      return {
        action: 'disable_webhook',
        log: {
          level: 'warn',
          message: 'Discord no longer knows this webhook; config disabled, not retried',
          fields: { status: outcome.status, code: outcome.code },
        },
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

/** base × 2^(n − 1), capped at 15 min. */
const backoffBase = (n: number, retryBaseSeconds: number) => Math.min(RETRY_MAX_SECONDS, retryBaseSeconds * 2 ** Math.max(0, n - 1));

function backoffSeconds({ receiveCount, retryBaseSeconds, random }: DeliveryAttempt): number {
  return Math.ceil(backoffBase(receiveCount, retryBaseSeconds) * (1 + 0.25 * random));
}

/** A delay as SQS's ChangeMessageVisibility takes it: whole seconds from 0 to 12 h. */
export function visibilitySeconds(seconds: number): number {
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(seconds)));
}
