import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayTokenAuthorizerEvent, AttributeValue, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { keyOf } from '#adapters/layout';
import { newId } from '#domain/ids';
import { sha256Hex } from '#domain/scripts';
import { callerOfToken } from '#domain/tokens';
import { DELIVERY_QUEUE } from '#domain/webhooks/delivery-settings';
import { ROUTES, type Route } from '#http/routes';
import { SERVICE_ENVIRONMENT } from '#lib/constructs/service-function';
import { demoDiscordWebhookUrl } from '#local/seed';
import { type BuildVariant, type BundleReport, bundleFunction, SERVICE_BUILD, SERVICE_FUNCTION_ESBUILD } from './support/bundler';
import { type ColdStartFunction, type ColdStartSample, coldStart } from './support/child-process';
import { BENCH_REGION, type BenchTable } from './support/dynamodb';
import { apiGatewayEvent, createBusinessProject, issueKeys, nowSeconds } from './support/fixtures';
import { checkoutRef, type RefTree } from './support/ref-tree';
import { type BenchResult, type Row, row } from './support/report';
import { median, round } from './support/stats';
import { startStubDiscord, startStubSqs } from './support/stub-services';

const NAME = 'cold-start';

const COLD_START_SETTINGS = {
  /** Timed fresh processes per function, after one untimed run that warms the file cache. */
  runs: 7,
  bundleTargetKiB: 300,
  coldStartTargetMs: 200,
  /** A process that has not answered by then has hung. */
  childTimeoutMs: 15_000,
} as const;

/** A way of building and starting the functions; only `service` (what the stack deploys) is held to the targets. */
interface ColdStartVariant extends BuildVariant {
  env: Record<string, string>;
  description: string;
  /** The variant's function for one of this tree's entries (another tree's may be named otherwise, or missing). */
  entryFor?: (entry: string) => string | undefined;
}

const SERVICE_VARIANT: ColdStartVariant = { ...SERVICE_BUILD, env: SERVICE_ENVIRONMENT, description: 'ServiceFunction as deployed' };
/** Experiments run on request (`--experiments`), reported beside the deployed build without targets. */
const EXPERIMENT_VARIANTS: ColdStartVariant[] = [
  {
    name: 'no-source-maps',
    esbuild: {},
    env: { POWERTOOLS_LOG_LEVEL: 'INFO' },
    description: 'same bundle, NODE_OPTIONS without --enable-source-maps',
  },
  {
    name: 'sdk-bundled',
    esbuild: { external: [], mainFields: ['module', 'main'] },
    env: SERVICE_ENVIRONMENT,
    description: '@aws-sdk bundled (its ESM builds, tree-shaken) instead of loaded from the runtime',
  },
];

/** Another tree's code, bundled as this tree's is (SERVICE_FUNCTION_ESBUILD) and started on the same events. */
const refVariant = (tree: RefTree): ColdStartVariant => ({
  ...SERVICE_BUILD,
  name: `ref-${tree.commit}`,
  root: tree.root,
  env: SERVICE_ENVIRONMENT,
  description: `${tree.ref} (${tree.commit}), bundled as this tree's functions`,
  entryFor: tree.entryFor,
});

/**
 * Bundle each function as the stack does, then time fresh Node 22 processes importing it and serving one request.
 * `against`: a git ref whose functions are measured in the same rounds, each beside this tree's, with their ratio.
 */
export async function benchColdStart(
  table: BenchTable,
  log: (line: string) => void,
  options: { experiments?: boolean; against?: string } = {},
): Promise<BenchResult> {
  const s = COLD_START_SETTINGS;
  const sqs = await startStubSqs();
  const discord = await startStubDiscord();
  const tree = options.against ? await checkoutRef(options.against) : undefined;
  try {
    if (tree) log(`${NAME}: ${tree.ref} is ${tree.commit}, checked out at ${tree.root}`);
    const variants = [SERVICE_VARIANT, ...(options.experiments ? EXPERIMENT_VARIANTS : []), ...(tree ? [refVariant(tree)] : [])];
    const rounds = variants.length * (s.runs + 1);
    const result = await measure(table, log, variants, await serviceFunctions(table, rounds, sqs, discord));
    // The event functions' first requests did their real work: the fan-out queued, the delivery posted.
    if (sqs.sent() < s.runs + 1) throw new Error(`the fan-out queued ${sqs.sent()} messages in ${rounds} runs`);
    if (discord.standIn.received().length < s.runs + 1) throw new Error(`the delivery posted ${discord.standIn.received().length} embeds in ${rounds} runs`);
    return result;
  } finally {
    tree?.remove();
    await sqs.close();
    await discord.close();
  }
}

async function measure(table: BenchTable, log: (line: string) => void, variants: ColdStartVariant[], functions: ColdStartFunction[]): Promise<BenchResult> {
  const s = COLD_START_SETTINGS;
  const cell = (variant: ColdStartVariant, fn: ColdStartFunction) => `${fn.entry.replace(/\.ts$/, '')} [${variant.name}]`;
  const entryOf = (variant: ColdStartVariant, fn: ColdStartFunction) => (variant.entryFor ? variant.entryFor(fn.entry) : fn.entry);
  const bundles = new Map<string, BundleReport>();
  const samples = new Map<string, ColdStartSample[]>();
  for (const variant of variants) {
    for (const fn of functions) {
      const entry = entryOf(variant, fn);
      if (entry === undefined) continue;
      bundles.set(cell(variant, fn), await bundleFunction(entry, variant));
      samples.set(cell(variant, fn), []);
    }
  }
  const failed = new Map<string, string>();
  // Round robin over functions, each function's variants one after another (in turn first), so a busy moment on the
  // machine lands on every variant of a function alike. Run 0 warms the file cache and DynamoDB Local, not counted.
  let eventIndex = 0;
  for (let run = 0; run <= s.runs; run++) {
    for (const fn of functions) {
      for (const variant of run % 2 === 0 ? variants : variants.toReversed()) {
        const key = cell(variant, fn);
        const bundle = bundles.get(key);
        if (!bundle || failed.has(key)) continue;
        const started = coldStart(fn, bundle.file, table, { env: variant.env, eventIndex: eventIndex++, timeoutMs: s.childTimeoutMs });
        // Another tree's function may not serve this tree's data or events: it is left out, saying why, not the run.
        const sample = variant.entryFor ? await started.catch((error: unknown) => void failed.set(key, String(error).slice(0, 300))) : await started;
        if (!sample) {
          log(`${NAME}: ${key} left out: ${failed.get(key)}`);
          continue;
        }
        if (run > 0) samples.get(key)?.push(sample);
      }
    }
    log(`${NAME}: round ${run}/${s.runs} done${run === 0 ? ' (warm-up, not counted)' : ''}`);
  }

  const measured = (key: string) => !failed.has(key) && (samples.get(key)?.length ?? 0) > 0;
  const p50 = (key: string, pick: (x: ColdStartSample) => number) => round(median((samples.get(key) ?? []).map(pick)));
  const kib = (key: string) => round((bundles.get(key)?.bytes ?? 0) / 1024, 1);
  const rows: Row[] = functions.flatMap((fn) => {
    const key = cell(SERVICE_VARIANT, fn);
    const label = fn.entry.replace(/\.ts$/, '');
    return [
      row(NAME, `${label} bundle`, kib(key), 'KiB', { target: { op: '<=', limit: s.bundleTargetKiB }, note: contents(key) }),
      row(
        NAME,
        `${label} first answer p50`,
        p50(key, (x) => x.sinceProcessStartMs),
        'ms',
        {
          target: { op: '<=', limit: s.coldStartTargetMs },
          note: breakdown(key),
        },
      ),
    ];
  });
  function contents(key: string): string {
    const bundle = bundles.get(key);
    const kb = (bytes: number) => `${round(bytes / 1024, 1)}`;
    const bundled = Object.entries(bundle?.bundledBytesByOrigin ?? {}).map(([origin, bytes]) => `${origin} ${kb(bytes)}`);
    const external = (bundle?.external ?? []).filter((name) => !name.startsWith('node:'));
    return `bundled (KiB): ${bundled.join(', ')}; external: ${external.join(', ') || 'none'}`;
  }
  function breakdown(key: string): string {
    const part = (pick: (x: ColdStartSample) => number) => p50(key, pick);
    return `node boot ${part((x) => x.bootMs)} + import ${part((x) => x.importMs)} + first request ${part((x) => x.firstRequestMs)} ms; CPU ${part((x) => x.cpuMs)} ms; spawn→answer ${part((x) => x.spawnToAnswerMs)} ms`;
  }
  if (variants.length > 1) {
    // One line per variant: the median over the functions of each one's p50, all measured in the same rounds.
    for (const variant of variants) {
      const keys = functions.map((fn) => cell(variant, fn)).filter(measured);
      const across = (pick: (x: ColdStartSample) => number) => round(median(keys.map((key) => p50(key, pick))));
      rows.push(
        row(NAME, `[${variant.name}] largest bundle`, Math.max(...keys.map(kib)), 'KiB', { note: variant.description }),
        row(
          NAME,
          `[${variant.name}] first answer, median of functions`,
          across((x) => x.sinceProcessStartMs),
          'ms',
          {
            note: `${keys.length} functions; import ${across((x) => x.importMs)} ms, first request ${across((x) => x.firstRequestMs)} ms, CPU ${across((x) => x.cpuMs)} ms`,
          },
        ),
      );
    }
  }
  for (const variant of variants.filter((v) => v.entryFor)) rows.push(...ratioRows(variant));
  function ratioRows(ref: ColdStartVariant): Row[] {
    const pairs = functions.filter((fn) => measured(cell(ref, fn))).map((fn) => ({ fn, ours: cell(SERVICE_VARIANT, fn), theirs: cell(ref, fn) }));
    const ratio = (ours: string, theirs: string, pick: (x: ColdStartSample) => number) => round(p50(ours, pick) / p50(theirs, pick), 2);
    const perFunction = pairs.map(({ fn, ours, theirs }) =>
      row(
        NAME,
        `${fn.entry.replace(/\.ts$/, '')} first answer ÷ ${ref.name}`,
        ratio(ours, theirs, (x) => x.sinceProcessStartMs),
        '×',
        {
          target: { op: '<=', limit: 1 },
          note: `${p50(ours, (x) => x.sinceProcessStartMs)} ms (${kib(ours)} KiB) vs ${p50(theirs, (x) => x.sinceProcessStartMs)} ms (${kib(theirs)} KiB, ${ref.entryFor?.(fn.entry)}); import ${p50(ours, (x) => x.importMs)} vs ${p50(theirs, (x) => x.importMs)} ms, CPU ÷ ${ratio(ours, theirs, (x) => x.cpuMs)}`,
        },
      ),
    );
    const across = (pick: (x: ColdStartSample) => number) => round(median(pairs.map(({ ours, theirs }) => p50(ours, pick) / p50(theirs, pick))), 2);
    const missing = functions.filter((fn) => !measured(cell(ref, fn))).map((fn) => `${fn.entry}${failed.has(cell(ref, fn)) ? ' (failed)' : ''}`);
    return [
      ...perFunction,
      row(
        NAME,
        `first answer ÷ ${ref.name}, median of ${pairs.length} functions`,
        across((x) => x.sinceProcessStartMs),
        '×',
        {
          target: { op: '<=', limit: 1 },
          note: `import ÷ ${across((x) => x.importMs)}, CPU ÷ ${across((x) => x.cpuMs)}; not in ${ref.name}: ${missing.join(', ') || 'none'}`,
        },
      ),
      // CPU time to the first answer does not wait on other processes: the steadier ratio on a busy machine.
      row(
        NAME,
        `CPU to first answer ÷ ${ref.name}, median of ${pairs.length} functions`,
        across((x) => x.cpuMs),
        '×',
        { target: { op: '<=', limit: 1 } },
      ),
    ];
  }
  for (const fn of functions) log(`${NAME}: ${cell(SERVICE_VARIANT, fn)} ${kib(cell(SERVICE_VARIANT, fn))} KiB; ${breakdown(cell(SERVICE_VARIANT, fn))}`);
  const functionDetails = Object.fromEntries([...bundles.keys()].map((key) => [key, { bundle: bundles.get(key), samples: samples.get(key) }]));
  return { rows, details: { settings: s, esbuild: SERVICE_FUNCTION_ESBUILD, variants, functions: functionDetails, leftOut: Object.fromEntries(failed) } };
}

/**
 * `runs` cold starts of one function as the stack bundles it, after one untimed run that warms the file cache: for a
 * section of its own (bench/discord.ts), beside this one's round robin over every function.
 */
export async function coldStartsOf(fn: ColdStartFunction, table: BenchTable, runs: number): Promise<{ bundle: BundleReport; samples: ColdStartSample[] }> {
  const bundle = await bundleFunction(fn.entry);
  const samples: ColdStartSample[] = [];
  for (let run = 0; run <= runs; run++) {
    const sample = await coldStart(fn, bundle.file, table, { env: SERVICE_VARIANT.env, eventIndex: run, timeoutMs: COLD_START_SETTINGS.childTimeoutMs });
    if (run > 0) samples.push(sample);
  }
  return { bundle, samples };
}

// ---- the functions and their first events ----

function expectApiStatus(status: number) {
  return (answer: unknown) => {
    const statusCode = (answer as { statusCode?: unknown } | null)?.statusCode;
    if (statusCode !== status) throw new Error(`expected status ${status}, got ${JSON.stringify(answer)}`);
  };
}

/** A bare request's answer: the route's own (a 4xx for a body it lacks is one), never a failure. */
function expectAnswered(answer: unknown): void {
  const statusCode = (answer as { statusCode?: unknown } | null)?.statusCode;
  if (typeof statusCode !== 'number' || statusCode >= 500) throw new Error(`expected the route's answer, got ${JSON.stringify(answer)}`);
}

/** An item as Lambda's stream JSON carries it: the marshalled item, as JSON (no binary attributes here). */
function streamImage(item: Record<string, unknown>): Record<string, AttributeValue> {
  return JSON.parse(JSON.stringify(marshall(item, { removeUndefinedValues: true }))) as Record<string, AttributeValue>;
}

function expectNoBatchFailures(answer: unknown): void {
  const failures = (answer as { batchItemFailures?: unknown } | null)?.batchItemFailures;
  if (!Array.isArray(failures) || failures.length > 0) throw new Error(`expected no batch item failures, got ${JSON.stringify(answer)}`);
}

/**
 * Every function the stack deploys (the six API handlers, the authorizer, the webhook fan-out and delivery,
 * the analytics ingest and daily detector), each with a realistic first event against one seeded project:
 * keys, versions and a webhook subscribed to `version_deployed`. `events` is how many distinct events each needs.
 */
async function serviceFunctions(
  table: BenchTable,
  events: number,
  sqs: Awaited<ReturnType<typeof startStubSqs>>,
  discord: Awaited<ReturnType<typeof startStubDiscord>>,
): Promise<ColdStartFunction[]> {
  const { stores } = table;
  const project = await createBusinessProject(stores, 'bench cold-start');
  const { projectId, ownerId } = project;
  const now = nowSeconds();
  await issueKeys(stores, projectId, 200);
  const keysToRevoke = await stores.dashboard.issueKeys({ projectId, count: events, tier: 'standard', maxUses: null, now });
  const telemetryKeys = await stores.dashboard.issueKeys({ projectId, count: 10, tier: 'standard', maxUses: null, now });
  // A leaked watermark per run, each on a handful of keys.
  const watermarks = Array.from({ length: events }, () => randomBytes(8).toString('hex'));
  for (const watermark of watermarks) await stores.dashboard.issueKeys({ projectId, count: 5, watermark, tier: 'standard', maxUses: null, now });
  const versions: { id: string }[] = [];
  for (let n = 1; n <= 3; n++)
    versions.push(
      await stores.dashboard.uploadVersion({ id: newId('ver'), projectId, sizeBytes: 20_000 + n, sha256: sha256Hex(`bench v${n}`), notes: `bench v${n}`, now }),
    );
  const webhookUrl = demoDiscordWebhookUrl();
  const webhookId = await stores.dashboard.addWebhook({ projectId, url: webhookUrl, events: ['version_deployed'], enabled: true, now });
  const versionItem = (await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.version(projectId, versions[2]?.id ?? '') }))).Item;
  if (!versionItem) throw new Error('bench version cannot be read back');

  // A fresh token hash per event: every run is a new caller for the rate limit, as the authorizer would pass it.
  const caller = () => callerOfToken(ownerId, randomBytes(32).toString('hex'), 'write');
  const route = (entry: Route['entry']) => {
    const found = ROUTES.find((r) => r.entry === entry);
    if (!found) throw new Error(`no route for ${entry}`);
    return { method: found.method, resource: found.path, projectId };
  };
  const at = <T>(list: readonly T[], run: number): T => list[run % list.length] as T;
  // A route needs an entry here only when a bare request (the path with the project and a key id, no body) would
  // not be a realistic first request; any other route, a new one too, gets that bare request and must not fail.
  const eventFor: { [Entry in Route['entry']]?: (run: number) => unknown } = {
    'list-keys': () => apiGatewayEvent({ ...route('list-keys'), caller: caller(), query: { limit: '50' } }),
    'issue-keys': () => apiGatewayEvent({ ...route('issue-keys'), caller: caller(), body: { count: 1 } }),
    'reset-hwid': (run) => apiGatewayEvent({ ...route('reset-hwid'), caller: caller(), body: { key_id: at(telemetryKeys, run).id } }),
    'update-key': (run) => apiGatewayEvent({ ...route('update-key'), keyId: at(telemetryKeys, run).id, caller: caller(), body: { note: `bench run ${run}` } }),
    'ban-key': (run) => apiGatewayEvent({ ...route('ban-key'), caller: caller(), body: { key_id: at(keysToRevoke, run).id, reason: 'bench' } }),
    'unban-key': (run) => apiGatewayEvent({ ...route('unban-key'), caller: caller(), body: { key_id: at(keysToRevoke, run).id } }),
    'extend-key': (run) => apiGatewayEvent({ ...route('extend-key'), caller: caller(), body: { key_id: at(telemetryKeys, run).id, duration: '1d' } }),
    'revoke-key': (run) => apiGatewayEvent({ ...route('revoke-key'), caller: caller(), body: { key_id: at(keysToRevoke, run).id } }),
    'revoke-bulk': (run) => apiGatewayEvent({ ...route('revoke-bulk'), caller: caller(), body: { watermark: at(watermarks, run) } }),
    rollback: (run) => apiGatewayEvent({ ...route('rollback'), caller: caller(), body: { version_id: at(versions, run).id } }),
    'get-stats': () => apiGatewayEvent({ ...route('get-stats'), caller: caller(), query: { granularity: 'hour', by: 'result' } }),
    'trace-leak': (run) => {
      const event = apiGatewayEvent({ ...route('trace-leak'), caller: caller() });
      return {
        ...event,
        headers: { ...event.headers, 'Content-Type': 'text/plain; charset=utf-8' },
        body: `print("run ${run}")\n-- WM_${at(watermarks, run)}`,
      };
    },
    'add-to-blacklist': (run) =>
      apiGatewayEvent({
        ...route('add-to-blacklist'),
        caller: caller(),
        body: { discord_id: String(100_000_000_000_000_000n + BigInt(run)), reason: 'bench' },
      }),
    'list-blacklist': () => apiGatewayEvent({ ...route('list-blacklist'), caller: caller(), query: { limit: '50' } }),
    'remove-from-blacklist': (run) =>
      apiGatewayEvent({ ...route('remove-from-blacklist'), entryId: `bld_${100_000_000_000_000_000n + BigInt(run)}`, caller: caller() }),
  };
  const bareRequest = (r: Route) => (run: number) =>
    apiGatewayEvent({ ...route(r.entry), caller: caller(), ...(r.path.includes('{key_id}') ? { keyId: at(telemetryKeys, run).id } : {}) });
  const authorizerEvent: APIGatewayTokenAuthorizerEvent = {
    type: 'TOKEN',
    authorizationToken: `Bearer ${project.token}`,
    methodArn: `arn:aws:execute-api:us-east-1:123456789012:benchapi/v1/GET/v1/projects/${projectId}/keys`,
  };

  // The stack's queue settings, with both queues on the stub SQS (the SDK sends to the queue URL's host).
  const queueEnv = { QUEUE_URL: sqs.queueUrl('delivery'), AWS_ENDPOINT_URL_SQS: sqs.url };
  const versionInserted = (run: number): DynamoDBStreamEvent => ({
    Records: [
      {
        eventID: `bench-${run}-${randomBytes(8).toString('hex')}`,
        eventName: 'INSERT',
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: BENCH_REGION,
        eventSourceARN: `arn:aws:dynamodb:${BENCH_REGION}:123456789012:table/${table.tableName}/stream/2025-01-01T00:00:00.000`,
        dynamodb: {
          ApproximateCreationDateTime: now,
          Keys: streamImage(keyOf.version(projectId, String(versionItem.id))),
          NewImage: streamImage(versionItem),
          SequenceNumber: String(1_000_000 + run),
          SizeBytes: 400,
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
      },
    ],
  });
  const deliveryMessage = (run: number): SQSEvent => {
    const body = JSON.stringify({
      deliveryId: `bench-${run}-${randomBytes(8).toString('hex')}:${webhookId}`,
      webhook: { id: webhookId },
      project: { id: projectId, name: 'bench cold-start' },
      event: {
        name: 'version_deployed',
        projectId,
        occurredAt: now,
        data: {
          versionId: String(versionItem.id),
          versionNumber: Number(versionItem.version_number),
          sizeBytes: Number(versionItem.size_bytes),
          notes: String(versionItem.notes),
        },
      },
    });
    return {
      Records: [
        {
          messageId: randomUUID(),
          receiptHandle: randomBytes(32).toString('base64'),
          body,
          attributes: {
            ApproximateReceiveCount: '1',
            SentTimestamp: String(Date.now()),
            SenderId: 'bench',
            ApproximateFirstReceiveTimestamp: String(Date.now()),
          },
          messageAttributes: {},
          md5OfBody: createHash('md5').update(body).digest('hex'),
          eventSource: 'aws:sqs',
          eventSourceARN: `arn:aws:sqs:${BENCH_REGION}:123456789012:delivery`,
          awsRegion: BENCH_REGION,
        },
      ],
    };
  };
  // What the loader side sends: executions and key validations of this project's keys.
  const telemetry = () => ({
    records: telemetryKeys.flatMap((key, i) => [
      { kind: 'execution', projectId, keyId: key.id, executor: `executor-${i}`, scriptHash: 'ab12cd34ef56ab78', at: nowSeconds() },
      { kind: 'validation', projectId, keyId: key.id, result: 'ok', executor: `executor-${i}`, fingerprint: randomBytes(16).toString('hex'), at: nowSeconds() },
    ]),
  });

  return [
    ...ROUTES.map((r) => {
      const event = eventFor[r.entry];
      return event
        ? { entry: `functions/${r.entry}.ts`, event, check: expectApiStatus(200) }
        : { entry: `functions/${r.entry}.ts`, event: bareRequest(r), check: expectAnswered };
    }),
    {
      entry: 'functions/authorizer.ts',
      event: () => authorizerEvent,
      check: (answer: unknown) => {
        if ((answer as { principalId?: unknown } | null)?.principalId !== ownerId)
          throw new Error(`authorizer did not allow the owner: ${JSON.stringify(answer)}`);
      },
    },
    { entry: 'functions/webhook-fanout.ts', event: versionInserted, check: expectNoBatchFailures, env: queueEnv },
    {
      entry: 'functions/webhook-delivery.ts',
      event: deliveryMessage,
      check: expectNoBatchFailures,
      env: {
        ...queueEnv,
        DEAD_LETTER_QUEUE_URL: sqs.queueUrl('delivery-dlq'),
        CLAIM_STALE_AFTER_SECONDS: String(DELIVERY_QUEUE.visibilityTimeoutSeconds),
        DISCORD_API_BASE: discord.apiBase,
      },
    },
    {
      entry: 'functions/ingest.ts',
      event: telemetry,
      check: (answer: unknown) => {
        const accepted = (answer as { accepted?: unknown } | null)?.accepted;
        if (accepted !== 20) throw new Error(`ingest accepted ${String(accepted)} of 20 records: ${JSON.stringify(answer)}`);
      },
    },
    {
      entry: 'functions/daily-detectors.ts',
      event: () => ({ version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date().toISOString(), detail: {} }),
      check: (answer: unknown) => {
        if (typeof answer !== 'object' || answer === null) throw new Error(`daily detector answered ${JSON.stringify(answer)}`);
      },
    },
  ];
}
