import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestTelemetry } from '#domain/analytics/ingest';
import { EMBED_COLORS } from '#domain/webhooks/embeds';
import { type PipelineToStandIn, pipelineToStandIn } from '#test-support/delivery-helpers';
import { discordUrl } from '#test-support/event-fixtures';
import { createTestTable, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/**
 * An alert storm end to end: 500 executors never seen before, reported in one ingest batch, reach the publisher's
 * Discord channel as ONE embed (the count and a sample), through the local stack's delivery pipeline (DynamoDB
 * Local's stream → fan-out → in-process queue → delivery → Discord stand-in), not as 500 posts.
 */

let table: TestTable;
let delivery: PipelineToStandIn;
let projectId: string;

beforeAll(async () => {
  table = await createTestTable('alert-storms', { stream: true });
  const { ownerId } = await seedOwner(table.stores);
  ({ projectId } = await seedProject(table.stores, {
    ownerId,
    name: 'Stormy',
    webhooks: [{ url: discordUrl('424242424242424242'), events: ['new_executor'] }],
  }));
  delivery = await pipelineToStandIn(table);
});

afterAll(async () => {
  await delivery?.stop();
  await table?.drop();
});

const newExecutorEmbeds = () =>
  delivery.served.standIn.received().flatMap((message) => message.embeds.filter((embed) => embed.color === EMBED_COLORS.new_executor));

/** Waits for `count` embeds (the timeout only guards a hang), then a while longer, so a further post would show. */
async function expectEmbeds(count: number) {
  await expect.poll(() => newExecutorEmbeds().length, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(count);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(newExecutorEmbeds()).toHaveLength(count);
  return newExecutorEmbeds();
}

describe('an alert storm through the local delivery pipeline', () => {
  it('posts 500 new executors of one batch as one embed with the count and a sample', async () => {
    const now = Math.floor(Date.now() / 1000);
    const records = Array.from({ length: 500 }, (_, i) => ({ kind: 'execution', projectId, executor: `Storm-${i}`, at: now - 500 + i }));
    const result = await ingestTelemetry(table.stores.telemetry, records, now);
    expect(result.events).toEqual([expect.objectContaining({ name: 'new_executor', summarizes: 500 })]);

    const [embed] = await expectEmbeds(1);
    expect(embed?.title).toBe('500 new executors seen');
    expect(embed?.fields.find((field) => field.name === 'Count')?.value).toBe('500');
    expect(embed?.fields.find((field) => field.name === 'Sample (5 of 500)')?.value).toContain('Storm-0');
    expect(delivery.pipeline.deadLetters()).toEqual([]);
  });

  it('posts a genuine new executor after the storm by itself, and nothing again for the storm retried', async () => {
    const now = Math.floor(Date.now() / 1000);
    const retried = Array.from({ length: 500 }, (_, i) => ({ kind: 'execution', projectId, executor: `Storm-${i}`, at: now - 500 + i }));
    expect((await ingestTelemetry(table.stores.telemetry, [...retried, { kind: 'execution', projectId, executor: 'Latecomer', at: now }], now)).events).toEqual(
      [expect.objectContaining({ name: 'new_executor', dedupKey: expect.stringMatching(/^Latecomer#/) })],
    );
    const embeds = await expectEmbeds(2);
    expect(embeds[1]?.title).toBe('New executor seen');
    expect(embeds[1]?.fields[0]?.value).toBe('Latecomer');
  });
});
