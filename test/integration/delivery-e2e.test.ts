import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '#domain/ids';
import { sha256Hex } from '#domain/scripts';
import { EMBED_COLORS } from '#domain/webhooks/embeds';
import type { DeliveryPipeline } from '#local/delivery-pipeline';
import { EVENT_NAMES } from '#schemas/resources';
import { type PipelineToStandIn, pipelineToStandIn, type ServedStandIn } from '#test-support/delivery-helpers';
import { discordUrl, FIXED_NOW, keyAbuseItem } from '#test-support/event-fixtures';
import { createTestTable, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';

/** The local stack's promise: an upload shows in the inbox within 2 s. */

let table: TestTable;
let delivery: PipelineToStandIn;
let served: ServedStandIn;
let pipeline: DeliveryPipeline;
let projectId: string;

beforeAll(async () => {
  table = await createTestTable('delivery-e2e', { stream: true });
  const owner = await seedOwner(table.stores);
  ({ projectId } = await seedProject(table.stores, {
    ownerId: owner.ownerId,
    name: 'E2E *Script*',
    webhooks: [
      { url: discordUrl('123456789012345678'), events: [...EVENT_NAMES] },
      { url: discordUrl('223456789012345678'), events: ['clone_detected'] },
      { url: discordUrl('323456789012345678'), events: [...EVENT_NAMES], enabled: false },
    ],
  }));
  delivery = await pipelineToStandIn(table);
  ({ served, pipeline } = delivery);
});

afterAll(async () => {
  await delivery?.stop();
  await table?.drop();
});

/** Waits until the stand-in holds `count` messages. How soon is the benchmark's to measure; the timeout only guards a hang. */
async function arrival(count: number): Promise<void> {
  await expect.poll(() => served.standIn.received().length, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(count);
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

describe('DynamoDB Local stream → fan-out → in-process queue → delivery → Discord stand-in', () => {
  it('delivers exactly one version_deployed embed per upload to the one enabled subscribed webhook', async () => {
    await table.stores.dashboard.uploadVersion({ id: newId('ver'), projectId, sizeBytes: 12_595, sha256: sha256Hex(''), notes: '', now: FIXED_NOW });

    await arrival(1);
    await settle();
    const received = served.standIn.received();
    expect(received).toHaveLength(1);
    expect(received[0]?.webhook_id).toBe('123456789012345678');
    expect(received[0]?.embeds).toEqual([
      {
        title: 'New version deployed',
        color: 2278116,
        description: `**E2E \\*Script\\*** (${projectId})`,
        fields: [
          { name: 'Version', value: 'v1', inline: true },
          { name: 'Size', value: '12.3 KB', inline: true },
          { name: 'Notes', value: '_No notes_', inline: true },
        ],
        timestamp: '2023-11-14T22:13:20.000Z',
        footer: { text: 'Script Distribution' },
      },
    ]);
    expect(pipeline.deadLetters()).toEqual([]);
  });

  it('delivers an analytics event a detector writes to the table', async () => {
    served.standIn.clear();
    await table.db.send(new PutCommand({ TableName: table.tableName, Item: { ...keyAbuseItem(projectId) }, ConditionExpression: 'attribute_not_exists(pk)' }));

    await arrival(1);
    await settle();
    const received = served.standIn.received();
    expect(received).toHaveLength(1);
    expect(received[0]?.embeds[0]).toMatchObject({ color: EMBED_COLORS.key_abuse, title: 'Suspicious key use: Key used from many devices' });
  });

  it('sends nothing for table writes that make no event (a webhook added, a project created, keys issued)', async () => {
    served.standIn.clear();
    await table.stores.dashboard.addWebhook({ projectId, url: discordUrl('423456789012345678'), events: ['version_deployed'], enabled: true, now: FIXED_NOW });
    await table.stores.dashboard.createProject({ ownerId: 'own_x', name: 'Other', plan: 'business', now: FIXED_NOW });
    await table.stores.dashboard.issueKeys({ projectId, count: 3, tier: 'standard', maxUses: null, now: FIXED_NOW });
    await settle();
    expect(served.standIn.received()).toEqual([]);
  });
});
