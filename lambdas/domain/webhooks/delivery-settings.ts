/**
 * Numbers the CDK construct and the local stack share, so the local queue behaves like the deployed one.
 */

/** The delivery function's timeout: a batch of 10 posts in parallel, each cut off after 10 s. */
export const DELIVERY_TIMEOUT_SECONDS = 30;

export const DELIVERY_QUEUE = {
  /** Six times the delivery function's timeout, as AWS advises for a Lambda-consumed queue. */
  visibilityTimeoutSeconds: 6 * DELIVERY_TIMEOUT_SECONDS,
  /**
   * Receives before SQS moves a message to the DLQ. With the 10 s doubling backoff, 8 receives cover about
   * 20 minutes of Discord failing. A 429 spends none: the delivery sends a delayed copy and deletes the message.
   */
  maxReceiveCount: 8,
  batchSize: 10,
} as const;

export const FANOUT_STREAM = {
  batchSize: 25,
  /** Retries of a failing batch (bisected on each error) before its records go to the on-failure queue. */
  retryAttempts: 5,
  /** A record still not fanned out after an hour is set aside: a notification that late misleads more than it helps. */
  maxRecordAgeSeconds: 3600,
  timeoutSeconds: 30,
} as const;
