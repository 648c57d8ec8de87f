import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDeliveryStore } from '#adapters/delivery-store';
import { ENTITY, type EventItem, keyOf } from '#adapters/layout';
import { DELIVERY_QUEUE, FANOUT_STREAM } from '#domain/webhooks/delivery-settings';
import { createDeliveryHandler } from '#functions/webhook-delivery';
import { createFanoutHandler } from '#functions/webhook-fanout';
import { InProcessQueue } from '#local/in-process-queue';
import { type ServedStandIn, serveStandIn } from '#test-support/delivery-helpers';
import { discordUrl, FIXED_NOW, streamEvent, streamRecord } from '#test-support/event-fixtures';
import { createTestTable, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/**
 * One tenant's flood must not delay another tenant's embed: project A fires 1,000 events, then project B one. The
 * fan-out (the deployed handler, on DynamoDB Local) queues every message in its project's message group, and the
 * queue serves groups in turn, as SQS fair queues do; so B's embed reaches Discord in the first batch the delivery
 * takes, while A's backlog is still almost whole.
 */

const FLOOD = 1_000;
const HOOK_A = '111111111111111111';
const HOOK_B = '222222222222222222';

let table: TestTable;
let discord: ServedStandIn;
let projectA: string;
let projectB: string;

beforeAll(async () => {
  [table, discord] = await Promise.all([createTestTable('fairness'), serveStandIn()]);
  const { ownerId } = await seedOwner(table.stores);
  ({ projectId: projectA } = await seedProject(table.stores, { ownerId, name: 'Flooded', webhooks: [{ url: discordUrl(HOOK_A), events: ['new_executor'] }] }));
  ({ projectId: projectB } = await seedProject(table.stores, { ownerId, name: 'Quiet', webhooks: [{ url: discordUrl(HOOK_B), events: ['new_executor'] }] }));
});

afterAll(async () => {
  await discord?.close();
  await table?.drop();
});

/** A new_executor event item as the detector writes it. */
function newExecutorItem(projectId: string, executor: string): EventItem {
  return {
    ...keyOf.event(projectId, 'new_executor', `${executor}#2023-11-14`),
    entity: ENTITY.event,
    projectId,
    name: 'new_executor',
    occurredAt: FIXED_NOW,
    data: { executor, firstSeenAt: FIXED_NOW, previouslySeenAt: null },
    ttl: FIXED_NOW + 86_400,
  };
}

describe('fair delivery between projects', () => {
  it(`delivers project B's one event before project A's backlog of ${FLOOD} drains`, async () => {
    const logger = new Logger({ serviceName: 'fairness', logLevel: 'SILENT' });
    const store = new DynamoDeliveryStore(table.db, table.tableName);
    const queue = new InProcessQueue({
      visibilityTimeoutSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
      maxReceiveCount: DELIVERY_QUEUE.maxReceiveCount,
      batchSize: DELIVERY_QUEUE.batchSize,
    });
    const fanout = createFanoutHandler({ store, queue, logger });
    const deliver = createDeliveryHandler({
      store,
      inFlight: queue,
      logger,
      discordApiBase: `${discord.url}/_local/discord`,
      claimStaleAfterSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
    });

    // The stream in order, in the event-source mapping's batch size: A's flood first, B's event last.
    const records = [...Array.from({ length: FLOOD }, (_, i) => newExecutorItem(projectA, `flood-${i}`)), newExecutorItem(projectB, 'quiet-0')].map((item) =>
      streamRecord('INSERT', item),
    );
    for (let start = 0; start < records.length; start += FANOUT_STREAM.batchSize) {
      expect(await fanout(streamEvent(...records.slice(start, start + FANOUT_STREAM.batchSize)))).toEqual({ batchItemFailures: [] });
    }
    expect(queue.depth).toBe(FLOOD + 1);

    await queue.pump(deliver);

    const posted = discord.standIn.received().map((message) => message.webhook_id);
    expect(posted).toContain(HOOK_B);
    expect(posted.filter((id) => id === HOOK_A).length).toBeLessThan(DELIVERY_QUEUE.batchSize);
    expect(queue.depth).toBeGreaterThan(FLOOD - DELIVERY_QUEUE.batchSize);
  });
});
