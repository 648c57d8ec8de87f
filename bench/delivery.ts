import { randomBytes } from 'node:crypto';
import type { Stores } from '#adapters/stores';
import { newId } from '#domain/ids';
import { sha256Hex } from '#domain/scripts';
import { startDeliveryPipeline } from '#local/delivery-pipeline';
import type { ReceivedMessage } from '#local/discord-stand-in';
import { demoDiscordWebhookUrl } from '#local/seed';
import type { BenchTable } from './support/dynamodb';
import { createBusinessProject, nowSeconds } from './support/fixtures';
import { type StackProcess, stackStores } from './support/local-stack';
import { type BenchResult, type Row, row } from './support/report';
import { percentile, round } from './support/stats';
import { startStubDiscord } from './support/stub-services';

const NAME = 'delivery';
const DELIVERY_SETTINGS = {
  uploads: 50,
  /** The stream poll interval `npm start` runs with (local/delivery-pipeline.ts default). */
  stackPollIntervalMs: 250,
  /** Intervals compared with `--experiments`, on a pipeline built in this process, fewer uploads each. */
  experimentIntervalsMs: [100, 250, 1_000],
  experimentUploads: 20,
  p50TargetMs: 2_000,
  /** How often the stand-in's inbox is read; the latency comes from the stand-in's own receipt time. */
  inboxPollMs: 25,
  /** An embed not received by then is reported lost. */
  waitLimitMs: 15_000,
} as const;

/** Where received embeds can be read, and when each arrived. */
type Inbox = () => Promise<ReceivedMessage[]>;

/**
 * Version upload (the dashboard's DashboardStore.uploadVersion) → DynamoDB stream → stream poller → fan-out →
 * in-process queue → delivery → the Discord stand-in, through `npm start` in its own process. Latency runs
 * from just before the upload to the stand-in's receipt time.
 */
export async function benchDelivery(
  stack: StackProcess,
  table: BenchTable,
  log: (line: string) => void,
  options: { experiments?: boolean } = {},
): Promise<BenchResult> {
  const s = DELIVERY_SETTINGS;
  const dashboard = stackStores(stack.info);
  const inbox: Inbox = async () => ((await (await fetch(`${stack.info.baseUrl}/_local/inbox.json`)).json()) as { messages: ReceivedMessage[] }).messages;
  let result: Awaited<ReturnType<typeof uploadAndWait>>;
  try {
    result = await uploadAndWait(dashboard.stores, inbox, s.uploads, s.stackPollIntervalMs);
  } finally {
    dashboard.close();
  }
  log(`${NAME}: npm start: p50 ${round(result.p50)} ms, p95 ${round(result.p95)} ms over ${result.latenciesMs.length} uploads`);
  const rows: Row[] = [
    row(NAME, 'upload → embed p50', round(result.p50), 'ms', {
      target: { op: '<=', limit: s.p50TargetMs },
      note: `npm start, stream poll interval ${s.stackPollIntervalMs} ms, ${s.uploads} uploads; max ${round(result.max)} ms`,
    }),
    row(NAME, 'upload → embed p95', round(result.p95), 'ms'),
    row(NAME, 'embeds lost or duplicated', result.lost + result.duplicates, '', { target: { op: '<=', limit: 0 } }),
  ];
  const details: Record<string, unknown> = { settings: s, stack: result };
  if (options.experiments) {
    for (const pollIntervalMs of s.experimentIntervalsMs) {
      const experiment = await inProcessPipeline(table, pollIntervalMs);
      log(`${NAME}: poll ${pollIntervalMs} ms: p50 ${round(experiment.p50)} ms, p95 ${round(experiment.p95)} ms`);
      rows.push(
        row(NAME, `[poll ${pollIntervalMs} ms] upload → embed p50`, round(experiment.p50), 'ms', {
          note: `in-process pipeline, ${s.experimentUploads} uploads`,
        }),
        row(NAME, `[poll ${pollIntervalMs} ms] upload → embed p95`, round(experiment.p95), 'ms'),
      );
      details[`poll ${pollIntervalMs} ms`] = experiment;
    }
  }
  return { rows, details };
}

/** The same pipeline (local/delivery-pipeline.ts) built here on the bench table, where the poll interval can be set. */
async function inProcessPipeline(table: BenchTable, pollIntervalMs: number) {
  const discord = await startStubDiscord();
  const pipeline = await startDeliveryPipeline({
    endpoint: table.endpoint,
    tableName: table.tableName,
    discordApiBase: discord.apiBase,
    pollIntervalMs,
    logLevel: 'ERROR',
  });
  try {
    const result = await uploadAndWait(table.stores, async () => discord.standIn.received(), DELIVERY_SETTINGS.experimentUploads, pollIntervalMs);
    return { ...result, deadLetters: pipeline.deadLetters().length };
  } finally {
    await pipeline.stop();
    await discord.close();
  }
}

async function uploadAndWait(stores: Stores, inbox: Inbox, uploads: number, pollIntervalMs: number) {
  const s = DELIVERY_SETTINGS;
  const { projectId } = await createBusinessProject(stores, 'bench delivery');
  await stores.dashboard.addWebhook({ projectId, url: demoDiscordWebhookUrl(), events: ['version_deployed'], enabled: true, now: nowSeconds() });
  const nonce = randomBytes(4).toString('hex');
  const latenciesMs: number[] = [];
  let lost = 0;
  for (let i = 0; i < uploads; i++) {
    // Letters, digits and spaces only, so the embed carries the notes unescaped.
    const notes = `bench ${nonce} upload ${i}`;
    const uploadedAt = Date.now();
    await stores.dashboard.uploadVersion({ id: newId('ver'), projectId, sizeBytes: 40_000 + i, sha256: sha256Hex(notes), notes, now: nowSeconds() });
    const receivedAt = await waitForEmbed(inbox, notes, uploadedAt + s.waitLimitMs);
    if (receivedAt === undefined) lost++;
    else latenciesMs.push(receivedAt - uploadedAt);
    // A random pause, so uploads land at every phase of the poll cycle rather than just after a poll.
    await sleep(Math.random() * pollIntervalMs);
  }
  // Copies would arrive after the originals: give them two more poll cycles to show up.
  await sleep(pollIntervalMs * 2 + 200);
  const posted = (await inbox()).filter((message) => JSON.stringify(message.embeds).includes(`bench ${nonce} upload `)).length;
  return {
    pollIntervalMs,
    p50: percentile(latenciesMs, 50),
    p95: percentile(latenciesMs, 95),
    max: Math.max(...latenciesMs),
    lost,
    duplicates: Math.max(0, posted - latenciesMs.length),
    latenciesMs,
  };
}

/** The stand-in's receipt time (ms since the epoch) of the embed carrying `notes`, or undefined past `deadline`. */
async function waitForEmbed(inbox: Inbox, notes: string, deadline: number): Promise<number | undefined> {
  while (Date.now() < deadline) {
    const message = (await inbox()).find((m) => JSON.stringify(m.embeds).includes(notes));
    if (message) return Date.parse(message.timestamp);
    await sleep(DELIVERY_SETTINGS.inboxPollMs);
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
