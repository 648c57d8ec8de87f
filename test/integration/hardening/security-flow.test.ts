import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { COMMANDS } from '#dashboard/commands';
import { type DashboardContext, openContext } from '#dashboard/context';
import { hashToken, newApiToken } from '#domain/tokens';
import type { OutgoingMessage } from '#domain/webhooks/ports';
import { InProcessQueue } from '#local/in-process-queue';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, scriptFileOf } from '#test-support/fixtures';
import { freePort, type RawRequestInput, rawRequest, reportFigure } from '#test-support/hardening';
import { captureAllOutput, leakedSecrets } from '#test-support/output-capture';

/**
 * One full flow through the local stack with everything it prints captured: tokens made with the dashboard,
 * the authorizer with good and bad tokens, every endpoint, an upload fanned out to six webhook configs (three
 * Discord ones that answer 500-then-200, 404, 429-then-200 and 400, four that are not Discord), delivered through
 * the pipeline. Not one line may hold a raw token, a usage-plan key value (the token's SHA-256) or a webhook
 * token, nor may any queue message or dead letter hold a webhook token; the table holds no raw token; only the
 * Discord API base is ever fetched.
 */

const HOOKS = {
  flaky: { id: '100000000000000001', token: 'flakyHookToken-must-never-be-logged-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  gone: { id: '100000000000000002', token: 'goneHookToken-must-never-be-logged-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' },
  limited: { id: '100000000000000003', token: 'limitedHookToken-must-never-be-logged-CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC' },
  refused: { id: '100000000000000008', token: 'refusedHookToken-must-never-be-logged-EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE' },
};
const FOREIGN_TOKEN = 'foreignHookToken-must-never-be-logged-DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD';
const NOT_DISCORD = [
  `https://example.com/api/webhooks/100000000000000004/${FOREIGN_TOKEN}`,
  `http://discord.com/api/webhooks/100000000000000005/${FOREIGN_TOKEN}`,
  `https://discord.com.evil.test/api/webhooks/100000000000000006/${FOREIGN_TOKEN}`,
  `https://discord.com@evil.test/api/webhooks/100000000000000007/${FOREIGN_TOKEN}`,
];

/** A Discord on 127.0.0.1 that answers each hook by its script and records every path it was asked for. */
function scriptedDiscord() {
  const paths: string[] = [];
  const attempts = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    for await (const chunk of req) void chunk;
    const path = req.url ?? '';
    paths.push(path);
    const hook = Object.entries(HOOKS).find(([, { id }]) => path.includes(`/webhooks/${id}/`))?.[0];
    const attempt = (attempts.get(path) ?? 0) + 1;
    attempts.set(path, attempt);
    const reply = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (hook === 'flaky' && attempt === 1) return reply(500, { message: 'upstream error' });
    if (hook === 'gone') return reply(404, { message: 'Unknown Webhook', code: 10015 });
    if (hook === 'limited' && attempt === 1) return reply(429, { message: 'You are being rate limited.', retry_after: 0.2, global: false });
    if (hook === 'refused') return reply(400, { message: 'Cannot send an empty message', code: 50006 });
    return reply(200, { id: '1', channel_id: '2', embeds: [] });
  });
  return {
    paths,
    server,
    start: () =>
      new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v10`))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let stack: LocalStack;
let port: number;
let dashboard: { context: DashboardContext; close(): void };
let discord: ReturnType<typeof scriptedDiscord>;
let discordBase: string;
let fetchSpy: MockInstance<typeof fetch>;
/** Every message body the local stack's queues were given: sent, sent again later, or set aside as a dead letter. */
let queueSpies: MockInstance[];
const queuedBodies = () =>
  queueSpies.flatMap((spy) =>
    spy.mock.calls.flatMap(([first]) => (Array.isArray(first) ? first.map((message: OutgoingMessage) => message.body) : [String(first)])),
  );

async function dashboardRun<T>(command: string, ...argv: string[]): Promise<T> {
  const run = COMMANDS[command]?.prepare(argv);
  if (!run) throw new Error(`no command ${command}`);
  return (await run(dashboard.context)) as T;
}

beforeAll(async () => {
  discord = scriptedDiscord();
  discordBase = await discord.start();
  port = await freePort();
  stack = await startLocalStack({
    port,
    dynamodbEndpoint: dynamodbEndpoint(),
    tableName: `security-flow-${Date.now()}`,
    stateFile: `/tmp/security-flow-${process.pid}.json`,
    discordApiBase: discordBase,
  });
  dashboard = openContext({
    kind: 'local',
    endpoint: stack.dynamodbEndpoint,
    tableName: stack.tableName,
    scripts: { bucketName: stack.bucketName, endpoint: stack.s3Endpoint },
  });
  fetchSpy = vi.spyOn(globalThis, 'fetch');
  queueSpies = [vi.spyOn(InProcessQueue.prototype, 'sendBatch'), vi.spyOn(InProcessQueue.prototype, 'deadLetter')];
}, 120_000);

afterAll(async () => {
  fetchSpy?.mockRestore();
  for (const spy of queueSpies ?? []) spy.mockRestore();
  dashboard?.close();
  await stack?.stop();
  await discord?.close();
});

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

describe('secrets across a full flow through the local stack', () => {
  it('keeps raw tokens out of the table: owner create and token create store only the SHA-256', async () => {
    const { ownerId, token } = await dashboardRun<{ ownerId: string; token: string }>('owner create');
    const { token: second } = await dashboardRun<{ token: string }>('token create', '--owner', ownerId);
    const db = createDocumentClient(localDynamoConfig(stack.dynamodbEndpoint));
    const { Items = [] } = await db.send(new ScanCommand({ TableName: stack.tableName })).finally(() => db.destroy());
    const dump = JSON.stringify(Items);
    expect(leakedSecrets(dump, [token, second, stack.token])).toEqual([]);
    expect(dump).toContain(`TOKEN#${hashToken(token)}`);
    expect(dump).toContain(`TOKEN#${hashToken(second)}`);
    reportFigure(`table scan after owner create + token create: ${Items.length} items, 0 raw tokens, hashes present`);
  });

  it('prints no raw token, token hash or webhook token in any log line, and fetches nothing but the Discord API base', async () => {
    const { ownerId, token } = await dashboardRun<{ ownerId: string; token: string }>('owner create');
    const { projectId } = await dashboardRun<{ projectId: string }>('project create', '--owner', ownerId, '--name', 'Secrets');
    const { keys } = await dashboardRun<{ keys: { id: string; watermark: string }[] }>('keys issue', '--project', projectId, '--count', '3');
    const urls = Object.values(HOOKS).map(({ id, token: hookToken }) => `https://discord.com/api/webhooks/${id}/${hookToken}`);
    for (const url of urls) await dashboardRun('webhooks add', '--project', projectId, '--url', url, '--events', 'version_deployed');
    // The CLI refuses these; a config written another way (the real dashboard, an older CLI) must still never be fetched.
    const { stores, now } = dashboard.context;
    for (const url of NOT_DISCORD) await stores.dashboard.addWebhook({ projectId, url, events: ['version_deployed'], enabled: true, now: now() });

    const badTokens = [newApiToken(), `${token}x`, token.toUpperCase(), `${token.slice(0, 20)}\t${token.slice(20)}`];
    const output = captureAllOutput();
    let requests = 0;
    try {
      // One upload, fanned out to all eight configs: four reach the scripted Discord, four are refused unsent.
      const { id: versionId } = await dashboardRun<{ id: string }>(
        'versions upload',
        '--project',
        projectId,
        '--file',
        scriptFileOf(2048),
        '--notes',
        'security flow',
      );

      const send = async (input: RawRequestInput) => {
        requests += 1;
        return rawRequest(port, input);
      };
      const auth = (value: string): [string, string][] => [
        ['Authorization', value],
        ['Content-Type', 'application/json'],
      ];
      const base = `/v1/projects/${projectId}`;
      const good = auth(`Bearer ${token}`);
      for (const target of [`${base}/keys`, `${base}/keys?limit=1&offset=1`, `${base}/versions`, `${base}/webhooks`, `${base}/keys?limit=${token}`]) {
        await send({ method: 'GET', target, headers: good });
      }
      await send({ method: 'POST', target: `${base}/keys/revoke`, headers: good, body: JSON.stringify({ key_id: keys[0]?.id }) });
      await send({ method: 'POST', target: `${base}/keys/revoke`, headers: good, body: JSON.stringify({ key_id: token }) });
      await send({ method: 'POST', target: `${base}/keys/revoke-bulk`, headers: good, body: JSON.stringify({ watermark: keys[1]?.watermark }) });
      await send({ method: 'POST', target: `${base}/keys/revoke-bulk`, headers: good, body: JSON.stringify({ watermark: `WM_${token}` }) });
      await send({ method: 'POST', target: `${base}/versions/rollback`, headers: good, body: JSON.stringify({ version_id: versionId }) });
      await send({ method: 'POST', target: `${base}/versions/rollback`, headers: good, body: `{"version_id": "${token}"` });
      for (const bad of badTokens) {
        for (const header of [`Bearer ${bad}`, bad, `Basic ${bad}`]) await send({ method: 'GET', target: `${base}/keys`, headers: auth(header) });
      }

      const postsTo = (hook: keyof typeof HOOKS) => discord.paths.filter((path) => path.includes(`/webhooks/${HOOKS[hook].id}/`)).length;
      const rejected = () => output.text().split('Rejected webhook config').length - 1;
      await waitFor(
        () => postsTo('flaky') >= 2 && postsTo('limited') >= 2 && postsTo('gone') >= 1 && postsTo('refused') >= 1 && rejected() >= NOT_DISCORD.length,
        120_000,
      );
      // A little longer, so a duplicate post would have time to show.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect([postsTo('flaky'), postsTo('limited'), postsTo('gone'), postsTo('refused'), rejected()]).toEqual([2, 2, 1, 1, NOT_DISCORD.length]);
    } finally {
      output.restore();
    }

    const { webhooks: demoHooks } = (
      await rawRequest(port, { method: 'GET', target: `/v1/projects/${stack.projectId}/webhooks`, headers: [['Authorization', `Bearer ${stack.token}`]] })
    ).json as { webhooks: { url: string }[] };
    const webhookTokens = [...Object.values(HOOKS).map((hook) => hook.token), FOREIGN_TOKEN, ...demoHooks.map((hook) => hook.url.split('/').at(-1) ?? '')];
    const secrets = [token, hashToken(token), stack.token, hashToken(stack.token), ...badTokens, ...badTokens.map(hashToken), ...webhookTokens];
    const text = output.text();
    const bodies = queuedBodies();

    expect(leakedSecrets(text, secrets)).toEqual([]);
    // The queue and its dead letters name a webhook by id only: no body carries a URL with its token.
    expect(bodies.length).toBeGreaterThanOrEqual(Object.keys(HOOKS).length + NOT_DISCORD.length + 1);
    expect(queueSpies[1]?.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(leakedSecrets(bodies.join('\n'), webhookTokens)).toEqual([]);
    const fetched = fetchSpy.mock.calls.map(([input]) => String(input instanceof Request ? input.url : input));
    expect(fetched.length).toBeGreaterThanOrEqual(5);
    expect(fetched.filter((url) => !url.startsWith(`${discordBase}/webhooks/`))).toEqual([]);
    reportFigure(
      `log scan (local stack flow): ${requests} HTTP requests, ${fetched.length} Discord posts, ${output.lines().length} log lines, ${secrets.length} secrets searched, 0 found; ` +
        `${bodies.length} queue and dead-letter bodies, 0 webhook tokens; ` +
        `${NOT_DISCORD.length} non-Discord configs never fetched`,
    );
  });
});
