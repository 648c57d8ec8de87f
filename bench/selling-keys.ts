import { Logger } from '@aws-lambda-powertools/logger';
import { localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { AddressTally } from '#domain/address-tally';
import { checkKey, validateAnswer } from '#domain/key-check';
import type { TelemetrySink } from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import { createApiHandler } from '#http/api-handler';
import { issueKeysRoute } from '#http/owner-routes/issue-keys';
import { memoryKeySecret } from '#local/key-secret';
import type { IssueKeysResponse } from '#schemas/responses';
import { type CapacityTally, capacityRecordingClient, indexUnits } from '#test-support/consumed-capacity';
import type { BenchTable } from './support/dynamodb';
import { apiGatewayEvent, CallerPool, createBusinessProject, expectStatus, lambdaContext, nowSeconds } from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { median, round, timed } from './support/stats';

const NAME = 'selling-keys';
const SELLING_KEYS_SETTINGS = {
  /** Calls of 100 keys each: half with an order id (derived values, an order item), half without (random values). */
  issueCalls: 20,
  keysPerCall: 100,
  /** Repeats of one recorded order, each answering its 100 keys again. */
  repeats: 10,
  /** Checks measured per binding state. */
  checks: 20,
  /** Issue's target: 1 WCU a key on the table plus the batch's constant share, at 100 keys a call. */
  wcuPerKeyTarget: 1.1,
  /**
   * Issue 20's target was the answer's path unchanged at 2 (the address window and the key); since the address is
   * counted in memory (issue 23) the common check makes 1, the key's own write, binding included.
   */
  requestsPerCheckTarget: 1,
} as const;

const noTelemetry: TelemetrySink = { report: async () => undefined };

/**
 * Selling keys (issue 20): `POST /v1/projects/:id/keys` of 100 keys through its real handler (rate limit, project,
 * issue, audit), and the loader check of a machine-bound key, on a client that counts the requests and the
 * capacity DynamoDB reports per table and index.
 */
export async function benchSellingKeys(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = SELLING_KEYS_SETTINGS;
  const project = await createBusinessProject(table.stores, 'bench selling-keys');
  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const stores = createStores(recorder.db, table.tableName);
  const handler = createApiHandler(issueKeysRoute, {
    stores,
    keySecret: memoryKeySecret(),
    now: nowSeconds,
    logger: new Logger({ serviceName: 'bench', logLevel: 'WARN' }),
  });
  const callers = new CallerPool(project.ownerId);
  const call = async (body: Record<string, unknown>) => {
    const event = apiGatewayEvent({ method: 'POST', resource: '/v1/projects/{id}/keys', projectId: project.projectId, caller: callers.next(), body });
    recorder.take();
    const { ms, result } = await timed(() => handler(event, lambdaContext('issue-keys')));
    expectStatus(result, 200, 'issue keys');
    return { ms, capacity: recorder.take(), answer: result.body };
  };

  const issues: { ordered: boolean; ms: number; capacity: CapacityTally }[] = [];
  for (let i = 0; i < s.issueCalls; i++) {
    const ordered = i % 2 === 0;
    const { ms, capacity } = await call({ count: s.keysPerCall, max_fingerprints: 1, ...(ordered ? { order_id: `bench-order-${i}` } : {}) });
    issues.push({ ordered, ms, capacity });
  }
  // One-key calls give the batch's constant: what a 100-key call costs beyond its keys is the same.
  const single: { ordered: boolean; capacity: CapacityTally }[] = [];
  for (let i = 0; i < 4; i++) {
    const ordered = i % 2 === 0;
    single.push({ ordered, capacity: (await call({ count: 1, max_fingerprints: 1, ...(ordered ? { order_id: `bench-single-${i}` } : {}) })).capacity });
  }
  const repeatBody = { count: s.keysPerCall, order_id: 'bench-order-0', max_fingerprints: 1 };
  const first = (await call(repeatBody)).answer;
  const repeats: { ms: number; capacity: CapacityTally; same: boolean }[] = [];
  for (let i = 0; i < s.repeats; i++) {
    const { ms, capacity, answer } = await call(repeatBody);
    repeats.push({ ms, capacity, same: answer === first });
  }
  log(
    `${NAME}: ${issues.length} calls of ${s.keysPerCall} keys, p50 ${Math.round(median(issues.map((r) => r.ms)))} ms; ${repeats.length} repeats p50 ${Math.round(median(repeats.map((r) => r.ms)))} ms`,
  );

  // Checks: a key bound to 1 machine, and one bound to 10, each checked from a bound machine; and the first
  // check of a new machine, which binds it.
  const keys = (JSON.parse(first) as IssueKeysResponse).keys;
  const [one, ten] = (JSON.parse((await call({ count: 2, max_fingerprints: 10 })).answer) as IssueKeysResponse).keys;
  const machine = (n: number) => n.toString(16).padStart(64, '0');
  let address = 0;
  const check = async (key: string, fingerprint: string) => {
    address += 1;
    const deps = {
      keys: stores.keyChecks,
      rateLimits: stores.rateLimits,
      addresses: new AddressTally(),
      refusals: new RefusalMemory(),
      telemetry: noTelemetry,
    };
    recorder.take();
    const { ms, result } = await timed(() =>
      checkKey(deps, { project_id: project.projectId, key, fingerprint, executor: 'Wave' }, `10.9.${address >> 8}.${address & 255}`, nowSeconds()).then(
        validateAnswer,
      ),
    );
    if (!result.valid) throw new Error(`bench check refused: ${result.code}`);
    return { ms, capacity: recorder.take() };
  };
  for (let n = 1; n <= 10; n++) await check(ten!.key, machine(n));
  await check(one!.key, machine(1));
  const binding = [];
  for (let i = 0; i < s.checks; i++) binding.push(await check(keys[i % keys.length]!.key, machine(1_000 + i)));
  const boundOne = [];
  const boundTen = [];
  for (let i = 0; i < s.checks; i++) {
    boundOne.push(await check(one!.key, machine(1)));
    boundTen.push(await check(ten!.key, machine(1 + (i % 10))));
  }
  recorder.db.destroy();

  const keysIssued = issues.length * s.keysPerCall;
  const sum = (runs: { capacity: CapacityTally }[], units: (capacity: CapacityTally) => number) => runs.reduce((total, run) => total + units(run.capacity), 0);
  const perCall = (runs: { capacity: CapacityTally }[], units: (capacity: CapacityTally) => number) => round(sum(runs, units) / runs.length, 2);
  const ordered = issues.filter((run) => run.ordered);
  const unordered = issues.filter((run) => !run.ordered);
  const constant = (isOrdered: boolean) =>
    perCall(
      single.filter((run) => run.ordered === isOrdered),
      (c) => c.write.table,
    ) - 1;
  const marginal = (runs: typeof issues, isOrdered: boolean) =>
    round((sum(runs, (c) => c.write.table) / runs.length - (constant(isOrdered) + 1)) / (s.keysPerCall - 1), 3);
  const rows = [
    row(NAME, `issue ${s.keysPerCall} keys, one call p50`, round(median(issues.map((run) => run.ms)), 1), 'ms', {
      note: 'through the route handler: rate limit, project read, lease, reservation, 4 BatchWriteItem, audit entry',
    }),
    row(
      NAME,
      'issue: DynamoDB requests per call, with order_id',
      perCall(ordered, (c) => c.requests),
      '',
    ),
    row(
      NAME,
      'issue: DynamoDB requests per call, without',
      perCall(unordered, (c) => c.requests),
      '',
    ),
    row(NAME, 'issue: table WCU per key, with order_id', round(sum(ordered, (c) => c.write.table) / (ordered.length * s.keysPerCall), 3), 'WCU', {
      target: { op: '<=', limit: s.wcuPerKeyTarget },
      note: 'every write of the call (rate window, lease, counter and order transaction, keys, audit entry) over its 100 keys',
    }),
    row(NAME, 'issue: table WCU per key, without', round(sum(unordered, (c) => c.write.table) / (unordered.length * s.keysPerCall), 3), 'WCU', {
      target: { op: '<=', limit: s.wcuPerKeyTarget },
    }),
    row(NAME, 'issue: table WCU per key beyond the batch constant, with order_id', marginal(ordered, true), 'WCU', {
      target: { op: '<=', limit: s.wcuPerKeyTarget },
      note: '(WCU of a 100-key call - WCU of a 1-key call) / 99',
    }),
    row(NAME, 'issue: batch constant, with order_id', round(constant(true), 2), 'WCU', {
      note: 'a 1-key call less its key: rate window, lease put and delete, counter + order transaction (2 x 2), audit entry',
    }),
    row(NAME, 'issue: batch constant, without', round(constant(false), 2), 'WCU'),
    row(NAME, 'issue: index WCU per key', round(sum(issues, (c) => indexUnits(c.write)) / keysIssued, 3), 'WCU', {
      note: 'a new key enters byIssueOrderKeys and byWatermark (keys only), as every issued key always has',
    }),
    row(
      NAME,
      'issue: table RCU per call',
      perCall(issues, (c) => c.read.table),
      'RCU',
      { note: 'the project read by every route and by the reservation, the order read; none per key' },
    ),
    row(NAME, 'repeated order p50', round(median(repeats.map((run) => run.ms)), 1), 'ms'),
    row(
      NAME,
      'repeated order: DynamoDB requests per call',
      perCall(repeats, (c) => c.requests),
      '',
    ),
    row(
      NAME,
      'repeated order: table WCU per call',
      perCall(repeats, (c) => c.write.table),
      'WCU',
      { note: 'the rate window and the audit entry; no key written' },
    ),
    row(NAME, 'repeated order: answers not byte-identical', repeats.filter((run) => !run.same).length, '', { target: { op: '<=', limit: 0 } }),
    row(
      NAME,
      'check, bound machine, 1 bound: key item WCU',
      perCall(boundOne, (c) => c.write.table),
      'WCU',
      { note: 'the key item only: the address is counted in memory, its window not written' },
    ),
    row(
      NAME,
      'check, bound machine, 10 bound: key item WCU',
      perCall(boundTen, (c) => c.write.table),
      'WCU',
      { note: 'the key item passes 1 KB with 10 machines' },
    ),
    row(
      NAME,
      'check, bound machine: DynamoDB requests on the answer path',
      perCall([...boundOne, ...boundTen], (c) => c.requests),
      '',
      {
        target: { op: '<=', limit: s.requestsPerCheckTarget },
      },
    ),
    row(
      NAME,
      'check binding a new machine: DynamoDB requests',
      perCall(binding, (c) => c.requests),
      '',
      { note: 'the write assuming a bound machine fails, a read of what it tests says why, then the binding write; once per machine' },
    ),
    row(
      NAME,
      'check binding a new machine: key item WCU incl. the failed write',
      perCall(binding, (c) => c.write.table + c.conditionFailures),
      'WCU',
      { note: 'AWS charges a failed conditional write; DynamoDB Local reports none for it' },
    ),
    row(NAME, 'check p50, bound machine', round(median([...boundOne, ...boundTen].map((run) => run.ms)), 2), 'ms'),
  ];
  return { rows, details: { settings: s, issues, single, repeats, checks: { binding, boundOne, boundTen } } };
}
