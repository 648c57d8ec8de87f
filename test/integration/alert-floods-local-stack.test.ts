import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '#dashboard/commands';
import { type DashboardContext, openContext } from '#dashboard/context';
import { ALERTS_PER_HOUR } from '#domain/analytics/alert-budget';
import { runAlertDigest } from '#domain/analytics/alert-digest';
import { HOUR_SECONDS, hourStart } from '#domain/time';
import { EMBED_COLORS, escapeMarkdown } from '#domain/webhooks/embeds';
import type { ReceivedMessage } from '#local/discord-stand-in';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';
import { expectEmbeds } from '#test-support/local-stack-inbox';

/**
 * Issue 21, items 1 and 2, end to end in the running local stack (`npm start` on the integration run's DynamoDB
 * Local): loader checks over HTTP, their telemetry through the telemetry queue and ingest, events through the
 * stream, fan-out and delivery to the stack's Discord stand-in. A key holder paces checks so that each lands in an
 * ingest batch of its own (coalescing within a batch never applies), and names executors with Discord markup.
 */

const FP = (n: number) => n.toString(16).padStart(64, '0');

let stack: LocalStack;
let dashboard: { context: DashboardContext; close(): void };

async function run(command: string, ...args: string[]): Promise<Record<string, unknown>> {
  return (await COMMANDS[command]!.prepare(args)(dashboard.context)) as Record<string, unknown>;
}

/** A Business project of the demo owner with a webhook (to the stack's stand-in) for `events`, and `keys` keys. */
async function projectWithKeys(name: string, events: string, keys: number) {
  const { projectId } = (await run('project create', '--owner', stack.ownerId, '--name', name)) as { projectId: string };
  await run('webhooks add', '--project', projectId, '--url', `https://discord.com/api/webhooks/${Date.now()}/token-${name.length}`, '--events', events);
  const issued = (await run('keys issue', '--project', projectId, '--count', String(keys))) as { keys: { key: string }[] };
  return { projectId, keys: issued.keys.map(({ key }) => key) };
}

async function validate(body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.baseUrl}/v1/loader/validate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ fingerprint: FP(1), ...body }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Waits until every check's telemetry is ingested (the deadline only guards a hang). */
async function telemetryDrained() {
  await expect.poll(() => stack.telemetryPending(), { timeout: 60_000, interval: 50 }).toBe(0);
}

const messagesOf = (projectId: string): ReceivedMessage[] =>
  stack.discord.received().filter((message) => message.embeds.some((embed) => embed.description.includes(projectId)));

beforeAll(async () => {
  stack = await startLocalStack({
    port: await freePort(),
    dynamodbEndpoint: dynamodbEndpoint(),
    tableName: `local-alerts-${Date.now()}`,
    stateFile: `/tmp/local-alerts-${process.pid}.json`,
    // Each paced check waits for its telemetry: a quicker stream read keeps 200 of them from waiting 250 ms each.
    checkStreamPollMs: 20,
  });
  dashboard = openContext({ kind: 'local', endpoint: stack.dynamodbEndpoint, tableName: stack.tableName });
}, 120_000);

afterAll(async () => {
  dashboard?.close();
  await stack?.stop();
});

describe('alert floods through the local stack', () => {
  it('200 paced checks with 200 new executor names post at most a handful of embeds, and the hour digest tells the owner all 200', async () => {
    const { projectId, keys } = await projectWithKeys('Flooded', 'new_executor', 4);
    const startedAt = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 200; i++) {
      expect((await validate({ project_id: projectId, key: keys[i % keys.length], executor: `Paced-${i}` })).body.code).toBe('KEY_VALID');
      // Paced: each check's telemetry is ingested before the next is sent, so every check is a batch of its own.
      await telemetryDrained();
    }
    const endedAt = Math.floor(Date.now() / 1000);

    // The hours the flood touched (one, or two across an hour boundary), each digested as the schedule would after it.
    const store = dashboard.context.stores.telemetry;
    const hours = [...new Set([hourStart(startedAt), hourStart(endedAt)])];
    for (const hour of hours) await runAlertDigest(store, hour + HOUR_SECONDS + 120, endedAt);
    await expectEmbeds(stack.discord, EMBED_COLORS.new_executor, hours.length, 'Digest of the hour');

    const embeds = messagesOf(projectId).flatMap((message) => message.embeds);
    const digests = embeds.filter((embed) => embed.title.startsWith('Digest of the hour'));
    const alerts = embeds.filter((embed) => !digests.includes(embed));
    expect(alerts.length).toBeLessThanOrEqual(ALERTS_PER_HOUR * hours.length);
    expect(embeds.length).toBeLessThanOrEqual((ALERTS_PER_HOUR + 1) * hours.length);
    // What the owner reads: each posted alert (one name, or a batch's summary of several), then each digest's held and untracked counts.
    const field = (embed: (typeof embeds)[number], name: string) =>
      Number((embed.fields.find((f) => f.name === name)?.value.match(/^[\d,]+/)?.[0] ?? '0').replaceAll(',', ''));
    const told =
      alerts.reduce((sum, embed) => sum + (embed.fields.some((f) => f.name === 'Count') ? field(embed, 'Count') : 1), 0) +
      digests.reduce((sum, embed) => sum + field(embed, 'Held back') + field(embed, 'Not tracked'), 0);
    expect(told).toBe(200);
  }, 300_000);
});

describe('sender text through the local stack', () => {
  it('a check whose executor is Discord markup reaches the stand-in as escaped text, in a message that lets nothing ping', async () => {
    const { projectId, keys } = await projectWithKeys('Marked up', 'new_executor', 1);
    const hostile = '# @everyone **free keys** [here](https://evil.example/x) <@123456789012345678> `run`';
    expect((await validate({ project_id: projectId, key: keys[0], executor: hostile })).body.code).toBe('KEY_VALID');
    const [embed] = await expectEmbeds(stack.discord, EMBED_COLORS.new_executor, 1, 'evil.example');
    expect(embed?.fields[0]).toEqual({ name: 'Executor', value: escapeMarkdown(hostile), inline: true });
    expect(embed?.fields[0]?.value).toBe('\\# \\@everyone \\*\\*free keys\\*\\* \\[here\\](https\\://evil.example/x) \\<\\@123456789012345678\\> \\`run\\`');
    const [message] = messagesOf(projectId);
    expect(message?.allowed_mentions).toEqual({ parse: [] });
  }, 120_000);

  it('a check whose executor holds a bidirectional override is refused with 400 naming the field, and posts nothing', async () => {
    const { projectId, keys } = await projectWithKeys('Reversed', 'new_executor', 1);
    expect(await validate({ project_id: projectId, key: keys[0], executor: 'Wave\u202Eexe.txt' })).toEqual({
      status: 400,
      body: { error: 'executor must not contain control, invisible or bidirectional-override characters' },
    });
    await telemetryDrained();
    expect(messagesOf(projectId)).toEqual([]);
  });

  it('every message the stand-in received sets allowed_mentions {"parse": []}', () => {
    const messages = stack.discord.received();
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message.allowed_mentions).toEqual({ parse: [] });
  });
});
