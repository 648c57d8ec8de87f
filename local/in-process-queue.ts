import { createHash, randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { InFlightMessages, MessageSender, OutgoingMessage } from '#domain/webhooks/ports';

/**
 * An in-process stand-in for an SQS standard queue with a redrive policy, for the local stack (no SQS emulator
 * here speaks the SDK's current protocol). It keeps what the delivery handler relies on: Lambda's SQSRecord
 * shape, a visibility timeout per receive, ChangeMessageVisibility by receipt handle, DelaySeconds per message,
 * message groups served in turn (as a fair queue serves its tenants), ApproximateReceiveCount,
 * partial batch responses (only the messages not reported failed are deleted), and a dead-letter list that a
 * message joins once it has been received maxReceiveCount times without being deleted.
 */

export interface InProcessQueueOptions {
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
  /** Messages per handler call, as an SQS event source's batch size. */
  batchSize?: number;
  /** How often an idle consumer looks for visible messages. */
  pollIntervalMs?: number;
  /** Milliseconds since the epoch; tests move it by hand. */
  now?: () => number;
}

export interface DeadLetter {
  messageId: string;
  body: string;
  receiveCount: number;
  /** Why it is here: the reason given to deadLetter, or the receive count that ran out. */
  reason: string;
}

// A Lambda handler answers a batch response, or nothing (Promise<void>) when every record succeeded.
export type BatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined> | Promise<void>;

interface StoredMessage {
  messageId: string;
  body: string;
  groupId?: string;
  sentAt: number;
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  /** The handle of the latest receive; older handles no longer name the message. */
  receiptHandle?: string;
}

export class InProcessQueue implements MessageSender, InFlightMessages {
  private readonly messages = new Map<string, StoredMessage>();
  private readonly dead: DeadLetter[] = [];
  private readonly now: () => number;
  private consumer: Promise<void> | undefined;
  private running = false;
  private wake: (() => void) | undefined;

  constructor(private readonly options: InProcessQueueOptions) {
    this.now = options.now ?? Date.now;
  }

  async sendBatch(messages: OutgoingMessage[]): Promise<string[]> {
    if (messages.length > 10) throw new Error('A batch holds at most 10 messages');
    for (const message of messages) this.add(message, 0);
    return [];
  }

  async sendDelayed(message: Omit<OutgoingMessage, 'id'>, delaySeconds: number): Promise<void> {
    if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > 900) throw new Error('InvalidParameterValue: DelaySeconds must be 0 to 900');
    this.add(message, delaySeconds);
  }

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    const message = [...this.messages.values()].find((candidate) => candidate.receiptHandle === receiptHandle);
    if (!message) throw new Error('ReceiptHandleIsInvalid: no message in flight has this receipt handle');
    message.visibleAt = this.now() + seconds * 1000;
  }

  async deadLetter(body: string, reason: string): Promise<void> {
    this.dead.push({ messageId: randomUUID(), body, receiveCount: 0, reason });
  }

  deadLetters(): DeadLetter[] {
    return [...this.dead];
  }

  /** Messages not yet deleted nor dead-lettered, visible or in flight. */
  get depth(): number {
    return this.messages.size;
  }

  /**
   * One receive: up to a batch of visible messages goes to `handler`; those it does not report failed are
   * deleted. A handler that throws fails the whole batch, as Lambda does. Resolves with how many it received.
   */
  async pump(handler: BatchHandler): Promise<number> {
    const records = this.receive();
    if (records.length === 0) return 0;
    let failed: Set<string>;
    try {
      const response = await handler({ Records: records });
      failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
    } catch {
      failed = new Set(records.map((record) => record.messageId));
    }
    for (const record of records) {
      const message = this.messages.get(record.messageId);
      if (!failed.has(record.messageId) && message?.receiptHandle === record.receiptHandle) this.messages.delete(record.messageId);
    }
    return records.length;
  }

  /** Feed `handler` until stop(), one batch at a time. */
  start(handler: BatchHandler): void {
    if (this.running) throw new Error('The queue already has a consumer');
    this.running = true;
    this.consumer = (async () => {
      while (this.running) {
        if ((await this.pump(handler)) === 0) await this.idle();
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.consumer;
    this.consumer = undefined;
  }

  private add(message: Omit<OutgoingMessage, 'id'>, delaySeconds: number): void {
    const messageId = randomUUID();
    const sentAt = this.now();
    this.messages.set(messageId, { messageId, body: message.body, groupId: message.groupId, sentAt, visibleAt: sentAt + delaySeconds * 1000, receiveCount: 0 });
    this.wake?.();
  }

  /**
   * Visible messages, taken round-robin by message group (a message without one is a group of its own): the first
   * of each group in the order the groups' oldest messages arrived, then the second of each... So, as on an SQS fair
   * queue, a group with a backlog cannot hold back a message of another group by more than a batch.
   */
  private receive(): SQSRecord[] {
    const now = this.now();
    const groups = new Map<string, StoredMessage[]>();
    for (const message of this.messages.values()) {
      if (message.visibleAt > now) continue;
      if (message.receiveCount >= this.options.maxReceiveCount) {
        this.messages.delete(message.messageId);
        this.dead.push({
          messageId: message.messageId,
          body: message.body,
          receiveCount: message.receiveCount,
          reason: `received ${message.receiveCount} times`,
        });
        continue;
      }
      const group = message.groupId ?? message.messageId;
      const members = groups.get(group);
      if (members) members.push(message);
      else groups.set(group, [message]);
    }
    const taken = roundRobin([...groups.values()], this.options.batchSize ?? 10);
    return taken.map((message) => {
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.receiptHandle = randomUUID();
      message.visibleAt = now + this.options.visibilityTimeoutSeconds * 1000;
      return this.recordOf(message);
    });
  }

  private recordOf(message: StoredMessage): SQSRecord {
    return {
      messageId: message.messageId,
      receiptHandle: message.receiptHandle ?? '',
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentAt),
        SenderId: 'in-process',
        ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
      },
      messageAttributes: {},
      md5OfBody: createHash('md5').update(message.body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:webhook-deliveries',
      awsRegion: 'us-east-1',
    };
  }

  /** Sleep until the next message turns visible, a send arrives, or the poll interval passes. */
  private idle(): Promise<void> {
    const nextVisible = Math.min(...[...this.messages.values()].map((message) => message.visibleAt));
    const poll = this.options.pollIntervalMs ?? 50;
    const wait = Math.max(1, Math.min(poll, nextVisible - this.now()));
    return new Promise((resolve) => {
      const timer = setTimeout(done, wait);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

/** Up to `limit` items, one from each list in turn: the firsts of every list, then the seconds... */
export function roundRobin<T>(lists: readonly (readonly T[])[], limit: number): T[] {
  const taken: T[] = [];
  for (let index = 0; taken.length < limit; index++) {
    const round = lists.flatMap((list) => (index < list.length ? [list[index] as T] : []));
    if (round.length === 0) break;
    taken.push(...round.slice(0, limit - taken.length));
  }
  return taken;
}
