import { expect, it } from 'vitest';
import { FIXED_NOW } from '#test-support/fixtures';
import { forEachImplementation, type StoreWorld } from './subjects';

/** FanoutStore and DeliveryStore (lambdas/domain/ports.ts): MemoryStores and DynamoDeliveryStore, one contract. */

const URL = 'https://discord.com/api/webhooks/123/secret-token';
const STALE_AFTER = 180;
let deliveries = 0;
const newDeliveryId = () => `evt-contract-${++deliveries}-${Math.random().toString(16).slice(2)}:whk_1`;
const byId = <T extends { id: string }>(items: T[]): T[] => [...items].sort((a, b) => a.id.localeCompare(b.id));

forEachImplementation('stores', (world: () => StoreWorld) => {
  const store = () => world().delivery;

  it("reads every webhook of the project for the fan-out, enabled or not, and none of another project's", async () => {
    const projectId = await world().newProject();
    const other = await world().newProject();
    const on = await world().addWebhook(projectId, { url: URL, events: ['version_deployed'], enabled: true, now: FIXED_NOW });
    const off = await world().addWebhook(projectId, { url: URL, events: ['key_abuse'], enabled: false, now: FIXED_NOW });
    await world().addWebhook(other, { url: URL, events: ['key_abuse'], enabled: true, now: FIXED_NOW });
    expect(byId(await store().webhooksOf(projectId))).toEqual(
      byId([
        { id: on, url: URL, events: '["version_deployed"]', enabled: 1 },
        { id: off, url: URL, events: '["key_abuse"]', enabled: 0 },
      ]),
    );
  });

  it('reads no webhooks of a project that has none', async () => {
    expect(await store().webhooksOf(await world().newProject())).toEqual([]);
  });

  it("reads a project's name, and none for a project that does not exist", async () => {
    const projectId = await world().newProject('Aimbot');
    expect(await store().projectName(projectId)).toBe('Aimbot');
    expect(await store().projectName('prj_00000000000000000000')).toBeUndefined();
  });

  it("reads a webhook's state, and none for a webhook that does not exist", async () => {
    const projectId = await world().newProject();
    const webhookId = await world().addWebhook(projectId, { url: URL, events: ['version_deployed'], enabled: true, now: FIXED_NOW });
    expect(await store().webhookState(projectId, webhookId)).toEqual({ enabled: 1, url: URL });
    expect(await store().webhookState(projectId, 'whk_00000000000000000000')).toBeUndefined();
  });

  it('claims a delivery never tried, with a token of its own', async () => {
    const first = await store().claimDelivery(newDeliveryId(), FIXED_NOW, STALE_AFTER);
    const second = await store().claimDelivery(newDeliveryId(), FIXED_NOW, STALE_AFTER);
    expect(first).toEqual({ outcome: 'claimed', token: expect.any(String) });
    expect(second).toEqual({ outcome: 'claimed', token: expect.any(String) });
    expect(first).not.toEqual(second);
  });

  it('holds a delivery another attempt claimed, saying when it may be taken over', async () => {
    const deliveryId = newDeliveryId();
    await store().claimDelivery(deliveryId, FIXED_NOW, STALE_AFTER);
    expect(await store().claimDelivery(deliveryId, FIXED_NOW + 30, STALE_AFTER)).toEqual({ outcome: 'held', retryInSeconds: STALE_AFTER - 30 + 1 });
    expect(await store().claimDelivery(deliveryId, FIXED_NOW + STALE_AFTER - 1, STALE_AFTER)).toEqual({ outcome: 'held', retryInSeconds: 2 });
  });

  it('takes over a claim left sending for the stale time, and the old attempt can no longer mark it sent', async () => {
    const deliveryId = newDeliveryId();
    const old = await store().claimDelivery(deliveryId, FIXED_NOW, STALE_AFTER);
    const taken = await store().claimDelivery(deliveryId, FIXED_NOW + STALE_AFTER, STALE_AFTER);
    expect(taken).toEqual({ outcome: 'claimed', token: expect.any(String) });
    if (old.outcome !== 'claimed' || taken.outcome !== 'claimed') throw new Error('not claimed');
    expect(await store().markSent(deliveryId, old.token, FIXED_NOW + STALE_AFTER)).toBe(false);
    expect(await store().markSent(deliveryId, taken.token, FIXED_NOW + STALE_AFTER)).toBe(true);
  });

  it('says a delivery marked sent is sent, however late it is claimed again', async () => {
    const deliveryId = newDeliveryId();
    const claim = await store().claimDelivery(deliveryId, FIXED_NOW, STALE_AFTER);
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    expect(await store().markSent(deliveryId, claim.token, FIXED_NOW + 1)).toBe(true);
    expect(await store().claimDelivery(deliveryId, FIXED_NOW + 2, STALE_AFTER)).toEqual({ outcome: 'sent' });
    expect(await store().claimDelivery(deliveryId, FIXED_NOW + 10 * STALE_AFTER, STALE_AFTER)).toEqual({ outcome: 'sent' });
  });

  it('marks a claim sent only once', async () => {
    const deliveryId = newDeliveryId();
    const claim = await store().claimDelivery(deliveryId, FIXED_NOW, STALE_AFTER);
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    expect(await store().markSent(deliveryId, claim.token, FIXED_NOW)).toBe(true);
    expect(await store().markSent(deliveryId, claim.token, FIXED_NOW)).toBe(false);
  });

  it('marks nothing sent for a delivery never claimed', async () => {
    expect(await store().markSent(newDeliveryId(), 'no-such-token', FIXED_NOW)).toBe(false);
  });

  it('lets a retry claim a released delivery at once, and a released claim cannot be marked sent', async () => {
    const deliveryId = newDeliveryId();
    const claim = await store().claimDelivery(deliveryId, FIXED_NOW, STALE_AFTER);
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    await store().releaseClaim(deliveryId, claim.token);
    expect(await store().markSent(deliveryId, claim.token, FIXED_NOW)).toBe(false);
    expect(await store().claimDelivery(deliveryId, FIXED_NOW + 1, STALE_AFTER)).toEqual({ outcome: 'claimed', token: expect.any(String) });
  });

  it("releases nothing with a token that is not the claim's", async () => {
    const deliveryId = newDeliveryId();
    await store().claimDelivery(deliveryId, FIXED_NOW, STALE_AFTER);
    await store().releaseClaim(deliveryId, 'another-token');
    expect(await store().claimDelivery(deliveryId, FIXED_NOW + 1, STALE_AFTER)).toMatchObject({ outcome: 'held' });
  });

  it('disables an enabled webhook that still has the url, once', async () => {
    const projectId = await world().newProject();
    const webhookId = await world().addWebhook(projectId, { url: URL, events: ['version_deployed'], enabled: true, now: FIXED_NOW });
    expect(await store().disableWebhook(projectId, webhookId, URL, FIXED_NOW + 5)).toBe(true);
    expect(await store().disableWebhook(projectId, webhookId, URL, FIXED_NOW + 6)).toBe(false);
    expect(await store().webhookState(projectId, webhookId)).toEqual({ enabled: 0, url: URL });
    expect((await world().projects.listWebhooks(projectId))[0]).toMatchObject({ enabled: 0, updated_at: FIXED_NOW + 5 });
  });

  it('leaves a webhook enabled whose url was replaced since', async () => {
    const projectId = await world().newProject();
    const webhookId = await world().addWebhook(projectId, { url: URL, events: ['version_deployed'], enabled: true, now: FIXED_NOW });
    expect(await store().disableWebhook(projectId, webhookId, 'https://discord.com/api/webhooks/123/old-token', FIXED_NOW)).toBe(false);
    expect(await store().webhookState(projectId, webhookId)).toEqual({ enabled: 1, url: URL });
  });

  it('disables nothing, and creates nothing, for a webhook that does not exist', async () => {
    const projectId = await world().newProject();
    expect(await store().disableWebhook(projectId, 'whk_00000000000000000000', URL, FIXED_NOW)).toBe(false);
    expect(await store().webhookState(projectId, 'whk_00000000000000000000')).toBeUndefined();
  });
});
