import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { unixSeconds } from '#domain/model';
import { createDocumentClient, tableNameFromEnv } from '#store/client';
import { DynamoDeliveryStore } from '#store/delivery-store';
import { type DeliveryMessage, parseDeliveryMessage } from './delivery-message';
import { postEmbeds, type PostOutcome, REQUEST_TIMEOUT_MS } from './discord-client';
import { DEFAULT_DISCORD_API_BASE, executeWebhookUrl, parseDiscordWebhookUrl, redactWebhookUrl } from './discord-webhook-url';
import { buildEmbed } from './embeds';
import type { DeliveryStore, InFlightMessages } from './ports';
import { SqsInFlightMessages } from './sqs-queue';

/** Retry backoff: the message comes back after base × 2^(receives − 1) seconds (+ up to 25 % jitter), at most 15 min. */
export const RETRY_BASE_SECONDS = 10;
export const RETRY_MAX_SECONDS = 900;
/** SQS refuses a visibility timeout above 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 3600;

export interface DeliveryDeps {
  store: DeliveryStore;
  inFlight: InFlightMessages;
  logger: Logger;
  /** Where posts go: Discord's API (`https://discord.com/api/v10`) or the local stand-in. */
  discordApiBase: string;
  /** A 'sending' claim older than this belongs to a dead attempt: the queue's visibility timeout. */
  claimStaleAfterSeconds: number;
  now?: () => number;
  requestTimeoutMs?: number;
  retryBaseSeconds?: number;
  random?: () => number;
}

/** Thrown to report a message failed so the queue brings it back; its visibility has already been set. */
class RetryLater extends Error {
  override readonly name = 'RetryLater';
}

/**
 * The queue consumer: one message is one event for one webhook. It builds the embed and posts it to Discord
 * once, whatever the queue or the stream redelivers:
 * - the delivery id is claimed in the table before the post (a 'sent' claim turns a copy into a no-op);
 * - 2xx: done; 429: back after Discord's `retry_after`; 404 (or Discord's dead-webhook codes): the config is
 *   disabled, no retry; other 4xx: set aside in the DLQ at once, since the same post would be refused again
 *   and the DLQ (with its alarm) is where an operator looks; 5xx, timeout, network error: back after a backoff
 *   that grows with the receive count, until the queue's maxReceiveCount moves it to the DLQ;
 * - a URL that is not a Discord webhook URL is never called: logged as a rejected config and dropped.
 * Logs name a webhook by its redacted URL; the token never appears in them.
 */
export function createDeliveryHandler(deps: DeliveryDeps) {
  const now = deps.now ?? (() => unixSeconds());
  const random = deps.random ?? Math.random;
  const { logger, store, inFlight } = deps;

  const backoffSeconds = (receiveCount: number) => {
    const base = Math.min(RETRY_MAX_SECONDS, (deps.retryBaseSeconds ?? RETRY_BASE_SECONDS) * 2 ** Math.max(0, receiveCount - 1));
    return Math.ceil(base * (1 + 0.25 * random()));
  };

  const retryLater = async (record: SQSRecord, seconds: number, why: string): Promise<never> => {
    const visibility = Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(seconds)));
    await inFlight.changeVisibility(record.receiptHandle, visibility);
    throw new RetryLater(`${why}; retry in ${visibility} s`);
  };

  const deliver = async (record: SQSRecord): Promise<void> => {
    const message = parseDeliveryMessage(record.body);
    if (!message) {
      logger.error('Queue message is not a delivery message; moved to the DLQ', { messageId: record.messageId });
      await inFlight.deadLetter(record.body, 'malformed delivery message');
      return;
    }
    const context = {
      deliveryId: message.deliveryId,
      event: message.event.name,
      projectId: message.project.id,
      webhookId: message.webhook.id,
      url: redactWebhookUrl(message.webhook.url),
    };
    const discordWebhook = parseDiscordWebhookUrl(message.webhook.url);
    if (!discordWebhook) {
      logger.warn('Rejected webhook config: the URL is not a Discord webhook URL; not called', context);
      return;
    }
    const webhook = await store.webhookState(message.project.id, message.webhook.id);
    if (webhook?.enabled !== 1) {
      logger.info('Webhook disabled or removed since the event was queued; not called', context);
      return;
    }

    const claim = await store.claimDelivery(message.deliveryId, now(), deps.claimStaleAfterSeconds);
    if (claim.outcome === 'sent') {
      logger.info('Delivery already sent; duplicate dropped', context);
      return;
    }
    if (claim.outcome === 'held') return retryLater(record, claim.retryInSeconds, 'Delivery claimed by another attempt');

    const outcome = await postEmbeds(
      executeWebhookUrl(deps.discordApiBase, discordWebhook),
      { embeds: [buildEmbed(message.event, message.project.name)] },
      deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    );
    if (outcome.kind === 'delivered') {
      // The post happened: failing the message now would post it twice, so a claim that cannot be marked is only logged.
      const marked = await store.markSent(message.deliveryId, claim.token, now()).catch((error: unknown) => {
        logger.error('Delivered, but the claim could not be marked sent', { ...context, error: errorText(error) });
        return true;
      });
      if (!marked) logger.warn('Delivered, but the claim was taken over meanwhile', context);
      logger.info('Delivered', { ...context, status: outcome.status });
      return;
    }
    await store.releaseClaim(message.deliveryId, claim.token);
    await settleFailure(record, message, outcome, context);
  };

  const settleFailure = async (
    record: SQSRecord,
    message: DeliveryMessage,
    outcome: Exclude<PostOutcome, { kind: 'delivered' }>,
    context: Record<string, string>,
  ): Promise<void> => {
    const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
    switch (outcome.kind) {
      case 'rate_limited': {
        const wait = outcome.retryAfterSeconds ?? backoffSeconds(receiveCount);
        logger.warn('Rate limited by Discord', { ...context, retryAfterSeconds: outcome.retryAfterSeconds });
        return retryLater(record, Math.max(1, wait), 'Rate limited');
      }
      case 'gone': {
        const disabled = await store.disableWebhook(message.project.id, message.webhook.id, message.webhook.url, now());
        logger.warn('Discord no longer knows this webhook; config disabled, not retried', { ...context, status: outcome.status, code: outcome.code, disabled });
        return;
      }
      case 'refused': {
        logger.error('Discord refused the post; moved to the DLQ, not retried', { ...context, status: outcome.status, body: outcome.body });
        await inFlight.deadLetter(record.body, `Discord answered ${outcome.status}: ${outcome.body}`);
        return;
      }
      case 'failed': {
        logger.warn('Post failed; will retry', { ...context, reason: outcome.reason, receiveCount });
        return retryLater(record, backoffSeconds(receiveCount), outcome.reason);
      }
    }
  };

  return async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    const processor = new BatchProcessor(EventType.SQS, { logger });
    const handleRecord = async (record: SQSRecord) => {
      try {
        await deliver(record);
      } catch (error) {
        if (!(error instanceof RetryLater)) logger.error('Delivery failed unexpectedly; will retry', { messageId: record.messageId, error: errorText(error) });
        throw error;
      }
    };
    return processPartialResponse(event, handleRecord, processor, { context, throwOnFullBatchFailure: false });
  };
}

/** An error's name and message only: SDK errors can carry request details, and nothing here may print a URL. */
const errorText = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

let fromEnv: ReturnType<typeof createDeliveryHandler> | undefined;

/** The deployed handler: TABLE_NAME, QUEUE_URL, DEAD_LETTER_QUEUE_URL, CLAIM_STALE_AFTER_SECONDS, DISCORD_API_BASE. */
export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  fromEnv ??= createDeliveryHandler(depsFromEnv(process.env));
  return fromEnv(event, context);
};

function depsFromEnv(env: NodeJS.ProcessEnv): DeliveryDeps {
  const required = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const sqs = new SQSClient({});
  return {
    store: new DynamoDeliveryStore(createDocumentClient(), tableNameFromEnv(env)),
    inFlight: new SqsInFlightMessages(sqs, required('QUEUE_URL'), required('DEAD_LETTER_QUEUE_URL')),
    logger: new Logger({ serviceName: 'webhook-delivery' }),
    discordApiBase: env.DISCORD_API_BASE || DEFAULT_DISCORD_API_BASE,
    claimStaleAfterSeconds: Number(required('CLAIM_STALE_AFTER_SECONDS')),
  };
}
