import { randomBytes, randomInt } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { QueueTelemetrySink } from '#adapters/telemetry-queue';
import { AddressTally } from '#domain/address-tally';
import { ADDRESS_COUNTING } from '#domain/key-check';
import { RefusalMemory } from '#domain/refusal-memory';
import { hashToken, issueToken, newApiToken } from '#domain/tokens';
import type { OutgoingMessage } from '#domain/webhooks/ports';
import { createValidateHandler } from '#http/loader-validate';
import { VALIDATE_ROUTE } from '#http/public-routes';
import { buildLoaderEvent } from '#local/proxy-event';
import { type CapacityTally, capacityRecordingClient, indexUnits } from '#test-support/consumed-capacity';
import type { BenchTable } from './support/dynamodb';
import { createBusinessProject, lambdaContext, nowSeconds } from './support/fixtures';
import { type StackProcess, stackStores } from './support/local-stack';
import { PRICES, SECONDS_PER_MONTH } from './support/prices';
import { type BenchResult, row } from './support/report';
import { mapBounded, percentile, round, timed } from './support/stats';
import { countingStreamIngest } from './support/stream-ingest';

const NAME = 'loader-check';
const LOADER_CHECK_SETTINGS = {
  /** Keys checked round-robin, so no key comes near its 120 checks a minute. */
  keys: 400,
  sequentialChecks: 400,
  concurrentChecks: 1_600,
  concurrency: 16,
  /** Through the local server, all from 127.0.0.1: the phases together stay under that address's 2,400 a minute. */
  serverChecks: 1_200,
  revokeTrials: 100,
  /** Owner API requests per token, under its 100 a minute. */
  requestsPerToken: 90,
  /** The deployed function's memory (ServiceFunction), which Lambda bills by. */
  functionMemoryGb: 0.5,
} as const;

interface Check {
  ms: number;
  status: number;
  code: string | undefined;
  keyId?: string;
  capacity?: CapacityTally;
}

/**
 * The loader key check: its handler on DynamoDB Local (latency, DynamoDB requests and capacity on the answer's
 * path, the ingest work its telemetry causes), the public route through the local server beside the owner API's
 * GET, and revoke → next check, over HTTP.
 */
export async function benchLoaderCheck(table: BenchTable, stack: StackProcess, log: (line: string) => void): Promise<BenchResult> {
  const handlerPart = await benchHandler(table, log);
  const serverPart = await benchServer(stack, log);
  const costPerMillion = costPerMillionChecks(handlerPart.perCheck);
  const monthlyAt1000 = monthlyCost(1_000, handlerPart.perCheck);
  return {
    rows: [
      ...handlerPart.rows,
      ...serverPart.rows,
      row(NAME, 'AWS cost per million checks', round(costPerMillion.total, 2), 'USD', {
        note: Object.entries(costPerMillion.parts)
          .map(([part, usd]) => `${part} ${round(usd, 3)}`)
          .join(', '),
      }),
      row(NAME, 'AWS cost of 1,000 checks/s for 30 days', Math.round(monthlyAt1000), 'USD', { note: '2.59 billion checks; API Gateway at its volume tiers' }),
    ],
    details: { settings: LOADER_CHECK_SETTINGS, prices: PRICES, perCheck: handlerPart.perCheck, costPerMillion, ...handlerPart.details, ...serverPart.details },
  };
}

/** What one check costs on AWS, from the measurements. */
interface PerCheck {
  durationMs: number;
  writeUnits: number;
  readUnits: number;
  ingestWriteUnits: number;
  ingestReadUnits: number;
  ingestMsPerCheck: number;
  /** SQS requests per check: its SendMessage, and its share of the ingest's receive and delete batches. */
  sqsRequests: number;
}

async function benchHandler(table: BenchTable, log: (line: string) => void) {
  const s = LOADER_CHECK_SETTINGS;
  const { projectId } = await createBusinessProject(table.stores, 'bench loader-check');
  const keys = (await table.stores.dashboard.issueKeys({ projectId, count: s.keys, tier: 'standard', maxUses: null, now: nowSeconds() })).map((key) => key.key);
  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const stores = createStores(recorder.db, table.tableName);
  const queued: OutgoingMessage[] = [];
  const silent = new Logger({ serviceName: 'bench-loader', logLevel: 'SILENT' });
  const handler = createValidateHandler({
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    // The queue answers at once: the handler's figure is DynamoDB and our code, SendMessage is added in docs/performance.md.
    telemetry: new QueueTelemetrySink(
      {
        sendBatch: async (messages) => {
          queued.push(...messages);
          return [];
        },
      },
      silent,
    ),
    now: nowSeconds,
    logger: silent,
  });
  // The checks' telemetry: valid ones come off the table's stream (they queue nothing since issue 23 item 4), read from here on.
  const { ingest: stream, counted } = await countingStreamIngest(table, stores.telemetry);
  let next = 0;
  const check = async (): Promise<Check> => {
    const key = keys[next++ % keys.length] ?? '';
    const { ms, result } = await timed(() => handler(checkEvent(projectId, key), lambdaContext('loader-check')));
    return { ms, status: result.statusCode, code: (JSON.parse(result.body) as { code?: string }).code };
  };

  // Warm up: the first checks pay for DynamoDB Local's JIT and the SDK's first connections.
  await mapBounded(Array.from({ length: 100 }), s.concurrency, check);
  recorder.take();
  const sequential: Check[] = [];
  for (let i = 0; i < s.sequentialChecks; i++) {
    const sample = await check();
    sequential.push({ ...sample, capacity: recorder.take() });
  }
  const concurrent = await mapBounded(Array.from({ length: s.concurrentChecks }), s.concurrency, check);
  const concurrentCapacity = recorder.take();
  log(`${NAME}: ${sequential.length} checks one at a time, ${concurrent.length} with ${s.concurrency} in flight`);

  recorder.take();
  const ingestMs = (await timed(() => stream.drain())).ms;
  const ingestCapacity = recorder.take();
  await stream.stop();
  recorder.db.destroy();

  const checks = [...sequential, ...concurrent];
  const requestsPerCheck = sequential.map((sample) => sample.capacity?.requests ?? 0);
  const sequentialCapacity = sequential.reduce((sum, sample) => sum + (sample.capacity?.write.table ?? 0), 0);
  const indexWrites =
    sequential.reduce((sum, sample) => sum + indexUnits(sample.capacity?.write ?? { table: 0, indexes: {} }), 0) + indexUnits(concurrentCapacity.write);
  const perCheck: PerCheck = {
    durationMs: percentile(
      sequential.map((sample) => sample.ms),
      50,
    ),
    writeUnits: (sequentialCapacity + concurrentCapacity.write.table) / checks.length,
    readUnits: (sequential.reduce((sum, sample) => sum + (sample.capacity?.read.table ?? 0), 0) + concurrentCapacity.read.table) / checks.length,
    ingestWriteUnits: (ingestCapacity.write.table + indexUnits(ingestCapacity.write)) / Math.max(1, counted.checks),
    ingestReadUnits: (ingestCapacity.read.table + indexUnits(ingestCapacity.read)) / Math.max(1, counted.checks),
    ingestMsPerCheck: ingestMs / Math.max(1, counted.checks),
    // Refusals alone are queued; every check here is valid.
    sqsRequests: queued.length / checks.length,
  };
  const ms = (list: Check[], p: number) =>
    round(
      percentile(
        list.map((sample) => sample.ms),
        p,
      ),
    );
  return {
    perCheck,
    rows: [
      row(NAME, 'handler p50, one at a time', ms(sequential, 50), 'ms'),
      row(NAME, 'handler p99, one at a time', ms(sequential, 99), 'ms'),
      row(NAME, `handler p50, ${s.concurrency} in flight`, ms(concurrent, 50), 'ms'),
      row(NAME, `handler p99, ${s.concurrency} in flight`, ms(concurrent, 99), 'ms'),
      row(NAME, 'DynamoDB requests on the answer path, most in one check', Math.max(...requestsPerCheck), '', {
        target: { op: '<=', limit: 1 },
        note: `mean ${round(requestsPerCheck.reduce((sum, n) => sum + n, 0) / requestsPerCheck.length, 2)}: the key's own item (the address is counted in memory, its window written only past ${ADDRESS_COUNTING.sharedAfter} a minute)`,
      }),
      row(NAME, 'WCU per check, table', round(perCheck.writeUnits, 2), 'WCU'),
      row(NAME, 'WCU per check, indexes', indexWrites, 'WCU', { target: { op: '<=', limit: 0 } }),
      row(NAME, 'ingest capacity per check (off the answer path)', round(perCheck.ingestWriteUnits, 2), 'WCU', {
        note: `${round(perCheck.ingestReadUnits, 2)} RCU; ${counted.checks} checks' telemetry off the stream in ${counted.batches} batches, ${round(perCheck.ingestMsPerCheck, 2)} ms of ingest per check`,
      }),
      row(NAME, 'answers other than KEY_VALID', checks.filter((sample) => sample.status !== 200 || sample.code !== 'KEY_VALID').length, '', {
        target: { op: '<=', limit: 0 },
      }),
    ],
    details: {
      requestsPerCheck,
      ingestCapacity,
      concurrentCapacity,
      sequentialMs: sequential.map((sample) => sample.ms),
      concurrentMs: concurrent.map((sample) => sample.ms),
    },
  };
}

async function benchServer(stack: StackProcess, log: (line: string) => void) {
  const s = LOADER_CHECK_SETTINGS;
  const { info } = stack;
  const dashboard = stackStores(info);
  let keys: string[];
  let tokens: string[];
  try {
    keys = (
      await dashboard.stores.dashboard.issueKeys({
        projectId: info.projectId,
        count: s.keys + s.revokeTrials,
        tier: 'standard',
        maxUses: null,
        now: nowSeconds(),
      })
    ).map((key) => key.key);
    tokens = [];
    for (let i = 0; i < Math.ceil((s.serverChecks + s.revokeTrials) / s.requestsPerToken) + 1; i++) {
      const token = newApiToken();
      await issueToken(dashboard.stores.tokens, { ownerId: info.ownerId, tokenHash: hashToken(token), now: nowSeconds() });
      tokens.push(token);
    }
  } finally {
    dashboard.close();
  }
  const trialKeys = keys.splice(0, s.revokeTrials);
  let nextKey = 0;
  const validate = async (key: string = keys[nextKey++ % keys.length] ?? ''): Promise<Check> => {
    const started = performance.now();
    const response = await fetch(`${info.baseUrl}${VALIDATE_ROUTE.path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(checkBody(info.projectId, key)),
    });
    const body = (await response.json()) as { code?: string; key_id?: string };
    return { ms: performance.now() - started, status: response.status, code: body.code, keyId: body.key_id };
  };
  let nextRequest = 0;
  const token = () => tokens[Math.floor(nextRequest++ / s.requestsPerToken)] ?? '';
  const getVersions = async (): Promise<Check> => {
    const started = performance.now();
    const response = await fetch(`${info.baseUrl}/v1/projects/${info.projectId}/versions`, { headers: { Authorization: `Bearer ${token()}` } });
    await response.arrayBuffer();
    return { ms: performance.now() - started, status: response.status, code: undefined };
  };

  // Checks and GETs in alternating halves, so both meet the machine in the same state.
  const half = s.serverChecks / 2;
  const checks: Check[] = [];
  const gets: Check[] = [];
  const seconds = { checks: 0, gets: 0 };
  for (let round = 0; round < 2; round++) {
    const c = await timed(() => mapBounded(Array.from({ length: half }), s.concurrency, () => validate()));
    checks.push(...c.result);
    seconds.checks += c.ms / 1000;
    const g = await timed(() => mapBounded(Array.from({ length: half }), s.concurrency, getVersions));
    gets.push(...g.result);
    seconds.gets += g.ms / 1000;
  }
  log(`${NAME}: ${checks.length} checks and ${gets.length} GET versions through the local server`);

  // Revoke → next check: each trial checks a fresh key, revokes it through the API, and checks it again at once.
  let refusedAfterRevoke = 0;
  const trialFailures: string[] = [];
  for (const key of trialKeys) {
    const before = await validate(key);
    const revoke = await fetch(`${info.baseUrl}/v1/projects/${info.projectId}/keys/revoke`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token()}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ key_id: before.keyId }),
    });
    const after = await validate(key);
    if (before.code === 'KEY_VALID' && revoke.status === 200 && after.code === 'KEY_REVOKED') refusedAfterRevoke++;
    else trialFailures.push(`${before.code} → revoke ${revoke.status} → ${after.code ?? after.status}`);
  }
  log(`${NAME}: revoke → next check refused in ${refusedAfterRevoke} of ${trialKeys.length} trials`);

  const failed = [...checks, ...gets].filter((sample) => sample.status !== 200).length;
  const checksPerSecond = checks.length / seconds.checks;
  const getsPerSecond = gets.length / seconds.gets;
  return {
    rows: [
      row(NAME, `checks/s through the local server, ${s.concurrency} in flight`, round(checksPerSecond, 0), 'req/s', {
        note: `p50 ${round(
          percentile(
            checks.map((c) => c.ms),
            50,
          ),
        )} ms, p99 ${round(
          percentile(
            checks.map((c) => c.ms),
            99,
          ),
        )} ms`,
      }),
      row(NAME, `owner GET versions/s, same server and run, ${s.concurrency} in flight`, round(getsPerSecond, 0), 'req/s', {
        note: `checks at ${round(checksPerSecond / getsPerSecond, 2)}× the GETs' rate: a check makes one conditional write (a GET reads), and the local stack ingests the checks' telemetry in the same process`,
      }),
      row(NAME, 'revoke → next check refused', refusedAfterRevoke, `of ${trialKeys.length}`, {
        target: { op: '>=', limit: s.revokeTrials },
        ...(trialFailures.length ? { note: trialFailures.slice(0, 3).join('; ') } : {}),
      }),
      row(NAME, 'server answers other than 200', failed, '', { target: { op: '<=', limit: 0 } }),
    ],
    details: { serverSeconds: seconds, trialFailures },
  };
}

function checkBody(projectId: string, key: string) {
  return {
    project_id: projectId,
    key,
    fingerprint: randomBytes(32).toString('hex'),
    executor: 'bench-executor',
    script_hash: 'ab'.repeat(32),
  };
}

/** The event API Gateway hands the check's function; each from its own address, as buyers' loaders are. */
function checkEvent(projectId: string, key: string): APIGatewayProxyEventV2 {
  return buildLoaderEvent({
    route: VALIDATE_ROUTE,
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'Roblox/Linux' },
    body: JSON.stringify(checkBody(projectId, key)),
    requestId: randomBytes(8).toString('hex'),
    timeEpoch: Date.now(),
    sourceIp: `198.51.${randomInt(0, 256)}.${randomInt(1, 255)}`,
  });
}

/** API Gateway's price of `requests` in one month, tier by tier. */
function apiGatewayCost(requests: number): number {
  let cost = 0;
  let from = 0;
  for (const tier of PRICES.httpApiTiers) {
    const inTier = Math.max(0, Math.min(requests, tier.upTo) - from);
    cost += (inTier / 1e6) * tier.perMillion;
    from = tier.upTo;
  }
  return cost;
}

/** Dollars per million checks, by service: the check itself and the ingest of its telemetry. */
function costPerMillionChecks(perCheck: PerCheck, apiGatewayPerMillion: number = PRICES.httpApiTiers[0].perMillion) {
  const lambdaSeconds = (perCheck.durationMs + perCheck.ingestMsPerCheck) / 1000;
  const parts = {
    'API Gateway': apiGatewayPerMillion,
    // The check's invocation plus its 1/100 share of an ingest invocation.
    'Lambda requests': PRICES.lambdaPerMillionRequests * 1.01,
    'Lambda duration': 1e6 * lambdaSeconds * LOADER_CHECK_SETTINGS.functionMemoryGb * PRICES.lambdaPerGbSecond,
    'DynamoDB writes': (perCheck.writeUnits + perCheck.ingestWriteUnits) * PRICES.dynamoPerMillionWriteUnits,
    'DynamoDB reads': (perCheck.readUnits + perCheck.ingestReadUnits) * PRICES.dynamoPerMillionReadUnits,
    SQS: perCheck.sqsRequests * PRICES.sqsPerMillionRequests,
  };
  return { parts, total: Object.values(parts).reduce((sum, usd) => sum + usd, 0) };
}

/** A month of `checksPerSecond` checks, API Gateway at its volume tiers. */
function monthlyCost(checksPerSecond: number, perCheck: PerCheck): number {
  const checks = checksPerSecond * SECONDS_PER_MONTH;
  const { parts } = costPerMillionChecks(perCheck, 0);
  const rest = Object.values(parts).reduce((sum, usd) => sum + usd, 0);
  return apiGatewayCost(checks) + (checks / 1e6) * rest;
}
