/**
 * What the fan-out and delivery handlers need of a queue, as small ports (their table port is `#domain/ports`).
 * In AWS the adapter is SQS (`sqs-queue.ts`); locally the same handlers run on an in-process queue
 * (`local/in-process-queue.ts`).
 */

/** One message to enqueue; `id` is unique within its batch (the SQS batch entry id). */
export interface OutgoingMessage {
  id: string;
  body: string;
  /** The tenant the message belongs to (SQS fair queues' MessageGroupId): one tenant's backlog does not hold up another's. */
  groupId?: string;
}

export interface MessageSender {
  /** Send at most 10 messages; resolves with the ids of the ones that were not accepted. */
  sendBatch(messages: OutgoingMessage[]): Promise<string[]>;
}

/** What a consumer may do to a message it is handling, besides finishing or failing it. */
export interface InFlightMessages {
  /** Make the message visible again `seconds` from now (SQS ChangeMessageVisibility). */
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
  /** Send a new message to the same queue, visible after `delaySeconds` (0 to 900: SQS DelaySeconds). */
  sendDelayed(message: Omit<OutgoingMessage, 'id'>, delaySeconds: number): Promise<void>;
  /** Set a message aside in the dead-letter queue at once, with the reason, instead of retrying it. */
  deadLetter(body: string, reason: string): Promise<void>;
}
