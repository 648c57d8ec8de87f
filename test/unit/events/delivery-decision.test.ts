import { describe, expect, it } from 'vitest';
import { type DeliveryAttempt, decideDelivery, RETRY_BASE_SECONDS, RETRY_MAX_SECONDS } from '#events/delivery-decision';
import type { PostOutcome } from '#events/discord-client';

const FIRST_TRY: DeliveryAttempt = { receiveCount: 1, retryBaseSeconds: RETRY_BASE_SECONDS, random: 0 };
const JUST_BELOW_ONE = 0.999_999;
const TWELVE_HOURS = 12 * 3600;
const REFUSAL = '{"message":"Cannot send an empty message","code":50006}';

describe('decideDelivery', () => {
  it.each<[string, PostOutcome, Partial<DeliveryAttempt>, object]>([
    ['delivered: mark sent', { kind: 'delivered', status: 200 }, {}, { action: 'mark_sent' }],
    ['429 with retry_after: its seconds, rounded up', { kind: 'rate_limited', retryAfterSeconds: 2.5 }, {}, { action: 'retry', afterSeconds: 3, reason: 'Rate limited' }],
    ['429 without retry_after: the backoff of its receive count', { kind: 'rate_limited', retryAfterSeconds: undefined }, { receiveCount: 3 }, { action: 'retry', afterSeconds: 40, reason: 'Rate limited' }],
    ['429 with retry_after below 1 s: 1 s', { kind: 'rate_limited', retryAfterSeconds: 0.2 }, {}, { action: 'retry', afterSeconds: 1, reason: 'Rate limited' }],
    ['429 with retry_after 0: 1 s', { kind: 'rate_limited', retryAfterSeconds: 0 }, {}, { action: 'retry', afterSeconds: 1, reason: 'Rate limited' }],
    ['429 with retry_after past 12 h: the visibility cap', { kind: 'rate_limited', retryAfterSeconds: 100_000 }, {}, { action: 'retry', afterSeconds: TWELVE_HOURS, reason: 'Rate limited' }],
    ['gone: disable the webhook', { kind: 'gone', status: 404, code: 10015 }, {}, { action: 'disable_webhook' }],
    ['refused: DLQ with status and body', { kind: 'refused', status: 400, body: REFUSAL }, {}, { action: 'dead_letter', reason: `Discord answered 400: ${REFUSAL}` }],
    ['failed at receive 1: the base', { kind: 'failed', reason: 'HTTP 503: ' }, { receiveCount: 1 }, { action: 'retry', afterSeconds: 10, reason: 'HTTP 503: ' }],
    ['failed at receive 2: twice the base', { kind: 'failed', reason: 'timed out' }, { receiveCount: 2 }, { action: 'retry', afterSeconds: 20, reason: 'timed out' }],
    ['failed at receive 5: 2^4 × the base', { kind: 'failed', reason: 'timed out' }, { receiveCount: 5 }, { action: 'retry', afterSeconds: 160, reason: 'timed out' }],
    ['failed at receive 8: 1280 s capped', { kind: 'failed', reason: 'timed out' }, { receiveCount: 8 }, { action: 'retry', afterSeconds: RETRY_MAX_SECONDS, reason: 'timed out' }],
    ['failed with a 1 s base (the local stack)', { kind: 'failed', reason: 'timed out' }, { receiveCount: 3, retryBaseSeconds: 1 }, { action: 'retry', afterSeconds: 4, reason: 'timed out' }],
    ['failed, random just below 1: 25 % more, rounded up', { kind: 'failed', reason: 'timed out' }, { random: JUST_BELOW_ONE }, { action: 'retry', afterSeconds: 13, reason: 'timed out' }],
    ['failed at the cap, random just below 1: jitter on top of the cap', { kind: 'failed', reason: 'timed out' }, { receiveCount: 8, random: JUST_BELOW_ONE }, { action: 'retry', afterSeconds: 1125, reason: 'timed out' }],
    ['429 without retry_after, random just below 1: the jittered backoff', { kind: 'rate_limited', retryAfterSeconds: undefined }, { random: JUST_BELOW_ONE }, { action: 'retry', afterSeconds: 13, reason: 'Rate limited' }],
  ])('%s', (_case, outcome, attempt, expected) => {
    const { log: _log, ...next } = decideDelivery(outcome, { ...FIRST_TRY, ...attempt });
    expect(next).toEqual(expected);
  });

  it.each<[string, PostOutcome, object]>([
    ['delivered', { kind: 'delivered', status: 204 }, { level: 'info', message: 'Delivered', fields: { status: 204 } }],
    ['rate_limited', { kind: 'rate_limited', retryAfterSeconds: 2.5 }, { level: 'warn', message: 'Rate limited by Discord', fields: { retryAfterSeconds: 2.5 } }],
    ['gone', { kind: 'gone', status: 401, code: 50027 }, { level: 'warn', message: 'Discord no longer knows this webhook; config disabled, not retried', fields: { status: 401, code: 50027 } }],
    ['refused', { kind: 'refused', status: 403, body: REFUSAL }, { level: 'error', message: 'Discord refused the post; moved to the DLQ, not retried', fields: { status: 403, body: REFUSAL } }],
    ['failed', { kind: 'failed', reason: 'network error ECONNRESET' }, { level: 'warn', message: 'Post failed; will retry', fields: { reason: 'network error ECONNRESET', receiveCount: 4 } }],
  ])('%s: says so in the log line the handler writes', (_kind, outcome, log) => {
    expect(decideDelivery(outcome, { ...FIRST_TRY, receiveCount: 4 }).log).toEqual(log);
  });
});
