import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoDeliveryStore } from '#adapters/delivery-store';
import { MAX_DELAY_SECONDS, RATE_LIMITED_GIVE_UP_SECONDS, RETRY_MAX_SECONDS } from '#domain/webhooks/delivery-decision';
import type { DeliveryMessage } from '#domain/webhooks/delivery-message';
import { DELIVERY_QUEUE } from '#domain/webhooks/delivery-settings';
import { createDeliveryHandler } from '#functions/webhook-delivery';
import { InProcessQueue } from '#local/in-process-queue';
import { captureLogs, discordUrl, FIXED_NOW, WEBHOOK_TOKEN } from '#test-support/event-fixtures';
import { createTestTable, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';
import { HARDENING_RUNS, reportFigure, timeoutFor } from '#test-support/hardening';

/**
 * Discord misbehaving under the delivery handler: 5xx, requests that hang, connections reset mid-request and
 * 429 storms, from a scripted Discord on 127.0.0.1. The queue is the local stand-in for SQS (same retries,
 * visibility and dead-letter rules as the deployed queue), the claims are in DynamoDB Local, the clock is moved
 * by hand. Every delivery must end posted exactly once or in the DLQ, never twice, never lost.
 */

/** What the scripted Discord does with the next request. */
type Reply = { status: number; json?: unknown; headers?: Record<string, string> } | 'hang' | 'reset';

interface SeenRequest {
  /** Which delivery this post carries (its notes name it). */
  delivery: string;
  reply: Reply;
}

class ScriptedDiscord {
  readonly seen: SeenRequest[] = [];
  /** Decides the reply to each request; 200 when it returns undefined. */
  script: (delivery: string, attempt: number) => Reply | undefined = () => undefined;
  private readonly server: Server = createServer((req, res) => void this.answer(req, res));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v10`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  reset(): void {
    this.seen.length = 0;
    this.script = () => undefined;
    this.server.closeAllConnections();
  }

  /** Posts Discord acknowledged (2xx) per delivery: more than one is a duplicate in the channel. */
  acknowledged(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const request of this.seen) {
      if (typeof request.reply === 'object' && request.reply.status < 300) counts.set(request.delivery, (counts.get(request.delivery) ?? 0) + 1);
    }
    return counts;
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const delivery = /delivery-[\w-]+/.exec(raw)?.[0] ?? 'unknown';
    const attempt = this.seen.filter((request) => request.delivery === delivery).length;
    const reply = this.script(delivery, attempt) ?? { status: 200, json: { id: '1', channel_id: '2', embeds: [] } };
    this.seen.push({ delivery, reply });
    if (reply === 'hang') return;
    if (reply === 'reset') {
      req.socket.destroy();
      return;
    }
    res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
    res.end(reply.json === undefined ? '' : JSON.stringify(reply.json));
  }
}

const HOOK_ID = '223344556677889900';
/**
 * Long enough that an acknowledged post never times out on a loaded CI machine (a 200 that arrives after the
 * client gave up is the ambiguous at-least-once case, not a duplicate the delivery id could have prevented),
 * short enough that the scripted hangs stay cheap.
 */
const REQUEST_TIMEOUT_MS = 2_000;
const discord = new ScriptedDiscord();
let apiBase: string;
let table: TestTable;
let store: DynamoDeliveryStore;
let projectId: string;
let webhookId: string;

beforeAll(async () => {
  apiBase = await discord.start();
  table = await createTestTable('hardening-delivery');
  store = new DynamoDeliveryStore(table.db, table.tableName);
  const owner = await seedOwner(table.stores);
  ({
    projectId,
    webhookIds: [webhookId = ''],
  } = await seedProject(table.stores, {
    ownerId: owner.ownerId,
    name: 'Faulty Discord',
    webhooks: [{ url: discordUrl(HOOK_ID), events: ['version_deployed'] }],
  }));
});

afterAll(async () => {
  await discord.close();
  await table?.drop();
});

/** Milliseconds, shared by the queue and the handler, moved by hand. */
const clock = { now: FIXED_NOW * 1000 };
let queue: InProcessQueue;
let deliver: ReturnType<typeof createDeliveryHandler>;
let logs: ReturnType<typeof captureLogs>;
let sequence = 0;

beforeEach(() => {
  discord.reset();
  logs = captureLogs();
  queue = new InProcessQueue({
    visibilityTimeoutSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
    maxReceiveCount: DELIVERY_QUEUE.maxReceiveCount,
    batchSize: DELIVERY_QUEUE.batchSize,
    now: () => clock.now,
  });
  deliver = createDeliveryHandler({
    store,
    inFlight: queue,
    logger: new Logger({ serviceName: 'delivery-faults' }),
    discordApiBase: apiBase,
    claimStaleAfterSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
    now: () => Math.floor(clock.now / 1000),
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
});

afterEach(() => logs.restore());

/** A delivery whose embed names it (in the version notes), so the scripted Discord can tell posts apart. */
function message(): DeliveryMessage {
  sequence += 1;
  const name = `delivery-${Date.now()}-${sequence}`;
  return {
    deliveryId: `evt-${name}:${webhookId}`,
    webhook: { id: webhookId },
    project: { id: projectId, name: 'Faulty Discord' },
    event: { name: 'version_deployed', projectId, occurredAt: FIXED_NOW, data: { versionId: 'ver_1', versionNumber: 1, sizeBytes: 2048, notes: name } },
  };
}

const nameOf = (sent: DeliveryMessage) => (sent.event.name === 'version_deployed' ? sent.event.data.notes : '');

async function enqueue(messages: DeliveryMessage[]): Promise<void> {
  for (let start = 0; start < messages.length; start += 10) {
    await queue.sendBatch(messages.slice(start, start + 10).map((sent, i) => ({ id: `m${i}`, body: JSON.stringify(sent) })));
  }
}

/**
 * Run the consumer as Lambda would until the queue is empty: take every visible batch, then move the clock
 * past the longest backoff so whatever was put back becomes visible. Resolves with the rounds it took.
 */
async function drain(maxRounds = 40): Promise<number> {
  for (let round = 1; round <= maxRounds; round++) {
    while ((await queue.pump(deliver)) > 0) {
      // keep taking batches while messages are visible
    }
    if (queue.depth === 0) return round;
    clock.now += (RETRY_MAX_SECONDS + DELIVERY_QUEUE.visibilityTimeoutSeconds) * 1000;
  }
  throw new Error(`queue not drained after ${maxRounds} rounds (${queue.depth} left)`);
}

interface Outcome {
  posted: number;
  deadLettered: number;
  duplicates: number;
  lost: number;
}

/** Each delivery must be acknowledged once or be in the DLQ; anything else is a duplicate or a loss. */
function outcomeOf(sent: DeliveryMessage[]): Outcome {
  const acknowledged = discord.acknowledged();
  const dead = new Set(queue.deadLetters().map((letter) => (JSON.parse(letter.body) as DeliveryMessage).deliveryId));
  let posted = 0;
  let duplicates = 0;
  let lost = 0;
  for (const delivery of sent) {
    const acks = acknowledged.get(nameOf(delivery)) ?? 0;
    if (acks > 0) posted += 1;
    duplicates += Math.max(0, acks - 1);
    if (acks === 0 && !dead.has(delivery.deliveryId)) lost += 1;
  }
  return { posted, deadLettered: dead.size, duplicates, lost };
}

const faultCount = () => discord.seen.filter((request) => typeof request.reply !== 'object' || request.reply.status >= 300).length;

describe('delivery to a Discord that fails', () => {
  it('retries 5xx with a growing backoff and posts each delivery once Discord recovers', async () => {
    const changeVisibility = vi.spyOn(queue, 'changeVisibility');
    const statuses = [500, 502, 503, 504];
    discord.script = (_, attempt) => (attempt < 4 ? { status: statuses[attempt] ?? 500, json: { message: 'upstream' } } : undefined);
    const sent = Array.from({ length: 5 }, message);
    await enqueue(sent);
    await drain();

    expect(outcomeOf(sent)).toEqual({ posted: 5, deadLettered: 0, duplicates: 0, lost: 0 });
    const waits = [...new Set(changeVisibility.mock.calls.map(([, seconds]) => seconds))].sort((a, b) => a - b);
    expect(waits[0]).toBeGreaterThanOrEqual(10);
    expect(waits.at(-1)).toBeGreaterThan(waits[0] ?? 0);
  });

  it('moves a delivery Discord answers 500 forever to the DLQ after maxReceiveCount posts, never posting it', async () => {
    discord.script = () => ({ status: 500, json: { message: 'down' } });
    const sent = [message(), message()];
    await enqueue(sent);
    await drain();

    expect(outcomeOf(sent)).toEqual({ posted: 0, deadLettered: 2, duplicates: 0, lost: 0 });
    expect(discord.seen).toHaveLength(2 * DELIVERY_QUEUE.maxReceiveCount);
    expect(queue.deadLetters().map((letter) => letter.reason)).toEqual([
      `received ${DELIVERY_QUEUE.maxReceiveCount} times`,
      `received ${DELIVERY_QUEUE.maxReceiveCount} times`,
    ]);
  });

  it('follows no redirect: a 3xx goes to the DLQ at once, and the address it names gets nothing', async () => {
    for (const status of [301, 302, 307, 308]) {
      discord.reset();
      discord.script = (_, attempt) => (attempt === 0 ? { status, headers: { Location: `${apiBase}/elsewhere/${status}` } } : undefined);
      const sent = [message()];
      await enqueue(sent);
      await drain();
      expect(discord.seen.map((request) => request.reply)).toEqual([{ status, headers: { Location: `${apiBase}/elsewhere/${status}` } }]);
      expect(queue.deadLetters().at(-1)?.body).toBe(JSON.stringify(sent[0]));
    }
  });

  it('gives up on a request that hangs after the timeout and posts once on the retry', async () => {
    discord.script = (_, attempt) => (attempt < 2 ? 'hang' : undefined);
    const sent = Array.from({ length: 3 }, message);
    await enqueue(sent);
    await drain();
    expect(outcomeOf(sent)).toEqual({ posted: 3, deadLettered: 0, duplicates: 0, lost: 0 });
    expect(logs.entries().filter((entry) => entry.reason === 'timed out')).toHaveLength(6);
  });

  it('retries a connection reset mid-request and posts once', async () => {
    discord.script = (_, attempt) => (attempt < 3 ? 'reset' : undefined);
    const sent = Array.from({ length: 3 }, message);
    await enqueue(sent);
    await drain();
    expect(outcomeOf(sent)).toEqual({ posted: 3, deadLettered: 0, duplicates: 0, lost: 0 });
    expect(logs.entries().filter((entry) => String(entry.reason).startsWith('network error'))).toHaveLength(9);
  });

  it("waits out each 429 for Discord's retry_after (at least 1 s, plus up to 25 % jitter) and posts once the storm passes", async () => {
    const sendDelayed = vi.spyOn(queue, 'sendDelayed');
    const retryAfter = [0.4, 2.5, 7, 1];
    discord.script = (_, attempt) =>
      attempt < retryAfter.length
        ? { status: 429, json: { message: 'You are being rate limited.', retry_after: retryAfter[attempt], global: false } }
        : undefined;
    const sent = [message()];
    await enqueue(sent);
    await drain();
    expect(outcomeOf(sent)).toEqual({ posted: 1, deadLettered: 0, duplicates: 0, lost: 0 });
    // Whole seconds, at least 1 (SQS delays have no finer unit), spread by up to a quarter so a burst does not return at once.
    const delays = sendDelayed.mock.calls.map(([, seconds]) => seconds);
    expect(delays).toHaveLength(retryAfter.length);
    delays.forEach((delay, i) => {
      const wait = Math.max(1, retryAfter[i] ?? 0);
      expect(delay).toBeGreaterThanOrEqual(Math.ceil(wait));
      expect(delay).toBeLessThanOrEqual(Math.ceil(wait * 1.25));
    });
  });

  it(`delivers after 20 consecutive 429s, far more than maxReceiveCount (${DELIVERY_QUEUE.maxReceiveCount}): a 429 spends no receive`, async () => {
    const changeVisibility = vi.spyOn(queue, 'changeVisibility');
    discord.script = (_, attempt) =>
      attempt < 20
        ? { status: 429, json: { message: 'You are being rate limited.', retry_after: 30, global: true }, headers: { 'Retry-After': '30' } }
        : undefined;
    const sent = [message(), message()];
    await enqueue(sent);
    await drain();
    expect(outcomeOf(sent)).toEqual({ posted: 2, deadLettered: 0, duplicates: 0, lost: 0 });
    expect(discord.seen).toHaveLength(2 * 21);
    expect(changeVisibility).not.toHaveBeenCalled();
    expect(queue.deadLetters()).toEqual([]);
  });

  it('moves a delivery to the DLQ once Discord has answered 429 for a day, posting nothing', async () => {
    discord.script = () => ({ status: 429, json: { message: 'You are being rate limited.', retry_after: 900, global: true } });
    const sent = [message()];
    await enqueue(sent);
    await drain(200);
    expect(outcomeOf(sent)).toEqual({ posted: 0, deadLettered: 1, duplicates: 0, lost: 0 });
    // A post at least every 15 min (the longest SQS delay, which Discord asked for) for a day: far past maxReceiveCount.
    expect(discord.seen.length).toBeGreaterThan(DELIVERY_QUEUE.maxReceiveCount);
    expect(discord.seen.length).toBeLessThanOrEqual(RATE_LIMITED_GIVE_UP_SECONDS / MAX_DELAY_SECONDS + 1);
    expect(queue.deadLetters().map((letter) => letter.reason)).toEqual([expect.stringMatching(/^Rate limited by Discord \d+ times over 24 h$/)]);
  });

  it(
    `delivers every message once or dead-letters it under random faults, each queued twice, and a DLQ redrive posts nothing twice (${HARDENING_RUNS} runs)`,
    async () => {
      const totals = { deliveries: 0, faults: 0, posted: 0, deadLettered: 0, duplicates: 0, lost: 0, ambiguousResends: 0 };
      const replies: Reply[] = [
        { status: 500, json: { message: 'oops' } },
        { status: 502 },
        { status: 503, json: { message: 'unavailable' } },
        { status: 429, json: { retry_after: 1.5, global: false } },
        { status: 429, headers: { 'Retry-After': '4' } },
        'hang',
        'reset',
      ];
      for (let run = 0; run < HARDENING_RUNS; run++) {
        discord.reset();
        // Half the posts fail, with a fault picked at random; the rest are acknowledged.
        discord.script = () => (Math.random() < 0.5 ? replies[Math.floor(Math.random() * replies.length)] : undefined);
        const sent = Array.from({ length: 4 }, message);
        // Each delivery is in the queue twice, as a replayed stream record or a re-sent fan-out batch leaves it.
        await enqueue([...sent, ...sent]);
        await drain();

        const outcome = outcomeOf(sent);
        expect(outcome.duplicates).toBe(0);
        expect(outcome.lost).toBe(0);
        totals.faults += faultCount();
        totals.deadLettered += outcome.deadLettered;
        // A post that hung or was reset after Discord read it may have reached the channel: its re-send is the
        // at-least-once case the delivery id cannot see.
        totals.ambiguousResends += discord.seen.filter((request) => request.reply === 'hang' || request.reply === 'reset').length;

        // An operator redrives the DLQ once Discord is healthy: what never got through posts now, nothing twice.
        discord.script = () => undefined;
        const redriven = queue.deadLetters().map((letter) => JSON.parse(letter.body) as DeliveryMessage);
        queue = new InProcessQueue({
          visibilityTimeoutSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
          maxReceiveCount: DELIVERY_QUEUE.maxReceiveCount,
          now: () => clock.now,
        });
        deliver = createDeliveryHandler({
          store,
          inFlight: queue,
          logger: new Logger({ serviceName: 'delivery-faults' }),
          discordApiBase: apiBase,
          claimStaleAfterSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
          now: () => Math.floor(clock.now / 1000),
          requestTimeoutMs: REQUEST_TIMEOUT_MS,
        });
        await enqueue(redriven);
        await drain();
        const afterRedrive = outcomeOf(sent);
        expect(afterRedrive).toEqual({ posted: sent.length, deadLettered: 0, duplicates: 0, lost: 0 });

        totals.deliveries += sent.length;
        totals.posted += afterRedrive.posted;
        totals.duplicates += afterRedrive.duplicates;
        totals.lost += afterRedrive.lost;
      }
      reportFigure(
        `Discord faults: ${HARDENING_RUNS} runs, ${totals.deliveries} deliveries each queued twice, ${totals.faults} faults injected (5xx, 429, hang, reset), ` +
          `${totals.deadLettered} deliveries with a copy dead-lettered and redriven, ${totals.posted} posted exactly once in the end, duplicate posts = ${totals.duplicates}, lost = ${totals.lost}, ` +
          `posts re-sent after a hang or reset (possible duplicates at Discord) = ${totals.ambiguousResends}`,
      );
      expect(logs.text()).not.toContain(WEBHOOK_TOKEN);
    },
    timeoutFor(800),
  );
});
