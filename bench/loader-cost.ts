import { randomBytes } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyResult, SQSEvent } from 'aws-lambda';
import { localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { QueueTelemetrySink, TELEMETRY_QUEUE } from '#adapters/telemetry-queue';
import { AddressTally } from '#domain/address-tally';
import { FullCopyTally } from '#domain/full-copies';
import { checkTelemetry } from '#domain/key-check';
import type { KeyCheckStore, TelemetrySink } from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import { ScriptCache, sha256Hex, WATERMARK_PLACEHOLDER } from '#domain/scripts';
import { utcDate } from '#domain/time';
import type { MessageSender, OutgoingMessage } from '#domain/webhooks/ports';
import { createIngestQueueHandler } from '#functions/ingest-queue';
import { createScriptHandler, SCRIPT_CACHE_BYTES } from '#http/loader-script';
import { createValidateHandler } from '#http/loader-validate';
import { SCRIPT_ROUTE, VALIDATE_ROUTE } from '#http/public-routes';
import { buildLoaderEvent } from '#local/proxy-event';
import { type CapacityTally, capacityRecordingClient, indexUnits } from '#test-support/consumed-capacity';
import { MemoryScriptStore } from '#test-support/memory-stores';
import type { BenchTable } from './support/dynamodb';
import { createBusinessProject, lambdaContext, nowSeconds } from './support/fixtures';
import { PRICES, SECONDS_PER_MONTH } from './support/prices';
import { type BenchResult, type Row, row } from './support/report';
import { mapBounded, percentile, round, timed } from './support/stats';
import { countingStreamIngest } from './support/stream-ingest';

const NAME = 'loader-cost';
const LOADER_COST_SETTINGS = {
  /** Keys checked round-robin: no key comes near its 120 checks a minute. */
  keys: 400,
  sequentialChecks: 300,
  concurrentChecks: 1_200,
  concurrency: 16,
  revokeTrials: 100,
  /** Checks whose telemetry must all reach the aggregates. */
  telemetryChecks: 10_000,
  scriptBytes: 64 * 1024,
  scriptFetches: 300,
  /** Both the loader's and the ingest functions' memory (ServiceFunction), which Lambda bills by. */
  functionMemoryGb: 0.5,
} as const;

type FrontDoor = 'rest' | 'http';
/** Lambda's SQS poller receives and deletes at most 10 messages a request. */
const SQS_MESSAGES_PER_REQUEST = 10;

/** What a path was measured to do, in total over `requests` answered requests and the ingest of their telemetry. */
interface Measured {
  requests: number;
  /** DynamoDB requests and capacity on the answer's path. */
  dynamoRequests: number;
  writeUnits: number;
  readUnits: number;
  handlerMs: number;
  answerBytes: number;
  sqsSends: number;
  /** Queue messages ingested (each costs its share of a receive and a delete). */
  sqsIngested: number;
  s3Gets: number;
  ingest: { writeUnits: number; readUnits: number; ms: number; invocations: number };
}

/** Cost per million requests, by part, from what was measured and the list prices. */
function costPerMillion(m: Measured, door: FrontDoor): { total: number; parts: Record<string, number> } {
  const per = (value: number) => (value / m.requests) * 1e6;
  const bytesPerAnswer = m.answerBytes / m.requests;
  const parts: Record<string, number> = {
    [door === 'rest' ? 'REST API' : 'HTTP API']:
      door === 'rest' ? PRICES.restApiPerMillion : PRICES.httpApiPerMillion * Math.max(1, Math.ceil(bytesPerAnswer / PRICES.httpApiMeteredBytes)),
    'Lambda requests': PRICES.lambdaPerMillionRequests,
    'Lambda duration': per(m.handlerMs / 1000) * LOADER_COST_SETTINGS.functionMemoryGb * PRICES.lambdaPerGbSecond,
    'DynamoDB on the answer path': (per(m.writeUnits) * PRICES.dynamoPerMillionWriteUnits + per(m.readUnits) * PRICES.dynamoPerMillionReadUnits) / 1e6,
    SQS: (per(m.sqsSends + 2 * Math.ceil(m.sqsIngested / SQS_MESSAGES_PER_REQUEST)) * PRICES.sqsPerMillionRequests) / 1e6,
    S3: (per(m.s3Gets) * PRICES.s3PerMillionGets) / 1e6,
    'data transfer out': (per(m.answerBytes) / 1e9) * PRICES.dataTransferOutPerGb,
    ingest:
      (per(m.ingest.writeUnits) * PRICES.dynamoPerMillionWriteUnits +
        per(m.ingest.readUnits) * PRICES.dynamoPerMillionReadUnits +
        per(m.ingest.invocations) * PRICES.lambdaPerMillionRequests) /
        1e6 +
      per(m.ingest.ms / 1000) * LOADER_COST_SETTINGS.functionMemoryGb * PRICES.lambdaPerGbSecond,
  };
  return { total: Object.values(parts).reduce((sum, usd) => sum + usd, 0), parts };
}

/** A month of `perSecond` requests at a cost per million (API Gateway's volume tiers left out: an upper bound). */
const monthlyCost = (perSecond: number, perMillion: number): number => ((perSecond * SECONDS_PER_MONTH) / 1e6) * perMillion;

const silent = new Logger({ serviceName: 'bench-loader-cost', logLevel: 'SILENT' });

/** A queue that takes every message at once and counts it: the SendMessage requests a path makes. */
function countingQueue(): MessageSender & { sent: OutgoingMessage[] } {
  const sent: OutgoingMessage[] = [];
  return {
    sent,
    sendBatch: async (messages) => {
      sent.push(...messages);
      return [];
    },
  };
}

/**
 * The previous path, wired from today's pieces: every counted check's telemetry also sent to the queue (one
 * message per check, as before the stream took it), beside the per-check address window in DynamoDB.
 */
function reportingEveryCheck(keys: KeyCheckStore, sink: TelemetrySink): KeyCheckStore {
  return {
    peek: (keyId) => keys.peek(keyId),
    watermarkOf: (keyId) => keys.watermarkOf(keyId),
    async checkAndCount(check) {
      const counted = await keys.checkAndCount(check);
      if (counted.outcome === 'counted') await sink.report(checkTelemetry(check.report, counted.keyId, 'KEY_VALID', check.now));
      return counted;
    },
  };
}

let addressSeq = 0;
/** A fresh client address per request, so no address window limits the bench (each still costs its write). */
const nextAddress = () => {
  addressSeq++;
  return `10.${(addressSeq >> 16) & 255}.${(addressSeq >> 8) & 255}.${addressSeq & 255}`;
};

function loaderEvent(path: string, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyEventV2 {
  return buildLoaderEvent({
    route: { method: 'POST', path },
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'Roblox/Linux', ...headers },
    body: JSON.stringify(body),
    requestId: randomBytes(8).toString('hex'),
    timeEpoch: Date.now(),
    sourceIp: nextAddress(),
  });
}

/** An address tally that tracks nothing, so every check writes its address's shared window, as the previous path did. */
const everyCheckShared = () => new AddressTally(0);

const checkBody = (projectId: string, key: string) => ({
  project_id: projectId,
  key,
  fingerprint: sha256Hex(key).slice(0, 64),
  executor: 'Synapse',
});

/** Bytes of an answer on the wire: status line, headers and body. */
const answerBytes = (result: APIGatewayProxyResult): number =>
  20 + Object.entries(result.headers ?? {}).reduce((sum, [name, value]) => sum + name.length + String(value).length + 4, 0) + Buffer.byteLength(result.body);

interface Sample {
  ms: number;
  bytes: number;
  status: number;
  code?: string;
}

type Handler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResult>;

/** One at a time, then `concurrency` in flight; the answer path's capacity over both. */
async function drive(handler: Handler, event: () => APIGatewayProxyEventV2, recorder: { take: () => CapacityTally }, warmedUp: () => void = () => undefined) {
  const s = LOADER_COST_SETTINGS;
  const run = async (): Promise<Sample> => {
    const { ms, result } = await timed(() => handler(event()));
    return {
      ms,
      bytes: answerBytes(result),
      status: result.statusCode,
      code: result.statusCode === 200 && result.body.startsWith('{') ? (JSON.parse(result.body) as { code?: string }).code : undefined,
    };
  };
  await mapBounded(Array.from({ length: WARM_UP }), s.concurrency, run);
  recorder.take();
  warmedUp();
  const sequential: Sample[] = [];
  for (let i = 0; i < s.sequentialChecks; i++) sequential.push(await run());
  const concurrent = await mapBounded(Array.from({ length: s.concurrentChecks }), s.concurrency, run);
  const capacity = recorder.take();
  return { sequential, concurrent, capacity };
}

/** Requests before each measured phase: the first pay for DynamoDB Local's JIT and the SDK's first connections. */
const WARM_UP = 50;

const ms = (samples: readonly Sample[], p: number) =>
  round(
    percentile(
      samples.map((sample) => sample.ms),
      p,
    ),
    2,
  );

export async function benchLoaderCost(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = LOADER_COST_SETTINGS;
  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const stores = createStores(recorder.db, table.tableName);
  const { projectId } = await createBusinessProject(table.stores, 'bench loader-cost');
  const keys = (await table.stores.dashboard.issueKeys({ projectId, count: s.keys, tier: 'standard', maxUses: null, now: nowSeconds() })).map((key) => key.key);
  let next = 0;
  const nextKey = () => keys[next++ % keys.length] ?? '';
  const validateEvent = () => loaderEvent(VALIDATE_ROUTE.path, checkBody(projectId, nextKey()));
  const context = lambdaContext('loader-cost');
  const rows: Row[] = [];
  const measured: Record<string, Measured> = {};

  // ---- the previous path: the queue per check, the address window in DynamoDB ----
  const previousQueue = countingQueue();
  const previousSink = new QueueTelemetrySink(previousQueue, silent);
  const previous = createValidateHandler({
    keys: reportingEveryCheck(stores.keyChecks, previousSink),
    rateLimits: stores.rateLimits,
    addresses: everyCheckShared(),
    refusals: new RefusalMemory(),
    telemetry: previousSink,
    now: nowSeconds,
    logger: silent,
  });
  let warmUpMessages = 0;
  const before = await drive(
    (event) => previous(event, context),
    validateEvent,
    recorder,
    () => {
      warmUpMessages = previousQueue.sent.length;
    },
  );
  // Its telemetry through the queue's ingest handler, in the queue's batches.
  const queueIngest = createIngestQueueHandler({ store: stores.telemetry, now: nowSeconds, logger: silent });
  const batches = Array.from({ length: Math.ceil(previousQueue.sent.length / TELEMETRY_QUEUE.batchSize) }, (_, i) =>
    previousQueue.sent.slice(i * TELEMETRY_QUEUE.batchSize, (i + 1) * TELEMETRY_QUEUE.batchSize),
  );
  let previousIngestMs = 0;
  for (const batch of batches) previousIngestMs += (await timed(() => queueIngest(sqsEvent(batch)))).ms;
  const previousIngest = recorder.take();
  const previousSends = previousQueue.sent.length - warmUpMessages;
  measured.previous = measure(before, previousSends, previousSends, 0, {
    capacity: previousIngest,
    ms: previousIngestMs,
    invocations: batches.length,
    checks: previousQueue.sent.length,
  });
  log(`${NAME}: previous path measured (${before.sequential.length + before.concurrent.length} checks, ${previousQueue.sent.length} queue messages)`);

  // ---- this branch: telemetry on the key item's write, off the stream; refusals alone queued ----
  const { ingest: streamIngest, counted } = await countingStreamIngest(table, stores.telemetry);
  try {
    const queue = countingQueue();
    const sink = new QueueTelemetrySink(queue, silent);
    const current = createValidateHandler({
      keys: stores.keyChecks,
      rateLimits: stores.rateLimits,
      addresses: everyCheckShared(),
      refusals: new RefusalMemory(),
      telemetry: sink,
      now: nowSeconds,
      logger: silent,
    });
    const after = await drive((event) => current(event, context), validateEvent, recorder);
    const drained = await timed(() => streamIngest.drain());
    const streamIngestCapacity = recorder.take();
    measured.stream = measure(after, queue.sent.length, queue.sent.length, 0, {
      capacity: streamIngestCapacity,
      ms: drained.ms,
      invocations: counted.batches,
      checks: counted.checks,
    });
    const checked = after.sequential.length + after.concurrent.length + WARM_UP;
    log(`${NAME}: stream path measured (${checked} checks, ${counted.checks} ingested off the stream, ${queue.sent.length} queue messages)`);

    // The same, with the address counted in the container's memory (issue 23 item 3): what is deployed.
    const floor = createValidateHandler({
      keys: stores.keyChecks,
      rateLimits: stores.rateLimits,
      addresses: new AddressTally(),
      refusals: new RefusalMemory(),
      telemetry: sink,
      now: nowSeconds,
      logger: silent,
    });
    const atFloor = await drive((event) => floor(event, context), validateEvent, recorder);
    counted.batches = 0;
    const ingestedBefore = counted.checks;
    const floorDrained = await timed(() => streamIngest.drain());
    measured.streamMemoryAddress = measure(atFloor, 0, 0, 0, {
      capacity: recorder.take(),
      ms: floorDrained.ms,
      invocations: counted.batches,
      checks: counted.checks - ingestedBefore,
    });

    rows.push(
      ...latencyRows('previous path (queue per check, address window written)', before),
      ...latencyRows('stream telemetry (address window written)', after),
      ...latencyRows('stream telemetry, address in memory', atFloor),
    );
    const answerRequests = (drove: typeof before) => drove.capacity.requests / (drove.sequential.length + drove.concurrent.length);
    rows.push(
      row(NAME, 'DynamoDB requests per check on the answer path, previous', round(answerRequests(before), 3), ''),
      row(NAME, 'DynamoDB requests per check on the answer path, stream', round(answerRequests(after), 3), ''),
      row(NAME, 'DynamoDB requests per check on the answer path, stream + address in memory', round(answerRequests(atFloor), 3), '', {
        target: { op: '<=', limit: 1.05 },
      }),
      row(
        NAME,
        'WCU per check on the answer path, stream + address in memory',
        round(atFloor.capacity.write.table / (atFloor.sequential.length + atFloor.concurrent.length), 3),
        'WCU',
        { target: { op: '<=', limit: 1.1 } },
      ),
      row(NAME, 'queue messages per valid check, stream', queue.sent.length, '', { target: { op: '<=', limit: 0 } }),
    );

    // ---- revoke -> next check refused ----
    rows.push(await revokeTrials(table, projectId, (event) => current(event, context)));

    // ---- 10,000 checks' telemetry into the aggregates, none lost ----
    rows.push(...(await telemetryNoneLost(table, current, context, streamIngest, () => counted.checks, log)));

    // ---- script fetch, with and without the stub's cache ----
    const fetch = await scriptFetch(table, stores, recorder, sink, streamIngest, () => counted.checks);
    measured.scriptFetch = fetch.fresh;
    measured.scriptFetchCached = fetch.cached;
  } finally {
    await streamIngest.stop();
    recorder.db.destroy();
  }

  const costs = Object.fromEntries(
    Object.entries(measured).flatMap(([path, m]) => (['rest', 'http'] as const).map((door) => [`${path}/${door}`, costPerMillion(m, door)] as const)),
  );
  const costRow = (label: string, key: string, target?: number) => {
    const cost = costs[key] ?? { total: Number.NaN, parts: {} };
    return row(NAME, `cost per million, ${label}`, round(cost.total, 2), 'USD', {
      ...(target === undefined ? {} : { target: { op: '<=', limit: target } }),
      note: Object.entries(cost.parts)
        .map(([part, usd]) => `${part} ${round(usd, 3)}`)
        .join(', '),
    });
  };
  rows.push(
    costRow('validate, previous path, REST API', 'previous/rest'),
    costRow('validate, stream telemetry, REST API', 'stream/rest'),
    costRow('validate, stream telemetry, HTTP API', 'stream/http'),
    costRow('validate, stream telemetry + address in memory, HTTP API', 'streamMemoryAddress/http', 2.8),
    costRow('validate, stream telemetry + address in memory, REST API', 'streamMemoryAddress/rest'),
    costRow(`script fetch (${s.scriptBytes / 1024} KiB), no stub cache, HTTP API`, 'scriptFetch/http'),
    costRow('script fetch, stub cache (304), HTTP API', 'scriptFetchCached/http'),
    costRow(`script fetch (${s.scriptBytes / 1024} KiB), no stub cache, REST API`, 'scriptFetch/rest'),
    row(NAME, 'monthly cost of 1,000 validate checks/s, previous path, REST', Math.round(monthlyCost(1_000, costs['previous/rest']?.total ?? 0)), 'USD'),
    row(
      NAME,
      'monthly cost of 1,000 validate checks/s, stream + address in memory, HTTP',
      Math.round(monthlyCost(1_000, costs['streamMemoryAddress/http']?.total ?? 0)),
      'USD',
    ),
  );
  return { rows, details: { settings: s, prices: PRICES, measured, costs } };
}

function measure(
  drove: { sequential: Sample[]; concurrent: Sample[]; capacity: CapacityTally },
  sqsSends: number,
  sqsIngested: number,
  s3Gets: number,
  ingest: { capacity: CapacityTally; ms: number; invocations: number; checks: number },
): Measured {
  const all = [...drove.sequential, ...drove.concurrent];
  // The ingest also took the warm-up's telemetry: its cost is counted per check ingested, then for the requests measured.
  const share = all.length / Math.max(1, ingest.checks);
  return {
    requests: all.length,
    dynamoRequests: drove.capacity.requests,
    writeUnits: drove.capacity.write.table + indexUnits(drove.capacity.write),
    readUnits: drove.capacity.read.table + indexUnits(drove.capacity.read),
    // Lambda bills the function's time per request: the one-at-a-time mean, each request alone as Lambda runs it.
    handlerMs: drove.sequential.reduce((sum, sample) => sum + Math.ceil(sample.ms), 0) * (all.length / drove.sequential.length),
    answerBytes: all.reduce((sum, sample) => sum + sample.bytes, 0),
    sqsSends,
    sqsIngested,
    s3Gets,
    ingest: {
      writeUnits: (ingest.capacity.write.table + indexUnits(ingest.capacity.write)) * share,
      readUnits: (ingest.capacity.read.table + indexUnits(ingest.capacity.read)) * share,
      ms: ingest.ms * share,
      invocations: ingest.invocations * share,
    },
  };
}

function latencyRows(label: string, drove: { sequential: Sample[]; concurrent: Sample[] }): Row[] {
  const s = LOADER_COST_SETTINGS;
  const notValid = [...drove.sequential, ...drove.concurrent].filter((sample) => sample.code !== 'KEY_VALID').length;
  return [
    row(NAME, `handler p50, one at a time, ${label}`, ms(drove.sequential, 50), 'ms'),
    row(NAME, `handler p99, one at a time, ${label}`, ms(drove.sequential, 99), 'ms'),
    row(NAME, `handler p50, ${s.concurrency} in flight, ${label}`, ms(drove.concurrent, 50), 'ms'),
    row(NAME, `handler p99, ${s.concurrency} in flight, ${label}`, ms(drove.concurrent, 99), 'ms', { note: `${notValid} answers other than KEY_VALID` }),
  ];
}

async function revokeTrials(table: BenchTable, projectId: string, handler: Handler): Promise<Row> {
  const s = LOADER_COST_SETTINGS;
  const keys = await table.stores.dashboard.issueKeys({ projectId, count: s.revokeTrials, tier: 'standard', maxUses: null, now: nowSeconds() });
  let refused = 0;
  for (const key of keys) {
    const first = await handler(loaderEvent(VALIDATE_ROUTE.path, checkBody(projectId, key.key)));
    if (!first.body.includes('KEY_VALID')) throw new Error(`revoke trial: the key was not valid before its revoke: ${first.body}`);
    await table.stores.projects.revokeKey(projectId, key.id, nowSeconds());
    const next = await handler(loaderEvent(VALIDATE_ROUTE.path, checkBody(projectId, key.key)));
    if (next.body.includes('KEY_REVOKED')) refused++;
  }
  return row(NAME, 'revoke -> next check refused', refused, `of ${s.revokeTrials}`, { target: { op: '>=', limit: s.revokeTrials } });
}

async function telemetryNoneLost(
  table: BenchTable,
  handler: ReturnType<typeof createValidateHandler>,
  context: ReturnType<typeof lambdaContext>,
  ingest: { drain: () => Promise<number> },
  ingestedChecks: () => number,
  log: (line: string) => void,
): Promise<Row[]> {
  const s = LOADER_COST_SETTINGS;
  // A project of its own, so its daily counter holds these checks' executions only.
  const { projectId } = await createBusinessProject(table.stores, 'bench loader-cost telemetry');
  const keys = (await table.stores.dashboard.issueKeys({ projectId, count: s.keys, tier: 'standard', maxUses: null, now: nowSeconds() })).map((key) => key.key);
  const day = utcDate(nowSeconds());
  const before = ingestedChecks();
  const answers = await mapBounded(Array.from({ length: s.telemetryChecks }), s.concurrency, async (_, i) => {
    const result = await handler(loaderEvent(VALIDATE_ROUTE.path, checkBody(projectId, keys[i % keys.length] ?? '')), context);
    return result.body.includes('KEY_VALID');
  });
  const valid = answers.filter(Boolean).length;
  await ingest.drain();
  const ingested = ingestedChecks() - before;
  const executions = (await table.stores.telemetry.executionsOn(day)).get(projectId) ?? 0;
  log(`${NAME}: ${valid} valid checks, ${ingested} ingested off the stream, ${executions} executions in the project's daily counter`);
  return [
    row(NAME, `checks of ${s.telemetryChecks} answered KEY_VALID`, valid, '', { target: { op: '>=', limit: s.telemetryChecks } }),
    row(NAME, 'their telemetry lost (valid checks - executions in the daily counter)', valid - executions, '', {
      target: { op: '<=', limit: 0 },
      note: `${ingested} checks read off the stream`,
    }),
  ];
}

async function scriptFetch(
  table: BenchTable,
  stores: ReturnType<typeof createStores>,
  recorder: { take: () => CapacityTally },
  sink: TelemetrySink,
  ingest: { drain: () => Promise<number> },
  ingestedChecks: () => number,
): Promise<{ fresh: Measured; cached: Measured }> {
  const s = LOADER_COST_SETTINGS;
  const { projectId } = await createBusinessProject(table.stores, 'bench loader-cost script');
  const keys = (await table.stores.dashboard.issueKeys({ projectId, count: s.keys, tier: 'standard', maxUses: null, now: nowSeconds() })).map((key) => key.key);
  const script = `-- ${WATERMARK_PLACEHOLDER}\n${'print("bench")\n'.repeat(Math.ceil(s.scriptBytes / 15))}`.slice(0, s.scriptBytes);
  const scripts = new MemoryScriptStore();
  const versionId = `ver_${randomBytes(8).toString('hex')}`;
  await scripts.put({ projectId, versionId }, Buffer.from(script));
  await table.stores.dashboard.uploadVersion({
    id: versionId,
    projectId,
    sizeBytes: Buffer.byteLength(script),
    sha256: sha256Hex(script),
    notes: '',
    now: nowSeconds(),
  });
  const handler = createScriptHandler({
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: sink,
    versions: stores.scriptVersions,
    scripts,
    cache: new ScriptCache(SCRIPT_CACHE_BYTES),
    fullCopies: new FullCopyTally(),
    now: nowSeconds,
    logger: silent,
  });
  const context = lambdaContext('loader-cost-script');
  const etags = new Map<string, string>();
  const run =
    (cached: boolean) =>
    async (key: string = keys[Math.floor(Math.random() * keys.length)] ?? ''): Promise<{ result: APIGatewayProxyResult; ms: number }> => {
      const etag = etags.get(key);
      const { ms: took, result } = await timed(() =>
        handler(loaderEvent(SCRIPT_ROUTE.path, checkBody(projectId, key), cached && etag ? { 'If-None-Match': etag } : {}), context),
      );
      if (result.headers?.ETag) etags.set(key, String(result.headers.ETag));
      return { result, ms: took };
    };
  const phase = async (cached: boolean): Promise<Measured> => {
    // Every key fetches once first, so the cached phase's stubs hold an ETag (and the container its script).
    if (cached) await mapBounded(keys, s.concurrency, (key) => run(false)(key));
    recorder.take();
    const getsBefore = scripts.gets;
    const samples = await mapBounded(Array.from({ length: s.scriptFetches }), 1, () => run(cached)());
    const capacity = recorder.take();
    const ingestedBefore = ingestedChecks();
    const drained = await timed(() => ingest.drain());
    const ingestCapacity = recorder.take();
    const asSamples: Sample[] = samples.map(({ result, ms: took }) => ({ ms: took, bytes: answerBytes(result), status: result.statusCode }));
    return measure({ sequential: asSamples, concurrent: [], capacity }, 0, 0, scripts.gets - getsBefore, {
      capacity: ingestCapacity,
      ms: drained.ms,
      invocations: 1,
      checks: ingestedChecks() - ingestedBefore,
    });
  };
  return { fresh: await phase(false), cached: await phase(true) };
}

function sqsEvent(messages: OutgoingMessage[]): SQSEvent {
  return {
    Records: messages.map((message, i) => ({
      messageId: `${i}`,
      receiptHandle: `${i}`,
      body: message.body,
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'bench', ApproximateFirstReceiveTimestamp: '0' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:telemetry',
      awsRegion: 'us-east-1',
    })),
  };
}
