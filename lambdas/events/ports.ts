/**
 * What the fan-out and delivery handlers need from the outside, as small ports: a queue and the table.
 * In AWS the adapters are SQS (`sqs-queue.ts`) and DynamoDB (`../store/delivery-store.ts`); locally the same
 * handlers run on an in-process queue (`local/in-process-queue.ts`) and DynamoDB Local.
 */

/** One message to enqueue; `id` is unique within its batch (the SQS batch entry id). */
export interface OutgoingMessage {
  id: string;
  body: string;
}

export interface MessageSender {
  /** Send at most 10 messages; resolves with the ids of the ones that were not accepted. */
  sendBatch(messages: OutgoingMessage[]): Promise<string[]>;
}

/** What a consumer may do to a message it is handling, besides finishing or failing it. */
export interface InFlightMessages {
  /** Make the message visible again `seconds` from now (SQS ChangeMessageVisibility). */
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
  /** Set a message aside in the dead-letter queue at once, with the reason, instead of retrying it. */
  deadLetter(body: string, reason: string): Promise<void>;
}

/** A webhook configuration as the fan-out reads it (spec §2.3 fields it needs). */
export interface WebhookTarget {
  id: string;
  url: string;
  /** The spec's JSON-encoded array of event names, unparsed. */
  events: string;
  enabled: number;
}

export interface FanoutStore {
  /** Every webhook configuration of the project, enabled or not. */
  webhooksOf(projectId: string): Promise<WebhookTarget[]>;
  projectName(projectId: string): Promise<string | undefined>;
}

export type ClaimResult =
  | { outcome: 'claimed'; token: string }
  /** Posted already: this delivery is a duplicate. */
  | { outcome: 'sent' }
  /** Another attempt holds the claim; it may be taken over in `retryInSeconds` if that attempt died. */
  | { outcome: 'held'; retryInSeconds: number };

export interface DeliveryStore {
  /** The webhook's current state, or undefined when it no longer exists. */
  webhookState(projectId: string, webhookId: string): Promise<{ enabled: number; url: string } | undefined>;
  /**
   * Claim a delivery id before posting. A claim in state 'sending' older than `staleAfterSeconds` belongs to
   * an attempt that died between claim and post, and is taken over.
   */
  claimDelivery(deliveryId: string, now: number, staleAfterSeconds: number): Promise<ClaimResult>;
  /** Record the post as done; false when the claim was taken over meanwhile. */
  markSent(deliveryId: string, token: string, now: number): Promise<boolean>;
  /** Give the claim up after a post that did not get through, so the retry can claim at once. */
  releaseClaim(deliveryId: string, token: string): Promise<void>;
  /** Set `enabled` to 0 if the config still has this url and is enabled; true when this call disabled it. */
  disableWebhook(projectId: string, webhookId: string, url: string, now: number): Promise<boolean>;
}
