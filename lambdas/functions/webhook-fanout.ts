import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { SqsMessageSender } from '#adapters/sqs-queue';
import { readStreamRecord } from '#adapters/stream-events';
import type { FanoutStore, WebhookTarget } from '#domain/ports';
import { type DeliveryMessage, deliveryIdOf } from '#domain/webhooks/delivery-message';
import { redactWebhookUrl } from '#domain/webhooks/discord-webhook-url';
import type { MessageSender, OutgoingMessage } from '#domain/webhooks/ports';
import { awsLogger, awsStores, lazyHandler, settings } from '#runtime/aws';
import { awsSqs } from '#runtime/aws-sqs';
import { EVENT_NAMES, type EventName } from '#schemas/resources';

/** SQS takes at most 10 entries per SendMessageBatch. */
export const SEND_BATCH_SIZE = 10;
/** Entries SQS refused are sent again this many times in all before the record is reported failed. */
export const SEND_ATTEMPTS = 3;

export interface FanoutDeps {
  store: FanoutStore;
  queue: MessageSender;
  logger: Logger;
  /** Pause before re-sending refused entries; tests make it 0. */
  resendDelayMs?: number;
}

/**
 * The stream consumer: each stream record that makes an event becomes one queue message per enabled webhook
 * of that project subscribed to the event. Records are handled one by one and reported failed one by one, so a
 * bad record is retried (and bisected, then set aside) by the event-source mapping without holding up the rest.
 * A retried record queues its messages again; the delivery id makes the copies post once. A message names its
 * webhook by id, never by URL (the URL holds the webhook's token), and is sent in its project's message group:
 * on SQS's fair queues a project flooding the queue is served after the others, never ahead of them.
 */
export function createFanoutHandler(deps: FanoutDeps) {
  const fanOut = async (record: DynamoDBRecord): Promise<void> => {
    const reading = readStreamRecord(record);
    if (reading.kind === 'ignored') return;
    if (reading.kind === 'invalid') {
      // Retrying cannot repair the item; blocking the shard on it would hold back every later event.
      deps.logger.error('Stream record is not a valid event; skipped', { eventID: record.eventID, problem: reading.problem });
      return;
    }
    const { event } = reading;
    const streamEventId = record.eventID;
    if (!streamEventId) throw new Error('Stream record has no eventID');
    const targets = (await deps.store.webhooksOf(event.projectId)).filter(
      (webhook) => webhook.enabled === 1 && subscribesTo(webhook, event.name, deps.logger, event.projectId),
    );
    if (targets.length === 0) return;
    const projectName = (await deps.store.projectName(event.projectId)) ?? event.projectId;
    const messages = targets.map((webhook, i): OutgoingMessage => {
      const body: DeliveryMessage = {
        deliveryId: deliveryIdOf(streamEventId, webhook.id),
        webhook: { id: webhook.id },
        project: { id: event.projectId, name: projectName },
        event,
      };
      return { id: `m${i}`, body: JSON.stringify(body), groupId: event.projectId };
    });
    await sendAll(deps, messages);
    deps.logger.info('Event queued for webhooks', { event: event.name, projectId: event.projectId, eventID: streamEventId, webhooks: targets.length });
  };

  return async (event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> => {
    // One processor per invocation: it keeps the batch's state, and the local stack may run invocations side by side.
    const processor = new BatchProcessor(EventType.DynamoDBStreams, { logger: deps.logger });
    return processPartialResponse(event, fanOut, processor, { context, throwOnFullBatchFailure: false, processInParallel: false });
  };
}

/** Whether the webhook's `events` (a JSON-encoded array, spec §2.3) lists `name`; a malformed list subscribes to nothing. */
function subscribesTo(webhook: WebhookTarget, name: EventName, logger: Logger, projectId: string): boolean {
  const events = parseEventList(webhook.events);
  if (!events) {
    logger.warn('Webhook events is not a JSON array of event names; webhook skipped', {
      projectId,
      webhookId: webhook.id,
      url: redactWebhookUrl(webhook.url),
    });
    return false;
  }
  return events.includes(name);
}

function parseEventList(events: string): string[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(events);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) return undefined;
  return value.filter((name) => (EVENT_NAMES as readonly string[]).includes(name));
}

/** Send in batches of 10, re-sending what SQS refused; throws when some messages still could not be queued. */
async function sendAll(deps: FanoutDeps, messages: OutgoingMessage[]): Promise<void> {
  let unsent = 0;
  for (let start = 0; start < messages.length; start += SEND_BATCH_SIZE) {
    let pending = messages.slice(start, start + SEND_BATCH_SIZE);
    for (let attempt = 1; pending.length > 0 && attempt <= SEND_ATTEMPTS; attempt++) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, (deps.resendDelayMs ?? 100) * 2 ** (attempt - 2)));
      const failed = new Set(await deps.queue.sendBatch(pending));
      pending = pending.filter((message) => failed.has(message.id));
    }
    unsent += pending.length;
  }
  if (unsent > 0) throw new Error(`${unsent} of ${messages.length} webhook messages could not be queued`);
}

/** The deployed handler: the table's stream in, SQS out. */
export const handler = lazyHandler(() =>
  createFanoutHandler({
    store: awsStores().delivery,
    queue: new SqsMessageSender(awsSqs(), settings.queueUrl()),
    logger: awsLogger('webhook-fanout'),
  }),
);
