import { Logger } from '@aws-lambda-powertools/logger';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { localDynamoConfig } from '#adapters/client';
import { fingerprintAttribute, keyOf } from '#adapters/layout';
import { createStores } from '#adapters/stores';
import { linkDiscord } from '#domain/discord/link';
import { RefusalTally } from '#domain/unsigned-refusals';
import { createInteractionsHandler } from '#http/discord-interactions';
import { type DiscordKeyPair, memoryDiscordKeyPair } from '#local/discord-key';
import { capacityRecordingClient } from '#test-support/consumed-capacity';
import { interactionEvent, slashCommand } from '#test-support/discord-events';
import { coldStartsOf } from './cold-start';
import type { BenchTable } from './support/dynamodb';
import { createBusinessProject, lambdaContext, nowSeconds } from './support/fixtures';
import { type BenchResult, type Row, row } from './support/report';
import { median, percentile, round } from './support/stats';

const NAME = 'discord';

const DISCORD_BENCH_SETTINGS = {
  /** Warm replies timed per command, one after another, in one container. */
  repliesPerCommand: 200,
  /** Cold starts of the Discord function, each a fresh Node 22 process serving a signed `/status`. */
  coldStarts: 7,
  /** Discord gives an interaction this long for its first reply. */
  replyDeadlineMs: 3_000,
} as const;

const BUYER = '123456789012345678';
const labelOf = (name: string) => (name === 'PING' ? name : `/${name}`);

/**
 * Buyers' Discord commands (docs/discord.md): each command's reply time warm, in one container on DynamoDB Local,
 * the DynamoDB requests each makes, and the cold start of the function that answers (bundled as the stack deploys
 * it, a fresh process answering a signed `/status`), which must stay far inside Discord's 3 seconds.
 */
export async function benchDiscord(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = DISCORD_BENCH_SETTINGS;
  const application = memoryDiscordKeyPair();
  const { projectId, ownerId, token } = await createBusinessProject(table.stores, 'bench discord');
  await linkDiscord(table.stores.discord, projectId, { publicKey: application.publicKeyHex }, nowSeconds());
  const [bound] = await table.stores.dashboard.issueKeys({ projectId, count: 1, tier: 'standard', maxUses: null, maxFingerprints: 2, now: nowSeconds() });
  if (!bound) throw new Error('no key issued');
  // A machine bound, as a check would bind it, so the first /resethwid resets it and the later ones meet the cooldown.
  await table.db.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: keyOf.key(bound.id),
      UpdateExpression: 'SET fingerprints.#fp = :at',
      ExpressionAttributeNames: { '#fp': fingerprintAttribute('ab'.repeat(32)) },
      ExpressionAttributeValues: { ':at': nowSeconds() },
    }),
  );

  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const stores = createStores(recorder.db, table.tableName);
  const handler = createInteractionsHandler({
    store: stores.discord,
    audit: stores.audit,
    rateLimits: stores.rateLimits,
    refusals: new RefusalTally(),
    blacklist: stores.blacklist,
    loaderBaseUrl: () => 'https://loader.example.com',
    now: nowSeconds,
    logger: new Logger({ serviceName: 'bench-discord', logLevel: 'ERROR' }),
  });
  const send = async (body: string, keys: DiscordKeyPair = application) => {
    const result = await handler(interactionEvent({ projectId, body, now: nowSeconds(), application: keys }), lambdaContext('discord'));
    if (result.statusCode !== 200) throw new Error(`the endpoint answered ${result.statusCode}: ${result.body}`);
    return result.body;
  };

  // The first redeem links the key; every later one finds it the buyer's already (the same one conditional write).
  const commands: Record<string, string> = {
    redeem: slashCommand('redeem', BUYER, bound.key),
    status: slashCommand('status', BUYER),
    // The first resets the key; every later one meets its cooldown (the same write, refused by its condition).
    resethwid: slashCommand('resethwid', BUYER),
    loader: slashCommand('loader', BUYER),
    PING: '{"type":1}',
  };
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const [name, body] of Object.entries(commands)) {
    const times: number[] = [];
    const requests: number[] = [];
    for (let i = 0; i < s.repliesPerCommand; i++) {
      recorder.take();
      const started = performance.now();
      await send(body);
      times.push(performance.now() - started);
      requests.push(recorder.take().requests);
    }
    const p50 = round(median(times), 2);
    const p99 = round(percentile(times, 99), 2);
    const perReply = Math.max(...requests);
    rows.push(
      row(NAME, `${labelOf(name)} reply warm p50`, p50, 'ms'),
      row(NAME, `${labelOf(name)} reply warm p99`, p99, 'ms', { target: { op: '<=', limit: s.replyDeadlineMs } }),
      row(NAME, `${labelOf(name)} DynamoDB requests per reply`, perReply, '', { note: `the first reply ${requests[0]}, later ones ${requests.at(-1)}` }),
    );
    details[name] = { p50, p99, requestsFirst: requests[0], requestsLater: requests.at(-1) };
    log(`${NAME}: ${labelOf(name)} p50 ${p50} ms, p99 ${p99} ms, ${requests[0]} then ${requests.at(-1)} DynamoDB requests`);
  }

  const cold = await coldStartsOf(
    {
      entry: 'functions/discord-interactions.ts',
      event: () => interactionEvent({ projectId, body: commands.status ?? '', now: nowSeconds(), application }),
      check: (answer) => {
        if ((answer as { statusCode?: unknown } | null)?.statusCode !== 200) throw new Error(`the cold function answered ${JSON.stringify(answer)}`);
      },
    },
    table,
    s.coldStarts,
  );
  // The authorizer's cold start in the same minutes: a busy machine slows both, their ratio much less.
  const reference = await coldStartsOf(
    {
      entry: 'functions/authorizer.ts',
      event: () => ({
        type: 'TOKEN',
        authorizationToken: `Bearer ${token}`,
        methodArn: `arn:aws:execute-api:us-east-1:123456789012:api/v1/GET/v1/projects/${projectId}/keys`,
      }),
      check: (answer) => {
        if ((answer as { principalId?: unknown } | null)?.principalId !== ownerId) throw new Error(`the authorizer answered ${JSON.stringify(answer)}`);
      },
    },
    table,
    s.coldStarts,
  );
  const firstAnswer = cold.samples.map((sample) => sample.sinceProcessStartMs);
  const referenceAnswer = median(reference.samples.map((sample) => sample.sinceProcessStartMs));
  rows.push(
    row(NAME, 'cold start: first /status answer p50 (since process start)', round(median(firstAnswer)), 'ms', {
      target: { op: '<=', limit: s.replyDeadlineMs },
      note: `import ${round(median(cold.samples.map((x) => x.importMs)))} ms + first request ${round(median(cold.samples.map((x) => x.firstRequestMs)))} ms; worst of ${s.coldStarts} ${round(Math.max(...firstAnswer))} ms`,
    }),
    row(NAME, 'cold start: first /status answer ÷ the authorizer cold start, same run', round(median(firstAnswer) / referenceAnswer, 2), '×', {
      note: `authorizer p50 ${round(referenceAnswer)} ms in the same run`,
    }),
    row(NAME, 'Discord function bundle', round(cold.bundle.bytes / 1024, 1), 'KiB'),
  );
  details.coldStart = { bundleBytes: cold.bundle.bytes, samples: cold.samples, authorizerSamples: reference.samples };
  recorder.db.destroy();
  return { rows, details: { settings: s, ...details } };
}
