import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { InProcessQueue, roundRobin } from '#local/in-process-queue';

function queueWithClock(options: { visibilityTimeoutSeconds?: number; maxReceiveCount?: number; batchSize?: number } = {}) {
  const clock = { now: 1_000_000 };
  const queue = new InProcessQueue({
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 30,
    maxReceiveCount: options.maxReceiveCount ?? 3,
    batchSize: options.batchSize,
    now: () => clock.now,
  });
  return { queue, advance: (seconds: number) => (clock.now += seconds * 1000) };
}

/** A handler that records what it got and answers with `respond`. */
function recorder(respond: (records: SQSRecord[]) => SQSBatchResponse | Promise<SQSBatchResponse> = () => ({ batchItemFailures: [] })) {
  const batches: SQSRecord[][] = [];
  const handler = async (event: SQSEvent) => {
    batches.push(event.Records);
    return respond(event.Records);
  };
  return { batches, handler };
}

const failAll = (records: SQSRecord[]): SQSBatchResponse => ({ batchItemFailures: records.map((record) => ({ itemIdentifier: record.messageId })) });

describe('InProcessQueue', () => {
  it('hands messages over in Lambda SQS record shape and deletes the ones not reported failed', async () => {
    const { queue } = queueWithClock();
    await queue.sendBatch([
      { id: 'a', body: 'one' },
      { id: 'b', body: 'two' },
    ]);
    const { batches, handler } = recorder((records) => ({ batchItemFailures: [{ itemIdentifier: records[1]?.messageId ?? '' }] }));

    expect(await queue.pump(handler)).toBe(2);
    const [first] = batches[0] ?? [];
    expect(first).toMatchObject({
      body: 'one',
      eventSource: 'aws:sqs',
      attributes: { ApproximateReceiveCount: '1' },
      md5OfBody: 'f97c5d29941bfb1b2fdab0874906ab82',
    });
    expect(first?.receiptHandle).toMatch(/\w/);
    expect(queue.depth).toBe(1);
  });

  it('keeps a failed message invisible for the visibility timeout, then delivers it again with a higher receive count', async () => {
    const { queue, advance } = queueWithClock({ visibilityTimeoutSeconds: 30 });
    await queue.sendBatch([{ id: 'a', body: 'one' }]);
    const { batches, handler } = recorder(failAll);

    await queue.pump(handler);
    advance(29);
    expect(await queue.pump(handler)).toBe(0);
    advance(1);
    expect(await queue.pump(handler)).toBe(1);
    expect(batches.map((batch) => batch[0]?.attributes.ApproximateReceiveCount)).toEqual(['1', '2']);
  });

  it('brings a message back when ChangeMessageVisibility says, by its current receipt handle', async () => {
    const { queue, advance } = queueWithClock({ visibilityTimeoutSeconds: 30 });
    await queue.sendBatch([{ id: 'a', body: 'one' }]);
    const { handler } = recorder(async (records) => {
      await queue.changeVisibility(records[0]?.receiptHandle ?? '', 2);
      return failAll(records);
    });

    await queue.pump(handler);
    advance(1);
    expect(await queue.pump(handler)).toBe(0);
    advance(1);
    expect(await queue.pump(handler)).toBe(1);
  });

  it('keeps a message sent with DelaySeconds invisible until the delay has passed, as a new message', async () => {
    const { queue, advance } = queueWithClock();
    await queue.sendDelayed({ body: 'later' }, 5);
    const { batches, handler } = recorder();
    advance(4);
    expect(await queue.pump(handler)).toBe(0);
    advance(1);
    expect(await queue.pump(handler)).toBe(1);
    expect(batches[0]?.[0]).toMatchObject({ body: 'later', attributes: { ApproximateReceiveCount: '1' } });
  });

  it('refuses a delay SQS would refuse', async () => {
    const { queue } = queueWithClock();
    await expect(queue.sendDelayed({ body: 'x' }, 901)).rejects.toThrow(/DelaySeconds/);
    await expect(queue.sendDelayed({ body: 'x' }, 1.5)).rejects.toThrow(/DelaySeconds/);
  });

  it('refuses ChangeMessageVisibility with a receipt handle that names no message in flight', async () => {
    const { queue } = queueWithClock();
    await expect(queue.changeVisibility('nope', 1)).rejects.toThrow(/ReceiptHandleIsInvalid/);
  });

  it('fails the whole batch when the handler throws', async () => {
    const { queue } = queueWithClock();
    await queue.sendBatch([
      { id: 'a', body: 'one' },
      { id: 'b', body: 'two' },
    ]);
    await queue.pump(async () => {
      throw new Error('boom');
    });
    expect(queue.depth).toBe(2);
  });

  it('moves a message to the dead letters once it was received maxReceiveCount times without success', async () => {
    const { queue, advance } = queueWithClock({ visibilityTimeoutSeconds: 10, maxReceiveCount: 3 });
    await queue.sendBatch([{ id: 'a', body: 'doomed' }]);
    const { batches, handler } = recorder(failAll);
    for (let i = 0; i < 4; i++) {
      await queue.pump(handler);
      advance(10);
    }
    expect(batches).toHaveLength(3);
    expect(queue.depth).toBe(0);
    expect(queue.deadLetters()).toEqual([expect.objectContaining({ body: 'doomed', receiveCount: 3, reason: 'received 3 times' })]);
  });

  it('keeps a message dead-lettered on purpose, with its reason', async () => {
    const { queue } = queueWithClock();
    await queue.deadLetter('body', 'Discord answered 400');
    expect(queue.deadLetters()).toEqual([expect.objectContaining({ body: 'body', reason: 'Discord answered 400' })]);
  });

  it('hands over at most batchSize messages per call', async () => {
    const { queue } = queueWithClock({ batchSize: 2 });
    await queue.sendBatch([1, 2, 3].map((n) => ({ id: `m${n}`, body: String(n) })));
    const { batches, handler } = recorder();
    await queue.pump(handler);
    await queue.pump(handler);
    expect(batches.map((batch) => batch.map((record) => record.body))).toEqual([['1', '2'], ['3']]);
  });

  it("serves message groups in turn, so one group's backlog holds another's message back by less than a batch", async () => {
    const { queue } = queueWithClock({ batchSize: 10 });
    for (let start = 0; start < 1_000; start += 10) {
      await queue.sendBatch(Array.from({ length: 10 }, (_, i) => ({ id: `a${i}`, body: `A${start + i}`, groupId: 'prj_a' })));
    }
    await queue.sendBatch([{ id: 'b', body: 'B0', groupId: 'prj_b' }]);
    const { batches, handler } = recorder();
    await queue.pump(handler);
    expect(batches[0]?.map((record) => record.body)).toEqual(['A0', 'B0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8']);
    expect(queue.depth).toBe(991);
  });

  it('takes messages without a group as groups of their own, in the order they were sent', async () => {
    const { queue } = queueWithClock({ batchSize: 3 });
    await queue.sendBatch([1, 2, 3, 4].map((n) => ({ id: `m${n}`, body: String(n) })));
    const { batches, handler } = recorder();
    await queue.pump(handler);
    expect(batches[0]?.map((record) => record.body)).toEqual(['1', '2', '3']);
  });

  it('round-robin takes the firsts of every list, then the seconds, up to the limit', () => {
    expect(roundRobin([['a1', 'a2', 'a3'], ['b1'], ['c1', 'c2']], 5)).toEqual(['a1', 'b1', 'c1', 'a2', 'c2']);
    expect(roundRobin([['a1', 'a2', 'a3'], ['b1']], 10)).toEqual(['a1', 'b1', 'a2', 'a3']);
    expect(roundRobin([], 10)).toEqual([]);
  });

  it('runs a consumer until stopped, delivering messages sent while it runs', async () => {
    const queue = new InProcessQueue({ visibilityTimeoutSeconds: 30, maxReceiveCount: 3, pollIntervalMs: 5 });
    const received: string[] = [];
    queue.start(async (event) => {
      received.push(...event.Records.map((record) => record.body));
    });
    await queue.sendBatch([{ id: 'a', body: 'hello' }]);
    await expect.poll(() => received, { timeout: 30_000, interval: 5 }).toEqual(['hello']);
    await queue.stop();
    expect(queue.depth).toBe(0);
  });
});
