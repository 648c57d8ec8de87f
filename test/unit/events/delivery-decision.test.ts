import { describe, expect, it } from 'vitest';
import {
  type DeliveryAttempt,
  decideDelivery,
  MAX_DELAY_SECONDS,
  type PostOutcome,
  RATE_LIMITED_GIVE_UP_SECONDS,
  RETRY_BASE_SECONDS,
  RETRY_MAX_SECONDS,
} from '#domain/webhooks/delivery-decision';

const NOW = 1_700_000_000;
const FIRST_TRY: DeliveryAttempt = { receiveCount: 1, retryBaseSeconds: RETRY_BASE_SECONDS, random: 0, now: NOW };
/** The first 429 of a delivery: counted once, from now. */
const FIRST_429 = { times: 1, since: NOW };
const JUST_BELOW_ONE = 0.999_999;
const REFUSAL = '{"message":"Cannot send an empty message","code":50006}';

describe('decideDelivery', () => {
  it.each<[string, PostOutcome, Partial<DeliveryAttempt>, object]>([
    ['delivered: mark sent', { kind: 'delivered', status: 200 }, {}, { action: 'mark_sent' }],
    [
      '429 with retry_after: a copy delayed by its seconds, rounded up',
      { kind: 'rate_limited', retryAfterSeconds: 2.5 },
      {},
      { action: 'resend', delaySeconds: 3, rateLimited: FIRST_429 },
    ],
    [
      '429 without retry_after: the backoff of its 429s so far',
      { kind: 'rate_limited', retryAfterSeconds: undefined },
      { rateLimited: { times: 2, since: NOW - 60 } },
      { action: 'resend', delaySeconds: 40, rateLimited: { times: 3, since: NOW - 60 } },
    ],
    [
      '429 without retry_after: its receive count does not matter',
      { kind: 'rate_limited', retryAfterSeconds: undefined },
      { receiveCount: 7 },
      { action: 'resend', delaySeconds: 10, rateLimited: FIRST_429 },
    ],
    [
      '429 with retry_after below 1 s: 1 s',
      { kind: 'rate_limited', retryAfterSeconds: 0.2 },
      {},
      { action: 'resend', delaySeconds: 1, rateLimited: FIRST_429 },
    ],
    ['429 with retry_after 0: 1 s', { kind: 'rate_limited', retryAfterSeconds: 0 }, {}, { action: 'resend', delaySeconds: 1, rateLimited: FIRST_429 }],
    [
      '429 with retry_after past 15 min: the SQS delay cap',
      { kind: 'rate_limited', retryAfterSeconds: 100_000 },
      {},
      { action: 'resend', delaySeconds: MAX_DELAY_SECONDS, rateLimited: FIRST_429 },
    ],
    [
      '429 with retry_after, random just below 1: 25 % more so a burst spreads out',
      { kind: 'rate_limited', retryAfterSeconds: 2 },
      { random: JUST_BELOW_ONE },
      { action: 'resend', delaySeconds: 3, rateLimited: FIRST_429 },
    ],
    [
      '429 number 21: still a delayed copy, never the DLQ by count',
      { kind: 'rate_limited', retryAfterSeconds: 1 },
      { rateLimited: { times: 20, since: NOW - 600 } },
      { action: 'resend', delaySeconds: 1, rateLimited: { times: 21, since: NOW - 600 } },
    ],
    [
      '429 just inside a day of 429s: a delayed copy',
      { kind: 'rate_limited', retryAfterSeconds: 1 },
      { rateLimited: { times: 90, since: NOW - RATE_LIMITED_GIVE_UP_SECONDS + 1 } },
      { action: 'resend', delaySeconds: 1, rateLimited: { times: 91, since: NOW - RATE_LIMITED_GIVE_UP_SECONDS + 1 } },
    ],
    [
      '429 after a day of 429s: the DLQ',
      { kind: 'rate_limited', retryAfterSeconds: 1 },
      { rateLimited: { times: 90, since: NOW - RATE_LIMITED_GIVE_UP_SECONDS } },
      { action: 'dead_letter', reason: 'Rate limited by Discord 91 times over 24 h' },
    ],
    ['gone: disable the webhook', { kind: 'gone', status: 404, code: 10015 }, {}, { action: 'disable_webhook' }],
    [
      'refused: DLQ with status and body',
      { kind: 'refused', status: 400, body: REFUSAL },
      {},
      { action: 'dead_letter', reason: `Discord answered 400: ${REFUSAL}` },
    ],
    [
      'failed at receive 1: the base',
      { kind: 'failed', reason: 'HTTP 503: ' },
      { receiveCount: 1 },
      { action: 'retry', afterSeconds: 10, reason: 'HTTP 503: ' },
    ],
    [
      'failed at receive 2: twice the base',
      { kind: 'failed', reason: 'timed out' },
      { receiveCount: 2 },
      { action: 'retry', afterSeconds: 20, reason: 'timed out' },
    ],
    [
      'failed at receive 5: 2^4 × the base',
      { kind: 'failed', reason: 'timed out' },
      { receiveCount: 5 },
      { action: 'retry', afterSeconds: 160, reason: 'timed out' },
    ],
    [
      'failed at receive 8: 1280 s capped',
      { kind: 'failed', reason: 'timed out' },
      { receiveCount: 8 },
      { action: 'retry', afterSeconds: RETRY_MAX_SECONDS, reason: 'timed out' },
    ],
    [
      'failed with a 1 s base (the local stack)',
      { kind: 'failed', reason: 'timed out' },
      { receiveCount: 3, retryBaseSeconds: 1 },
      { action: 'retry', afterSeconds: 4, reason: 'timed out' },
    ],
    [
      'failed, random just below 1: 25 % more, rounded up',
      { kind: 'failed', reason: 'timed out' },
      { random: JUST_BELOW_ONE },
      { action: 'retry', afterSeconds: 13, reason: 'timed out' },
    ],
    [
      'failed at the cap, random just below 1: jitter on top of the cap',
      { kind: 'failed', reason: 'timed out' },
      { receiveCount: 8, random: JUST_BELOW_ONE },
      { action: 'retry', afterSeconds: 1125, reason: 'timed out' },
    ],
    [
      '429 without retry_after, random just below 1: the jittered backoff',
      { kind: 'rate_limited', retryAfterSeconds: undefined },
      { random: JUST_BELOW_ONE },
      { action: 'resend', delaySeconds: 13, rateLimited: FIRST_429 },
    ],
  ])('%s', (_case, outcome, attempt, expected) => {
    const { log: _log, ...next } = decideDelivery(outcome, { ...FIRST_TRY, ...attempt });
    expect(next).toEqual(expected);
  });

  it.each<[string, PostOutcome, object]>([
    ['delivered', { kind: 'delivered', status: 204 }, { level: 'info', message: 'Delivered', fields: { status: 204 } }],
    [
      'rate_limited',
      { kind: 'rate_limited', retryAfterSeconds: 2.5 },
      { level: 'warn', message: 'Rate limited by Discord; sent again delayed', fields: { retryAfterSeconds: 2.5, rateLimitedTimes: 1 } },
    ],
    [
      'gone',
      { kind: 'gone', status: 401, code: 50027 },
      { level: 'warn', message: 'Discord no longer knows this webhook; config disabled, not retried', fields: { status: 401, code: 50027 } },
    ],
    [
      'refused',
      { kind: 'refused', status: 403, body: REFUSAL },
      { level: 'error', message: 'Discord refused the post; moved to the DLQ, not retried', fields: { status: 403, body: REFUSAL } },
    ],
    [
      'failed',
      { kind: 'failed', reason: 'network error ECONNRESET' },
      { level: 'warn', message: 'Post failed; will retry', fields: { reason: 'network error ECONNRESET', receiveCount: 4 } },
    ],
  ])('%s: says so in the log line the handler writes', (_kind, outcome, log) => {
    expect(decideDelivery(outcome, { ...FIRST_TRY, receiveCount: 4 }).log).toEqual(log);
  });
});
