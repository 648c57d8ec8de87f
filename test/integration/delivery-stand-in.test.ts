import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildEmbed } from '#domain/webhooks/embeds';
import { INBOX_CSP } from '#local/inbox-page';
import { type ServedStandIn, serveStandIn } from '#test-support/delivery-helpers';
import { FIXED_NOW } from '#test-support/event-fixtures';

let served: ServedStandIn;
const HOOK = '/_local/discord/webhooks/123456789012345678/tok_en';

const embed = (versionNumber = 3, occurredAt = FIXED_NOW) =>
  buildEmbed(
    { name: 'version_deployed', projectId: 'prj_1', occurredAt, data: { versionId: 'v', versionNumber, sizeBytes: 2048, notes: '' } },
    'Stand-in Script',
  );

const post = (path: string, body: unknown) =>
  fetch(`${served.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

beforeAll(async () => {
  served = await serveStandIn();
});
afterAll(() => served.close());
beforeEach(() => served.standIn.clear());

describe('Discord stand-in: Execute Webhook', () => {
  it('answers ?wait=true with 200 and the message (id, channel_id, embeds), and keeps it', async () => {
    const response = await post(`${HOOK}?wait=true`, { embeds: [embed()] });
    expect(response.status).toBe(200);
    const message = (await response.json()) as Record<string, unknown>;
    expect(message).toMatchObject({ id: expect.stringMatching(/^\d+$/), channel_id: expect.any(String), webhook_id: '123456789012345678', embeds: [embed()] });
    expect(served.standIn.received()).toEqual([message]);
  });

  it('answers without wait with 204 and no body', async () => {
    const response = await post(HOOK, { embeds: [embed()] });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(served.standIn.received()).toHaveLength(1);
  });

  it.each([
    ['invalid JSON', '{"embeds": [', 50109],
    ['an empty message', { embeds: [] }, 50006],
    ['an embed over a limit', { embeds: [{ ...embed(), title: 'x'.repeat(257) }] }, 50035],
    ['a field with an empty value', { embeds: [{ ...embed(), fields: [{ name: 'Notes', value: '', inline: true }] }] }, 50035],
    ['something that is not an embed', { embeds: ['hello'] }, 50035],
  ])('refuses %s with 400 and Discord’s code', async (_, body, code) => {
    const response = await post(`${HOOK}?wait=true`, body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code });
    expect(served.standIn.received()).toEqual([]);
  });

  it('answers a webhook id that is not a snowflake like Discord: 404 Unknown Webhook', async () => {
    const response = await post('/_local/discord/webhooks/abc/tok?wait=true', { embeds: [embed()] });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: 'Unknown Webhook', code: 10015 });
  });

  it('accepts the API-versioned path the delivery posts to', async () => {
    const response = await post('/_local/discord/api/v10/webhooks/1/t?wait=true', { embeds: [embed()] });
    expect(response.status).toBe(200);
  });
});

describe('Discord stand-in: inbox', () => {
  it('serves the inbox page with a CSP that allows no inline script', async () => {
    const response = await fetch(`${served.url}/_local/inbox`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(INBOX_CSP);
    expect(INBOX_CSP).toContain("script-src 'self'");
    expect(await response.text()).toContain('<script src="/_local/inbox.js"></script>');
  });

  it('lists received messages newest first as JSON', async () => {
    await post(`${HOOK}?wait=true`, { embeds: [embed(1)] });
    await post(`${HOOK}?wait=true`, { embeds: [embed(2)] });
    const { messages } = (await (await fetch(`${served.url}/_local/inbox.json`)).json()) as { messages: { embeds: { fields: { value: string }[] }[] }[] };
    expect(messages.map((message) => message.embeds[0]?.fields[0]?.value)).toEqual(['v2', 'v1']);
  });

  it('lists by when the event happened, not by when its delivery arrived: uploads received as v2, v3, v1 read v3, v2, v1', async () => {
    const DAY = 86_400;
    for (const [version, daysAgo] of [
      [2, 1],
      [3, 0],
      [1, 2],
    ] as const)
      await post(`${HOOK}?wait=true`, { embeds: [embed(version, FIXED_NOW - daysAgo * DAY)] });
    const { messages } = (await (await fetch(`${served.url}/_local/inbox.json`)).json()) as {
      messages: { webhook_id: string; embeds: { fields: { value: string }[] }[] }[];
    };
    expect(messages.map((message) => message.embeds[0]?.fields[0]?.value)).toEqual(['v3', 'v2', 'v1']);
    expect(messages.map((message) => message.webhook_id)).toEqual(['123456789012345678', '123456789012345678', '123456789012345678']);
  });

  it('leaves other /_local/ paths to the next extension', async () => {
    expect((await fetch(`${served.url}/_local/other`)).status).toBe(404);
  });
});
