import { randomBytes, randomInt } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { localDynamoConfig } from '#adapters/client';
import { localS3Config, S3ScriptStore } from '#adapters/script-store';
import { createStores } from '#adapters/stores';
import { AddressTally } from '#domain/address-tally';
import { FullCopyTally } from '#domain/full-copies';
import { newId } from '#domain/ids';
import { RefusalMemory } from '#domain/refusal-memory';
import { publishScript, ScriptCache, WATERMARK_PLACEHOLDER } from '#domain/scripts';
import { hashToken, issueToken, newApiToken } from '#domain/tokens';
import type { HttpApiHandler } from '#http/http-api';
import { createScriptHandler, SCRIPT_CACHE_BYTES } from '#http/loader-script';
import { createValidateHandler } from '#http/loader-validate';
import { SCRIPT_ROUTE } from '#http/public-routes';
import { buildLoaderEvent } from '#local/proxy-event';
import { startLocalS3 } from '#local/s3-local';
import { capacityRecordingClient } from '#test-support/consumed-capacity';
import type { BenchTable } from './support/dynamodb';
import { createBusinessProject, lambdaContext, nowSeconds } from './support/fixtures';
import { type StackProcess, stackStores } from './support/local-stack';
import { PRICES, SECONDS_PER_MONTH } from './support/prices';
import { type BenchResult, row } from './support/report';
import { mapBounded, percentile, round, timed } from './support/stats';

const NAME = 'script-fetch';
const KIB = 1024;
const SCRIPT_FETCH_SETTINGS = {
  sizes: [
    { label: '256 KiB', bytes: 256 * KIB },
    { label: '2 MiB', bytes: 2 * KIB * KIB },
  ],
  /** Keys per project, round-robin, so no key nears its 120 checks a minute. */
  keys: 300,
  /** Validate calls before measuring; every key is also fetched once first (see below). */
  warmup: 50,
  sequential: 200,
  concurrent: 800,
  concurrency: 16,
  trials: 100,
  requestsPerToken: 90,
  functionMemoryGb: 0.5,
} as const;

/** Status line and headers of a 200 or 304 as API Gateway sends them, roughly: what a 304 still puts on the wire. */
const HEADER_BYTES = 600;

interface Sample {
  ms: number;
  status: number;
}

/**
 * Script fetch: the handler on DynamoDB Local and the local S3 for a 256 KiB and a 2 MiB script beside the validate
 * check in the same run (one at a time and 16 in flight), S3 GetObject calls per fetch once warm (a wrapped client
 * counts them), the body bytes of a repeat fetch with If-None-Match over HTTP, revoke → next fetch refused and
 * rollback → next fetch serves the new version, and what a million fetches cost on AWS.
 */
export async function benchScriptFetch(table: BenchTable, stack: StackProcess, log: (line: string) => void): Promise<BenchResult> {
  const handlerPart = await benchHandlers(table, log);
  const serverPart = await benchServer(stack, log);
  const cost = costPerMillion(handlerPart.fetchMs256, handlerPart.dynamoPerFetch);
  const monthly = (perSecond: number, cached: boolean) => monthlyCost(perSecond, handlerPart.fetchMs256, handlerPart.dynamoPerFetch, cached);
  return {
    rows: [
      ...handlerPart.rows,
      ...serverPart.rows,
      row(NAME, 'AWS cost per million fetches, 256 KiB, no cache', round(cost.uncached.total, 2), 'USD', { note: describe(cost.uncached.parts) }),
      row(NAME, "AWS cost per million fetches, 256 KiB, stub's cache (304)", round(cost.cached.total, 2), 'USD', { note: describe(cost.cached.parts) }),
      row(NAME, 'AWS cost of 1,000 fetches/s for 30 days, 256 KiB, no cache', Math.round(monthly(1_000, false)), 'USD', {
        note: `2.59 billion fetches, ${round((1_000 * 256 * KIB * SECONDS_PER_MONTH) / 2 ** 40, 0)} TiB out at tiered prices, ${round((1_000 * 256 * KIB * 8) / 1e9, 2)} Gbit/s`,
      }),
      row(NAME, "AWS cost of 1,000 fetches/s for 30 days, 256 KiB, stub's cache", Math.round(monthly(1_000, true)), 'USD', {
        note: 'every fetch a 304: headers only',
      }),
    ],
    details: { settings: SCRIPT_FETCH_SETTINGS, prices: PRICES, cost, ...handlerPart.details, ...serverPart.details },
  };
}

const describe = (parts: Record<string, number>) =>
  Object.entries(parts)
    .map(([part, usd]) => `${part} ${round(usd, 3)}`)
    .join(', ');

/** A script of `bytes` bytes carrying the placeholder, as a publisher's would. */
function scriptOf(bytes: number): Uint8Array {
  const head = `local WATERMARK = "${WATERMARK_PLACEHOLDER}"\n`;
  const line = 'print("a line of the publisher\'s script, padded to a realistic length of code here")\n';
  const text = head + line.repeat(Math.ceil((bytes - head.length) / line.length));
  return new TextEncoder().encode(text.slice(0, bytes));
}

async function benchHandlers(table: BenchTable, log: (line: string) => void) {
  const s = SCRIPT_FETCH_SETTINGS;
  const s3Server = await startLocalS3();
  const s3 = new S3Client(localS3Config(s3Server.endpoint));
  let getObjects = 0;
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'GetObjectCommand') getObjects++;
      return next(args);
    },
    { step: 'initialize', name: 'countGetObject' },
  );
  const scripts = new S3ScriptStore(s3, s3Server.bucketName);
  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const stores = createStores(recorder.db, table.tableName);
  const silent = new Logger({ serviceName: 'bench-script', logLevel: 'SILENT' });
  const telemetry = { report: async () => undefined };
  const loader = {
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry,
    now: nowSeconds,
    logger: silent,
  };
  const fetchScript = createScriptHandler({
    ...loader,
    versions: stores.scriptVersions,
    scripts,
    cache: new ScriptCache(SCRIPT_CACHE_BYTES),
    fullCopies: new FullCopyTally(),
  });
  const validate = createValidateHandler(loader);

  const rows = [];
  const details: Record<string, unknown> = {};
  let fetchMs256 = 0;
  let dynamoPerFetch = 0;
  try {
    for (const size of s.sizes) {
      const { projectId } = await createBusinessProject(table.stores, `bench script ${size.label}`);
      await publishScript(
        { scripts, versions: table.stores.dashboard },
        { id: newId('ver'), projectId, bytes: scriptOf(size.bytes), notes: size.label, now: nowSeconds() },
      );
      const keys = (await table.stores.dashboard.issueKeys({ projectId, count: s.keys, tier: 'standard', maxUses: null, now: nowSeconds() })).map(
        (key) => key.key,
      );
      let next = 0;
      const call = async (handler: HttpApiHandler): Promise<Sample> => {
        const { ms, result } = await timed(() => handler(eventFor(projectId, keys[next++ % keys.length] ?? ''), lambdaContext(NAME)));
        return { ms, status: result.statusCode };
      };
      // A key's first fetch in a container also reads its watermark, beside the write (the same round trip); the
      // container keeps it, so a buyer's later runs don't. Measured once here, on the second key (the first fetch of
      // all also loads the version into the container's cache); then every key is fetched once, so the figures below
      // are the steady state of a container that has served these keys before.
      await call(fetchScript);
      recorder.take();
      await call(fetchScript);
      const firstFetch = recorder.take();
      await mapBounded(Array.from({ length: s.keys - 2 }), s.concurrency, () => call(fetchScript));
      await mapBounded(Array.from({ length: s.warmup }), s.concurrency, () => call(validate));
      getObjects = 0;
      recorder.take();

      // One at a time, fetch and check in turn, so both meet the machine in the same state.
      const fetches: Sample[] = [];
      const checks: Sample[] = [];
      const dynamoRequests: number[] = [];
      const roundTrips: number[] = [];
      for (let i = 0; i < s.sequential; i++) {
        recorder.take();
        fetches.push(await call(fetchScript));
        const tally = recorder.take();
        dynamoRequests.push(tally.requests);
        roundTrips.push(tally.inARow);
        checks.push(await call(validate));
      }
      const concurrentFetches = await mapBounded(Array.from({ length: s.concurrent }), s.concurrency, () => call(fetchScript));
      const concurrentChecks = await mapBounded(Array.from({ length: s.concurrent }), s.concurrency, () => call(validate));
      const fetched = s.sequential + s.concurrent;
      const ms = (list: Sample[], p: number) =>
        round(
          percentile(
            list.map((sample) => sample.ms),
            p,
          ),
          2,
        );
      const ratio = ms(fetches, 50) / ms(checks, 50);
      log(`${NAME}: ${size.label}: ${fetched} fetches and as many checks, ${getObjects} GetObject calls once warm`);
      const meanDynamo = dynamoRequests.reduce((sum, n) => sum + n, 0) / dynamoRequests.length;
      const meanRoundTrips = roundTrips.reduce((sum, n) => sum + n, 0) / roundTrips.length;
      if (size.bytes === 256 * KIB) {
        fetchMs256 = ms(fetches, 50);
        dynamoPerFetch = meanDynamo;
      }
      const concurrentRatio = ms(concurrentFetches, 50) / ms(concurrentChecks, 50);
      rows.push(
        row(NAME, `${size.label}: fetch handler p50, one at a time`, ms(fetches, 50), 'ms', { note: `p99 ${ms(fetches, 99)} ms` }),
        row(NAME, `${size.label}: validate handler p50, one at a time, same run`, ms(checks, 50), 'ms', { note: `p99 ${ms(checks, 99)} ms` }),
        row(NAME, `${size.label}: fetch p50 ÷ validate p50, one at a time`, round(ratio, 2), '×', { target: { op: '<=', limit: 1.2 } }),
        row(NAME, `${size.label}: fetch handler p50, ${s.concurrency} in flight`, ms(concurrentFetches, 50), 'ms', {
          note: `p99 ${ms(concurrentFetches, 99)} ms`,
        }),
        row(NAME, `${size.label}: validate handler p50, ${s.concurrency} in flight, same run`, ms(concurrentChecks, 50), 'ms', {
          note: `p99 ${ms(concurrentChecks, 99)} ms`,
        }),
        row(NAME, `${size.label}: fetch p50 ÷ validate p50, ${s.concurrency} in flight`, round(concurrentRatio, 2), '×', { target: { op: '<=', limit: 1.2 } }),
        row(NAME, `${size.label}: DynamoDB round trips in a row on a fetch's answer path`, round(meanRoundTrips, 2), '', {
          target: { op: '<=', limit: 1 },
          note: "the current-version pointer (consistent read) sent beside the key's write",
        }),
        row(NAME, `${size.label}: DynamoDB requests per fetch`, round(meanDynamo, 2), '', {
          note: "the pointer and the key's write, at once; the version and body come from the cache, the address window is written only for a busy address",
        }),
        row(NAME, `${size.label}: DynamoDB requests, a key's first fetch in a container`, firstFetch.requests, '', {
          note: `${firstFetch.inARow} round trip(s) in a row: the watermark read goes beside the write and the pointer (the version already cached)`,
        }),
        row(NAME, `${size.label}: S3 GetObject calls per fetch once warm`, round(getObjects / fetched, 4), '', {
          target: { op: '<=', limit: 0 },
          note: `${getObjects} in ${fetched} fetches`,
        }),
        row(NAME, `${size.label}: answers other than 200`, [...fetches, ...concurrentFetches].filter((sample) => sample.status !== 200).length, '', {
          target: { op: '<=', limit: 0 },
        }),
      );
      details[size.label] = {
        fetchMs: fetches.map((f) => f.ms),
        checkMs: checks.map((c) => c.ms),
        concurrentFetchMs: concurrentFetches.map((f) => f.ms),
        dynamoRequests,
        roundTrips,
      };
    }
  } finally {
    recorder.db.destroy();
    s3.destroy();
    await s3Server.stop();
  }
  return { rows, details, fetchMs256, dynamoPerFetch };
}

function eventFor(projectId: string, key: string): APIGatewayProxyEventV2 {
  return buildLoaderEvent({
    route: SCRIPT_ROUTE,
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'Roblox/Linux' },
    body: JSON.stringify({ project_id: projectId, key, fingerprint: randomBytes(32).toString('hex'), executor: 'bench-executor' }),
    requestId: randomBytes(8).toString('hex'),
    timeEpoch: Date.now(),
    sourceIp: `198.51.${randomInt(0, 256)}.${randomInt(1, 255)}`,
  });
}

/** Over HTTP on `npm start`: a repeat fetch's bytes, revoke → next fetch, rollback → next fetch. */
async function benchServer(stack: StackProcess, log: (line: string) => void) {
  const s = SCRIPT_FETCH_SETTINGS;
  const { info } = stack;
  const dashboard = stackStores(info);
  let keys: { id: string; key: string }[];
  const tokens: string[] = [];
  try {
    keys = await dashboard.stores.dashboard.issueKeys({ projectId: info.projectId, count: s.trials + 1, tier: 'standard', maxUses: null, now: nowSeconds() });
    for (let i = 0; i < Math.ceil((2 * s.trials) / s.requestsPerToken) + 1; i++) {
      const token = newApiToken();
      await issueToken(dashboard.stores.tokens, { ownerId: info.ownerId, tokenHash: hashToken(token), now: nowSeconds() });
      tokens.push(token);
    }
  } finally {
    dashboard.close();
  }
  let requests = 0;
  const token = () => tokens[Math.floor(requests++ / s.requestsPerToken)] ?? '';
  const fetchScript = async (key: string, etag?: string) => {
    const response = await fetch(`${info.baseUrl}${SCRIPT_ROUTE.path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(etag ? { 'If-None-Match': etag } : {}) },
      body: JSON.stringify({ project_id: info.projectId, key, fingerprint: 'b'.repeat(64), executor: 'bench-executor' }),
    });
    const body = new Uint8Array(await response.arrayBuffer());
    return {
      status: response.status,
      etag: response.headers.get('etag') ?? undefined,
      versionId: response.headers.get('x-version-id') ?? undefined,
      bodyBytes: body.length,
      body,
    };
  };
  const owner = async (path: string, body: unknown) =>
    (
      await fetch(`${info.baseUrl}/v1/projects/${info.projectId}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token()}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).status;

  const [steady, ...trialKeys] = keys;
  const first = await fetchScript(steady!.key);
  const repeat = await fetchScript(steady!.key, first.etag);

  // Rollback → next fetch: the demo's versions taken in turn, each fetched right after its rollback answered.
  const versionsResponse = await fetch(`${info.baseUrl}/v1/projects/${info.projectId}/versions`, { headers: { Authorization: `Bearer ${token()}` } });
  const versionIds = ((await versionsResponse.json()) as { versions: { id: string }[] }).versions.map((version) => version.id);
  let servedAfterRollback = 0;
  for (let i = 0; i < s.trials; i++) {
    const target = versionIds[i % versionIds.length] ?? '';
    const status = await owner('/versions/rollback', { version_id: target });
    // Each trial fetches with a key of its own: one key fetched 100 times in a minute would near its limit.
    if (status === 200 && (await fetchScript(trialKeys[i]?.key ?? '')).versionId === target) servedAfterRollback++;
  }
  // Revoke → next fetch: a fresh key fetched, revoked through the API, fetched again at once.
  let refusedAfterRevoke = 0;
  for (const key of trialKeys) {
    const before = await fetchScript(key.key);
    const status = await owner('/keys/revoke', { key_id: key.id });
    const after = await fetchScript(key.key);
    if (before.status === 200 && status === 200 && after.status === 403 && JSON.parse(new TextDecoder().decode(after.body)).code === 'KEY_REVOKED')
      refusedAfterRevoke++;
  }
  log(`${NAME}: rollback → next fetch ${servedAfterRollback}/${s.trials}, revoke → next fetch refused ${refusedAfterRevoke}/${trialKeys.length}`);
  return {
    rows: [
      row(NAME, 'body bytes on the wire, repeat fetch with If-None-Match', repeat.bodyBytes, 'bytes', {
        target: { op: '<=', limit: 0 },
        note: `status ${repeat.status}; the first fetch carried ${first.bodyBytes} bytes`,
      }),
      row(NAME, 'rollback → next fetch serves the new version', servedAfterRollback, `of ${s.trials}`, { target: { op: '>=', limit: s.trials } }),
      row(NAME, 'revoke → next fetch refused KEY_REVOKED', refusedAfterRevoke, `of ${trialKeys.length}`, { target: { op: '>=', limit: s.trials } }),
    ],
    details: { repeatStatus: repeat.status, firstBytes: first.bodyBytes },
  };
}

/** Data transfer out of `gb` GB in one month, tier by tier. */
function transferCost(gb: number): number {
  let cost = 0;
  let from = 0;
  for (const tier of PRICES.transferOutTiers) {
    const inTier = Math.max(0, Math.min(gb, tier.upToGb) - from);
    cost += inTier * tier.perGb;
    from = tier.upToGb;
  }
  return cost;
}

/**
 * One fetch on AWS: the HTTP API, a Lambda request and its duration (the handler's measured p50 at the deployed
 * memory: a floor, AWS adds its own latency), DynamoDB (the key: one write, which also carries the fetch's
 * telemetry to the stream; the current-version pointer: one strongly consistent read), and the bytes out. The
 * stream's ingest is priced per check by bench/loader-cost.ts (docs/cost.md), not here.
 */
function perFetchParts(fetchMs: number, dynamoRequests: number, bytesOut: number) {
  const writes = 1;
  const reads = Math.max(1, Math.round(dynamoRequests) - writes);
  return {
    apiGateway: (PRICES.httpApiTiers[0]?.perMillion ?? 0) / 1e6,
    lambda: PRICES.lambdaPerMillionRequests / 1e6 + (fetchMs / 1000) * SCRIPT_FETCH_SETTINGS.functionMemoryGb * PRICES.lambdaPerGbSecond,
    dynamodb: (writes * PRICES.dynamoPerMillionWriteUnits + reads * PRICES.dynamoPerMillionReadUnits) / 1e6,
    bytesOut,
  };
}

function costPerMillion(fetchMs: number, dynamoRequests: number) {
  const million = (bytesOut: number) => {
    const { bytesOut: bytes, ...perFetch } = perFetchParts(fetchMs, dynamoRequests, bytesOut);
    const parts: Record<string, number> = Object.fromEntries(Object.entries(perFetch).map(([part, usd]) => [part, usd * 1e6]));
    parts.transferOut = transferCost((bytes * 1e6) / 2 ** 30);
    return { parts, total: Object.values(parts).reduce((sum, usd) => sum + usd, 0) };
  };
  return { uncached: million(256 * KIB + HEADER_BYTES), cached: million(HEADER_BYTES) };
}

function monthlyCost(perSecond: number, fetchMs: number, dynamoRequests: number, cached: boolean): number {
  const fetches = perSecond * SECONDS_PER_MONTH;
  const { bytesOut, ...perFetch } = perFetchParts(fetchMs, dynamoRequests, cached ? HEADER_BYTES : 256 * KIB + HEADER_BYTES);
  let apiGateway = 0;
  let from = 0;
  for (const tier of PRICES.httpApiTiers) {
    apiGateway += (Math.max(0, Math.min(fetches, tier.upTo) - from) / 1e6) * tier.perMillion;
    from = tier.upTo;
  }
  const rest = (perFetch.lambda + perFetch.dynamodb) * fetches;
  return apiGateway + rest + transferCost((fetches * bytesOut) / 2 ** 30);
}
