import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoDeliveryStore } from '#adapters/delivery-store';
import { keyOf } from '#adapters/layout';
import type { DeliveryMessage } from '#domain/webhooks/delivery-message';
import { buildEmbed } from '#domain/webhooks/embeds';
import { createDeliveryHandler } from '#functions/webhook-delivery';
import { createFanoutHandler } from '#functions/webhook-fanout';
import { InProcessQueue } from '#local/in-process-queue';
import type { ProjectEvent } from '#schemas/events';
import { captureLogs, discordUrl, FIXED_NOW, streamEvent, streamRecord, versionItem, WEBHOOK_TOKEN } from '#test-support/event-fixtures';
import { createTestTable, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/** What the scripted Discord answers next; 'hang' never answers. */
type Reply = { status: number; json?: unknown; headers?: Record<string, string> } | 'hang';

/** A Discord API on 127.0.0.1 that answers from a script (200 once the script runs out) and records every request. */
class ScriptedDiscord {
  readonly requests: { method: string; path: string; body: unknown }[] = [];
  readonly replies: Reply[] = [];
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
    this.requests.length = 0;
    this.replies.length = 0;
    this.server.closeAllConnections();
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', body: JSON.parse(raw) });
    const reply = this.replies.shift() ?? { status: 200, json: { id: '1', channel_id: '2', embeds: [] } };
    if (reply === 'hang') return;
    res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
    res.end(reply.json === undefined ? '' : JSON.stringify(reply.json));
  }
}

const HOOK_ID = '112233445566778899';
const discord = new ScriptedDiscord();
let apiBase: string;
let table: TestTable;
let store: DynamoDeliveryStore;
let projectId: string;
let webhookId: string;

beforeAll(async () => {
  apiBase = await discord.start();
  table = await createTestTable('delivery');
  store = new DynamoDeliveryStore(table.db, table.tableName);
  const owner = await seedOwner(table.stores);
  ({
    projectId,
    webhookIds: [webhookId = ''],
  } = await seedProject(table.stores, {
    ownerId: owner.ownerId,
    name: 'Aimbot Deluxe',
    webhooks: [{ url: discordUrl(HOOK_ID), events: ['version_deployed'] }],
  }));
});

afterAll(async () => {
  await discord.close();
  await table?.drop();
});

/** Milliseconds, shared by the queue and the handler, moved by hand. */
const clock = { now: FIXED_NOW * 1000 };
const advance = (seconds: number) => (clock.now += seconds * 1000);
let queue: InProcessQueue;
let deliver: ReturnType<typeof createDeliveryHandler>;
let logs: ReturnType<typeof captureLogs>;
let deliveryCount = 0;

beforeEach(async () => {
  discord.reset();
  logs = captureLogs();
  await enableWebhook(discordUrl(HOOK_ID));
  queue = new InProcessQueue({ visibilityTimeoutSeconds: 180, maxReceiveCount: 8, now: () => clock.now });
  deliver = createDeliveryHandler({
    store,
    inFlight: queue,
    logger: new Logger({ serviceName: 'delivery-test' }),
    discordApiBase: apiBase,
    claimStaleAfterSeconds: 180,
    now: () => Math.floor(clock.now / 1000),
    // Only a scripted hang should reach this; a normal local reply on a busy machine stays far below it.
    requestTimeoutMs: 2_000,
    random: () => 0,
  });
});

afterEach(() => logs.restore());

/** Put the seeded webhook back as enabled with `url` (tests disable it or change its URL). */
async function enableWebhook(url: string) {
  await table.db.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: keyOf.webhook(projectId, webhookId),
      UpdateExpression: 'SET enabled = :one, #url = :url, updated_at = :t',
      ExpressionAttributeNames: { '#url': 'url' },
      ExpressionAttributeValues: { ':one': 1, ':url': url, ':t': FIXED_NOW },
    }),
  );
}

const event = (): ProjectEvent => ({
  name: 'version_deployed',
  projectId,
  occurredAt: FIXED_NOW,
  data: { versionId: 'ver_1', versionNumber: 3, sizeBytes: 12_595, notes: 'Fixes the loader' },
});

/** A queued delivery for the seeded webhook, with a delivery id no other test uses unless given. */
function message(overrides: Partial<DeliveryMessage> = {}): DeliveryMessage {
  deliveryCount += 1;
  return {
    deliveryId: `evt-${Date.now()}-${deliveryCount}:${webhookId}`,
    webhook: { id: webhookId },
    project: { id: projectId, name: 'Aimbot Deluxe' },
    event: event(),
    ...overrides,
  };
}

const enqueue = (...messages: DeliveryMessage[]) => queue.sendBatch(messages.map((m, i) => ({ id: `m${i}`, body: JSON.stringify(m) })));
const pump = () => queue.pump(deliver);

async function storedWebhook() {
  const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.webhook(projectId, webhookId), ConsistentRead: true }));
  return Item;
}

async function claimOf(deliveryId: string) {
  const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.deliveryClaim(deliveryId), ConsistentRead: true }));
  return Item;
}

describe('delivery to Discord', () => {
  it('posts the embed once to <base>/webhooks/{id}/{token}?wait=true and records the claim as sent on 200', async () => {
    const sent = message();
    await enqueue(sent);
    await pump();

    expect(discord.requests).toEqual([
      {
        method: 'POST',
        path: `/api/v10/webhooks/${HOOK_ID}/${WEBHOOK_TOKEN}?wait=true`,
        body: { embeds: [buildEmbed(sent.event, 'Aimbot Deluxe')], allowed_mentions: { parse: [] } },
      },
    ]);
    expect(queue.depth).toBe(0);
    expect(await claimOf(sent.deliveryId)).toMatchObject({ state: 'sent', ttl: FIXED_NOW + 7 * 86_400 });
  });

  it('answers a 429 with a copy delayed by retry_after (fractional seconds, JSON body), deletes the original, then posts', async () => {
    const sendDelayed = vi.spyOn(queue, 'sendDelayed');
    const changeVisibility = vi.spyOn(queue, 'changeVisibility');
    discord.replies.push({ status: 429, json: { message: 'You are being rate limited.', retry_after: 1.2, global: false } });
    const sent = message();
    await enqueue(sent);

    await pump();
    expect(sendDelayed.mock.calls).toEqual([
      [{ body: JSON.stringify({ ...sent, rateLimited: { times: 1, since: Math.floor(clock.now / 1000) } }), groupId: projectId }, 2],
    ]);
    expect(changeVisibility).not.toHaveBeenCalled();
    // Only the copy is left, and it is a new message: the 429 spent none of the receives that lead to the DLQ.
    expect(queue.depth).toBe(1);
    advance(1);
    expect(await pump()).toBe(0);
    advance(1);
    await pump();

    expect(discord.requests).toHaveLength(2);
    expect(queue.depth).toBe(0);
    expect(await claimOf(sent.deliveryId)).toMatchObject({ state: 'sent' });
  });

  it('falls back to the Retry-After header when a 429 has no JSON body', async () => {
    const sendDelayed = vi.spyOn(queue, 'sendDelayed');
    discord.replies.push({ status: 429, headers: { 'Retry-After': '7' } });
    await enqueue(message());
    await pump();
    expect(sendDelayed.mock.calls.map(([, seconds]) => seconds)).toEqual([7]);
  });

  it('disables the webhook config on 404 (updated_at now) and does not retry', async () => {
    discord.replies.push({ status: 404, json: { message: 'Unknown Webhook', code: 10015 } });
    await enqueue(message());
    advance(60);
    await pump();

    expect(await storedWebhook()).toMatchObject({ enabled: 0, updated_at: Math.floor(clock.now / 1000) });
    expect(queue.depth).toBe(0);
    expect(queue.deadLetters()).toEqual([]);
    expect(discord.requests).toHaveLength(1);
  });

  it('disables the webhook config on 401 Invalid Webhook Token (code 50027)', async () => {
    discord.replies.push({ status: 401, json: { message: 'Invalid Webhook Token', code: 50027 } });
    await enqueue(message());
    await pump();
    expect(await storedWebhook()).toMatchObject({ enabled: 0 });
  });

  it('judges the URL the config holds at delivery: a 404 from a URL replaced since queueing disables the config', async () => {
    discord.replies.push({ status: 404, json: { message: 'Unknown Webhook', code: 10015 } });
    await enqueue(message());
    await enableWebhook(discordUrl('998877665544332211', 'new-token'));
    await pump();
    expect(discord.requests.map((request) => request.path)).toEqual(['/api/v10/webhooks/998877665544332211/new-token?wait=true']);
    expect(await storedWebhook()).toMatchObject({ enabled: 0 });
  });

  it('does not disable a config whose URL was replaced while the refused post was in flight', async () => {
    const posted = discordUrl(HOOK_ID);
    await enableWebhook(discordUrl('998877665544332211', 'new-token'));
    expect(await store.disableWebhook(projectId, webhookId, posted, FIXED_NOW)).toBe(false);
    expect(await storedWebhook()).toMatchObject({ enabled: 1 });
  });

  it('sends a message Discord refuses with another 4xx to the DLQ at once, with the response body logged', async () => {
    discord.replies.push({ status: 400, json: { message: 'Invalid Form Body', code: 50035 } });
    const sent = message();
    await enqueue(sent);
    await pump();

    expect(queue.depth).toBe(0);
    expect(queue.deadLetters()).toEqual([
      expect.objectContaining({ body: JSON.stringify(sent), reason: 'Discord answered 400: {"message":"Invalid Form Body","code":50035}' }),
    ]);
    expect(logs.entries().find((entry) => entry.level === 'ERROR')).toMatchObject({ status: 400, body: '{"message":"Invalid Form Body","code":50035}' });
    expect(await storedWebhook()).toMatchObject({ enabled: 1 });
    expect(discord.requests).toHaveLength(1);
  });

  it('retries a 5xx with a visibility that grows with the receive count', async () => {
    const changeVisibility = vi.spyOn(queue, 'changeVisibility');
    discord.replies.push({ status: 500, json: { message: 'oops' } }, { status: 502 });
    await enqueue(message());

    await pump();
    advance(10);
    await pump();
    advance(20);
    await pump();

    expect(changeVisibility.mock.calls.map(([, seconds]) => seconds)).toEqual([10, 20]);
    expect(discord.requests).toHaveLength(3);
    expect(queue.depth).toBe(0);
  });

  it('gives up on a request that hangs past the timeout and retries it', async () => {
    const changeVisibility = vi.spyOn(queue, 'changeVisibility');
    discord.replies.push('hang');
    const sent = message();
    await enqueue(sent);

    await pump();
    expect(changeVisibility.mock.calls.map(([, seconds]) => seconds)).toEqual([10]);
    expect(logs.entries().find((entry) => entry.reason === 'timed out')).toBeDefined();
    expect(await claimOf(sent.deliveryId)).toMatchObject({ state: 'released' });
    advance(10);
    await pump();
    expect(discord.requests).toHaveLength(2);
    expect(queue.depth).toBe(0);
  });

  it('never calls a URL that is not a Discord webhook URL, and logs it as a rejected config without retry', async () => {
    const local = `${apiBase}/webhooks/${HOOK_ID}/${WEBHOOK_TOKEN}`;
    for (const url of ['https://evil.example/api/webhooks/1/tok', local]) {
      await enableWebhook(url);
      await enqueue(message());
      await pump();
    }

    expect(discord.requests).toEqual([]);
    expect(queue.depth).toBe(0);
    const rejected = logs.entries().filter((entry) => String(entry.message).startsWith('Rejected webhook config'));
    expect(rejected.map((entry) => entry.url)).toEqual([
      'https://evil.example/[redacted]',
      `${new URL(apiBase).protocol}//${new URL(apiBase).host}/[redacted]`,
    ]);
  });

  it('posts to the URL the config holds when it is delivered, not when it was queued', async () => {
    await enqueue(message());
    await enableWebhook(discordUrl(HOOK_ID, 'rotated-token'));
    await pump();
    expect(discord.requests.map((request) => request.path)).toEqual([`/api/v10/webhooks/${HOOK_ID}/rotated-token?wait=true`]);
  });

  it('does not call a webhook that was disabled after the event was queued', async () => {
    await table.db.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: keyOf.webhook(projectId, webhookId),
        UpdateExpression: 'SET enabled = :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
    await enqueue(message());
    await pump();
    expect(discord.requests).toEqual([]);
    expect(queue.depth).toBe(0);
  });

  it('moves a malformed message to the DLQ without calling anyone', async () => {
    await queue.sendBatch([{ id: 'x', body: '{"deliveryId":"x"}' }]);
    await pump();
    expect(discord.requests).toEqual([]);
    expect(queue.deadLetters()).toEqual([expect.objectContaining({ reason: 'malformed delivery message' })]);
  });
});

describe('exactly one post per delivery id', () => {
  it('posts once when the same delivery id arrives twice, in one batch or later', async () => {
    const sent = message();
    await enqueue(sent, sent);
    // The copies run side by side: one claims and posts, the other finds the claim held and comes back later.
    await pump();
    await enqueue(sent);
    advance(181);
    await pump();

    expect(discord.requests).toHaveLength(1);
    expect(queue.depth).toBe(0);
  });

  it('posts once when a stream record is replayed through the fan-out', async () => {
    const fanout = createFanoutHandler({ store, queue, logger: new Logger({ serviceName: 'fanout-test' }) });
    const record = streamRecord('INSERT', versionItem(projectId), { eventID: `replayed-${Date.now()}` });

    await fanout(streamEvent(record));
    await fanout(streamEvent(record));
    expect(queue.depth).toBe(2);
    await pump();
    advance(181);
    await pump();

    expect(discord.requests).toHaveLength(1);
    expect(queue.depth).toBe(0);
  });

  it('leaves a fresh claim of another attempt alone and takes it over once it is older than the visibility timeout', async () => {
    const changeVisibility = vi.spyOn(queue, 'changeVisibility');
    const sent = message();
    // An attempt that claimed the delivery 10 s ago and died before posting.
    await store.claimDelivery(sent.deliveryId, Math.floor(clock.now / 1000) - 10, 180);
    await enqueue(sent);

    await pump();
    expect(discord.requests).toEqual([]);
    expect(changeVisibility.mock.calls.map(([, seconds]) => seconds)).toEqual([171]);
    advance(171);
    await pump();

    expect(discord.requests).toHaveLength(1);
    expect(await claimOf(sent.deliveryId)).toMatchObject({ state: 'sent' });
  });

  it('lets a retry claim again at once after a failed post released the claim', async () => {
    discord.replies.push({ status: 503 });
    const sent = message();
    await enqueue(sent);
    await pump();
    advance(10);
    await pump();
    expect(discord.requests).toHaveLength(2);
    expect(await claimOf(sent.deliveryId)).toMatchObject({ state: 'sent' });
  });
});

describe('logs', () => {
  it('never hold the webhook token, whatever the outcome', async () => {
    discord.replies.push(
      { status: 429, json: { retry_after: 0.5 } },
      { status: 500, json: { message: 'oops' } },
      'hang',
      { status: 400, json: { message: 'bad' } },
      { status: 404, json: { code: 10015 } },
    );
    const badId = await table.stores.dashboard.addWebhook({
      projectId,
      url: `https://example.com/api/webhooks/${HOOK_ID}/${WEBHOOK_TOKEN}`,
      events: ['version_deployed'],
      enabled: true,
      now: FIXED_NOW,
    });
    await enqueue(message(), message(), message(), message(), message(), message({ webhook: { id: badId } }));
    for (let round = 0; round < 4 && queue.depth > 0; round++) {
      await pump();
      advance(60);
    }

    const text = logs.text();
    expect(logs.entries().length).toBeGreaterThan(6);
    expect(text).toContain(`/webhooks/${HOOK_ID}/[redacted]`);
    expect(text).not.toContain(WEBHOOK_TOKEN);
  });
});
