import { randomBytes, randomInt } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { AddressTally } from '#domain/address-tally';
import { FullCopyTally } from '#domain/full-copies';
import { newId } from '#domain/ids';
import { newKeyValue } from '#domain/key-values';
import { RefusalMemory } from '#domain/refusal-memory';
import { publishScript, ScriptCache } from '#domain/scripts';
import { createScriptHandler } from '#http/loader-script';
import { createValidateHandler } from '#http/loader-validate';
import { SCRIPT_ROUTE, VALIDATE_ROUTE } from '#http/public-routes';
import { LOADER_PLANNED_CHECKS_PER_SECOND, LOADER_ROUTE_THROTTLE } from '#lib/capacity';
import type { TokenBucket } from '#lib/token-bucket';
import { buildLoaderEvent } from '#local/proxy-event';
import { capacityRecordingClient } from '#test-support/consumed-capacity';
import { MemoryScriptStore } from '#test-support/memory-stores';
import type { BenchTable } from './support/dynamodb';
import { createBusinessProject, lambdaContext, nowSeconds } from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { median, percentile, round } from './support/stats';

const NAME = 'loader-flood';

/** How many times each value occurs. */
function countBy(values: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

const LOADER_FLOOD_SETTINGS = {
  /** Common checks measured, each from its own address (a buyer's). */
  commonChecks: 300,
  /** Checks one flooding address sends to one container, each with a random well-formed key (the costliest kind). */
  floodChecks: 5_000,
  /** Requests a second one host sends at the route, beside the planned buyers' 1,000. */
  floodRates: [500, 1_500, 5_000, 25_000],
  simulatedSeconds: 10,
  /** The REST method throttle the loader routes had before (1,000/s, burst 2,000), for the same flood. */
  before: { rateLimit: 1_000, burstLimit: 2_000 },
} as const;

/**
 * Issue 23 item 2 and 3: DynamoDB requests per check on the answer's path (validate, script fetch, a flooding
 * address, a value of no key's form), counted on DynamoDB Local; what a flood from one address costs in one
 * container (requests, time per refused check); and the share of the route's throttle one address can take,
 * simulated on API Gateway's token bucket with the buyers' planned 1,000 checks a second beside it.
 */
export async function benchLoaderFlood(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = LOADER_FLOOD_SETTINGS;
  const { projectId } = await createBusinessProject(table.stores, 'bench loader-flood');
  const keys = (await table.stores.dashboard.issueKeys({ projectId, count: s.commonChecks, tier: 'standard', maxUses: null, now: nowSeconds() })).map(
    (key) => key.key,
  );
  const scripts = new MemoryScriptStore();
  await publishScript(
    { scripts, versions: table.stores.dashboard },
    { id: newId('ver'), projectId, bytes: new TextEncoder().encode('print("bench")'), notes: 'bench', now: nowSeconds() },
  );
  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const stores = createStores(recorder.db, table.tableName);
  const silent = new Logger({ serviceName: 'bench-flood', logLevel: 'SILENT' });
  // One container: both routes' handlers and one address tally.
  const deps = {
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: { report: async () => undefined },
    now: nowSeconds,
    logger: silent,
  };
  const validate = createValidateHandler(deps);
  const fetchScript = createScriptHandler({
    ...deps,
    versions: stores.scriptVersions,
    scripts,
    cache: new ScriptCache(1024 * 1024),
    fullCopies: new FullCopyTally(),
  });
  const event = (route: typeof VALIDATE_ROUTE | typeof SCRIPT_ROUTE, key: string, sourceIp: string) =>
    buildLoaderEvent({
      route,
      body: JSON.stringify({ project_id: projectId, key, fingerprint: randomBytes(32).toString('hex'), executor: 'bench' }),
      sourceIp,
      requestId: randomBytes(8).toString('hex'),
      timeEpoch: Date.now(),
    });
  const buyer = () => `198.51.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  const requestsOf = async (call: () => Promise<unknown>) => {
    recorder.take();
    const started = performance.now();
    await call();
    return { ms: performance.now() - started, requests: recorder.take().requests };
  };

  try {
    // Warm: the SDK's connections and the script's first load.
    for (let i = 0; i < 20; i++) await fetchScript(event(SCRIPT_ROUTE, keys[i] ?? '', buyer()), lambdaContext(NAME));
    const validates = [];
    const fetches = [];
    for (let i = 0; i < s.commonChecks; i++) {
      validates.push(await requestsOf(() => validate(event(VALIDATE_ROUTE, keys[i] ?? '', buyer()), lambdaContext(NAME))));
      fetches.push(await requestsOf(() => fetchScript(event(SCRIPT_ROUTE, keys[i] ?? '', buyer()), lambdaContext(NAME))));
    }
    const malformed = await requestsOf(() => validate(event(VALIDATE_ROUTE, 'letmein', buyer()), lambdaContext(NAME)));

    // One address floods the container with random well-formed keys.
    const flooder = '203.0.113.66';
    const flood: { ms: number; requests: number; status: number }[] = [];
    for (let i = 0; i < s.floodChecks; i++) {
      recorder.take();
      const started = performance.now();
      const result = await validate(event(VALIDATE_ROUTE, newKeyValue(), flooder), lambdaContext(NAME));
      flood.push({ ms: performance.now() - started, requests: recorder.take().requests, status: result.statusCode });
    }
    const refused = flood.filter((check) => check.status === 429);
    const duringFlood = await requestsOf(() => validate(event(VALIDATE_ROUTE, keys[0] ?? '', buyer()), lambdaContext(NAME)));
    const floodRequests = flood.reduce((sum, check) => sum + check.requests, 0);
    log(`${NAME}: ${s.floodChecks} checks from one address: ${floodRequests} DynamoDB requests, ${refused.length} refused in memory`);

    const shares = s.floodRates.map((rate) => ({
      rate,
      after: shareOfRoute(LOADER_ROUTE_THROTTLE, rate, s.simulatedSeconds),
      before: shareOfRoute(s.before, rate, s.simulatedSeconds),
    }));
    const mean = (list: { requests: number }[]) => round(list.reduce((sum, x) => sum + x.requests, 0) / list.length, 3);
    const rows = [
      row(NAME, 'validate: DynamoDB requests per common check', mean(validates), '', {
        target: { op: '<=', limit: 1 },
        note: "the key's conditional write; addresses under 100 checks a minute in the container write no window",
      }),
      row(NAME, 'script fetch: DynamoDB requests per common fetch', mean(fetches), '', {
        note: "the current-version pointer's read and the key's write; the version and its body are cached in the container",
      }),
      row(NAME, "value of no key's form: DynamoDB requests", malformed.requests, '', { target: { op: '<=', limit: 0 } }),
      row(NAME, `flood, ${s.floodChecks} random well-formed keys from one address: DynamoDB requests`, floodRequests, '', {
        note: `${s.floodChecks - refused.length} answered (1 failed write each, a window write past 100), the other ${refused.length} refused in memory with none`,
      }),
      row(NAME, 'flood: a check refused in memory, p50', round(median(refused.map((check) => check.ms)), 3), 'ms', {
        note: `p99 ${round(
          percentile(
            refused.map((check) => check.ms),
            99,
          ),
          3,
        )} ms, the handler with its middlewares`,
      }),
      row(NAME, "a buyer's check during the flood: DynamoDB requests", duringFlood.requests, '', { target: { op: '<=', limit: 1 } }),
      ...shares.flatMap(({ rate, after, before }) => [
        row(NAME, `route share one address takes at ${rate.toLocaleString('en-US')}/s`, round(after.attackerShare * 100, 1), '%', {
          note: `beside ${LOADER_PLANNED_CHECKS_PER_SECOND}/s of buyers, throttle ${LOADER_ROUTE_THROTTLE.rateLimit}/s burst ${LOADER_ROUTE_THROTTLE.burstLimit}; before (REST 1,000/s): ${round(before.attackerShare * 100, 1)}%`,
        }),
        row(NAME, `buyers' checks admitted at ${rate.toLocaleString('en-US')}/s from one address`, round(after.honestAdmitted * 100, 1), '%', {
          note: `before (REST 1,000/s): ${round(before.honestAdmitted * 100, 1)}%`,
        }),
      ]),
    ];
    return {
      rows,
      details: {
        settings: s,
        throttle: LOADER_ROUTE_THROTTLE,
        validateRequests: validates.map((v) => v.requests),
        fetchRequests: fetches.map((f) => f.requests),
        floodRequests: flood.map((check) => check.requests),
        floodStatuses: countBy(flood.map((check) => check.status)),
        shares,
      },
    };
  } finally {
    recorder.db.destroy();
  }
}

/**
 * API Gateway's token bucket (lib/token-bucket.ts's model) fed the planned buyers' checks and one address's flood,
 * each at its rate with random arrival times: what share of the admitted requests the flood took, and what share
 * of the buyers' checks got through.
 */
function shareOfRoute(bucket: TokenBucket, floodRate: number, seconds: number): { attackerShare: number; honestAdmitted: number } {
  const arrivals: [number, boolean][] = [];
  for (let i = 0; i < LOADER_PLANNED_CHECKS_PER_SECOND * seconds; i++) arrivals.push([Math.random() * seconds, false]);
  for (let i = 0; i < floodRate * seconds; i++) arrivals.push([Math.random() * seconds, true]);
  arrivals.sort((a, b) => a[0] - b[0]);
  let tokens = bucket.burstLimit;
  let last = 0;
  const admitted = { flood: 0, honest: 0 };
  for (const [time, fromFlood] of arrivals) {
    tokens = Math.min(bucket.burstLimit, tokens + (time - last) * bucket.rateLimit);
    last = time;
    if (tokens < 1) continue;
    tokens -= 1;
    if (fromFlood) admitted.flood += 1;
    else admitted.honest += 1;
  }
  return { attackerShare: admitted.flood / (admitted.flood + admitted.honest), honestAdmitted: admitted.honest / (LOADER_PLANNED_CHECKS_PER_SECOND * seconds) };
}
