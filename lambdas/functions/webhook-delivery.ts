import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { postEmbeds, REQUEST_TIMEOUT_MS } from '#adapters/discord-client';
import { SqsInFlightMessages } from '#adapters/sqs-queue';
import { unixSeconds } from '#domain/model';
import type { DeliveryStore } from '#domain/ports';
import { decideDelivery, RETRY_BASE_SECONDS, visibilitySeconds } from '#domain/webhooks/delivery-decision';
import { parseDeliveryMessage } from '#domain/webhooks/delivery-message';
import { executeWebhookUrl, parseDiscordWebhookUrl, redactWebhookUrl } from '#domain/webhooks/discord-webhook-url';
import { embedMessage } from '#domain/webhooks/embeds';
import type { InFlightMessages } from '#domain/webhooks/ports';
import { awsLogger, awsStores, lazyHandler, settings } from '#runtime/aws';
import { awsSqs } from '#runtime/aws-sqs';

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
 * - what follows Discord's answer (mark sent, retry, resend delayed after a 429, disable the config, DLQ) is
 *   `decideDelivery`'s rule;
 * - the webhook's URL is read from its config at delivery time (the message carries only its id): a disabled or
 *   removed config is not called, and a URL that is not a Discord webhook URL is never called (logged as a
 *   rejected config and dropped).
 * Logs name a webhook by its id and redacted URL; the token never appears in them, nor in any queue message.
 */
export function createDeliveryHandler(deps: DeliveryDeps) {
  const now = deps.now ?? (() => unixSeconds());
  const random = deps.random ?? Math.random;
  const { logger, store, inFlight } = deps;

  /** `seconds` comes from `visibilitySeconds`: whole and within SQS's 12 h. */
  const retryLater = async (record: SQSRecord, seconds: number, why: string): Promise<never> => {
    await inFlight.changeVisibility(record.receiptHandle, seconds);
    throw new RetryLater(`${why}; retry in ${seconds} s`);
  };

  const deliver = async (record: SQSRecord): Promise<void> => {
    const message = parseDeliveryMessage(record.body);
    if (!message) {
      logger.error('Queue message is not a delivery message; moved to the DLQ', { messageId: record.messageId });
      await inFlight.deadLetter(record.body, 'malformed delivery message');
      return;
    }
    const named = {
      deliveryId: message.deliveryId,
      event: message.event.name,
      projectId: message.project.id,
      webhookId: message.webhook.id,
    };
    // The URL is read here, not carried by the message: a config disabled, removed or changed since is honoured.
    const webhook = await store.webhookState(message.project.id, message.webhook.id);
    if (webhook?.enabled !== 1) {
      logger.info('Webhook disabled or removed since the event was queued; not called', named);
      return;
    }
    const context = { ...named, url: redactWebhookUrl(webhook.url) };
    const discordWebhook = parseDiscordWebhookUrl(webhook.url);
    if (!discordWebhook) {
      logger.warn('Rejected webhook config: the URL is not a Discord webhook URL; not called', context);
      return;
    }

    const claim = await store.claimDelivery(message.deliveryId, now(), deps.claimStaleAfterSeconds);
    if (claim.outcome === 'sent') {
      logger.info('Delivery already sent; duplicate dropped', context);
      return;
    }
    if (claim.outcome === 'held') return retryLater(record, visibilitySeconds(claim.retryInSeconds), 'Delivery claimed by another attempt');

    const outcome = await postEmbeds(
      executeWebhookUrl(deps.discordApiBase, discordWebhook),
      embedMessage(message.event, message.project.name),
      deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    );
    const decision = decideDelivery(outcome, {
      receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
      retryBaseSeconds: deps.retryBaseSeconds ?? RETRY_BASE_SECONDS,
      random: random(),
      now: now(),
      rateLimited: message.rateLimited,
    });
    const log = (extra?: Record<string, unknown>) => logger[decision.log.level](decision.log.message, { ...context, ...decision.log.fields, ...extra });
    if (decision.action === 'mark_sent') {
      // The post happened: failing the message now would post it twice, so a claim that cannot be marked is only logged.
      const marked = await store.markSent(message.deliveryId, claim.token, now()).catch((error: unknown) => {
        logger.error('Delivered, but the claim could not be marked sent', { ...context, error: errorText(error) });
        return true;
      });
      if (!marked) logger.warn('Delivered, but the claim was taken over meanwhile', context);
      log();
      return;
    }
    await store.releaseClaim(message.deliveryId, claim.token);
    switch (decision.action) {
      case 'retry':
        log();
        return retryLater(record, decision.afterSeconds, decision.reason);
      case 'resend':
        // The copy goes out before this message is deleted: if the send fails, this one comes back instead.
        await inFlight.sendDelayed(
          { body: JSON.stringify({ ...message, rateLimited: decision.rateLimited }), groupId: message.project.id },
          decision.delaySeconds,
        );
        log({ delaySeconds: decision.delaySeconds });
        return;
      case 'disable_webhook': {
        const disabled = await store.disableWebhook(message.project.id, message.webhook.id, webhook.url, now());
        log({ disabled });
        return;
      }
      case 'dead_letter':
        log();
        await inFlight.deadLetter(record.body, decision.reason);
        return;
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

/** The deployed handler: SQS for the queue and its DLQ, the settings the stack gives the function. */
export const handler = lazyHandler(() =>
  createDeliveryHandler({
    store: awsStores().delivery,
    inFlight: new SqsInFlightMessages(awsSqs(), settings.queueUrl(), settings.deadLetterQueueUrl()),
    logger: awsLogger('webhook-delivery'),
    discordApiBase: settings.discordApiBase(),
    claimStaleAfterSeconds: settings.claimStaleAfterSeconds(),
  }),
);
