import { Logger } from '@aws-lambda-powertools/logger';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keyIdOfPartition } from '#adapters/layout';
import { TABLE } from '#adapters/table-definition';
import { unixSeconds } from '#domain/model';
import { createApiHandler } from '#http/api-handler';
import { listKeysRoute } from '#http/owner-routes/list-keys';
import { memoryKeySecret } from '#local/key-secret';
import type { BenchTable } from './support/dynamodb';
import {
  apiGatewayEvent,
  batchWriteKeys,
  CallerPool,
  createBusinessProject,
  expectStatus,
  issueKeys,
  lambdaContext,
  type SeedReport,
} from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { mapBounded, median, round, timed } from './support/stats';

const NAME = 'list-keys';
const LIST_KEYS_SETTINGS = {
  keys: 100_000,
  limit: 100,
  offsets: [0, 50_000, 99_900],
  /** Timed calls per offset through the handler (interleaved across offsets so drift hits them alike). */
  handlerRuns: 15,
  /** Timed calls per offset of the naive skip; it reads up to 100,000 items a call. */
  naiveRuns: 3,
  /** Keys issued through DashboardStore.issueKeys to measure the store's own issue rate, alone and in parallel. */
  issueSample: 2_000,
  issueConcurrency: 4,
  ratioTarget: 1.5,
} as const;

type Seeding = 'batch' | 'issue';

/** One transaction's worth of keys (DashboardStore.issueKeys writes 99 keys per transaction). */
const ISSUE_CHUNK = 99;
const rate = (seed: SeedReport) => (seed.keys / seed.ms) * 1000;

/**
 * GET keys at depth, through the real list-keys handler (middy chain, rate limit, project read, the
 * key-order index), against the naive `offset` skip most DynamoDB code does.
 */
export async function benchListKeys(table: BenchTable, log: (line: string) => void, seeding: Seeding = 'batch'): Promise<BenchResult> {
  const s = LIST_KEYS_SETTINGS;
  const project = await createBusinessProject(table.stores, 'bench list-keys');

  // The repository's own issue rate, one caller and several at once (they contend for the project's counter).
  const serial = await issueKeys(table.stores, project.projectId, s.issueSample);
  const parallelStart = performance.now();
  const chunks = Array.from({ length: Math.ceil(s.issueSample / ISSUE_CHUNK) }, () => ISSUE_CHUNK);
  await mapBounded(chunks, s.issueConcurrency, (count) => issueKeys(table.stores, project.projectId, count));
  const parallel: SeedReport = {
    keys: chunks.length * ISSUE_CHUNK,
    ms: performance.now() - parallelStart,
    method: `DashboardStore.issueKeys ×${s.issueConcurrency}`,
  };
  log(`${NAME}: issueKeys ${Math.round(rate(serial))} keys/s alone, ${Math.round(rate(parallel))} keys/s with ${s.issueConcurrency} callers`);
  const rest = s.keys - serial.keys - parallel.keys;
  const seed: SeedReport = seeding === 'issue' ? await issueKeys(table.stores, project.projectId, rest) : await batchWriteKeys(table, project.projectId, rest);
  log(`${NAME}: seeded ${seed.keys} more keys with ${seed.method} in ${Math.round(seed.ms)} ms`);

  const callers = new CallerPool(project.ownerId);
  // The route's handler as the stack deploys it, on the bench's table.
  const listKeysHandler = createApiHandler(listKeysRoute, {
    stores: table.stores,
    keySecret: memoryKeySecret(),
    now: () => unixSeconds(),
    logger: new Logger({ serviceName: 'bench', logLevel: 'WARN' }),
  });
  const callHandler = async (offset: number) => {
    const event = apiGatewayEvent({
      method: 'GET',
      resource: '/v1/projects/{id}/keys',
      projectId: project.projectId,
      caller: callers.next(),
      query: { limit: String(s.limit), offset: String(offset) },
    });
    const response = await listKeysHandler(event, lambdaContext('list-keys'));
    expectStatus(response, 200, `GET keys offset ${offset}`);
    return JSON.parse(response.body) as { keys: { id: string }[]; total: number };
  };

  // The naive skip first: its pages (the last run's) are the reference the handler's pages must equal.
  const naiveMs = new Map<number, number[]>(s.offsets.map((o) => [o, []]));
  const naivePages = new Map<number, string>();
  for (let run = 0; run < s.naiveRuns; run++) {
    for (const offset of s.offsets) {
      const { ms, result } = await timed(() => naiveListKeys(table, project.projectId, offset, s.limit));
      naiveMs.get(offset)?.push(ms);
      naivePages.set(offset, result.map((k) => k.id).join());
    }
  }
  for (const offset of s.offsets) {
    const page = await callHandler(offset);
    if (page.total !== s.keys) throw new Error(`total is ${page.total}, expected ${s.keys}`);
    if (page.keys.length !== s.limit || page.keys.map((k) => k.id).join() !== naivePages.get(offset)) {
      throw new Error(`offset ${offset}: the handler's page differs from the naive skip's`);
    }
  }

  const handlerMs = new Map<number, number[]>(s.offsets.map((o) => [o, []]));
  const storeMs = new Map<number, number[]>(s.offsets.map((o) => [o, []]));
  for (let run = 0; run < s.handlerRuns; run++) {
    for (const offset of s.offsets) {
      handlerMs.get(offset)?.push((await timed(() => callHandler(offset))).ms);
      storeMs.get(offset)?.push((await timed(() => table.stores.projects.listKeysAfter(project.projectId, offset, s.limit))).ms);
    }
  }
  log(`${NAME}: ${s.handlerRuns} handler and ${s.naiveRuns} naive runs per offset done`);

  const p50 = (samples: Map<number, number[]>, offset: number) => median(samples.get(offset) ?? []);
  const deepest = s.offsets[s.offsets.length - 1] ?? 0;
  const ratio = (samples: Map<number, number[]>) => round(p50(samples, deepest) / p50(samples, 0), 2);
  const rows = [
    row(NAME, 'seed: DashboardStore.issueKeys, 1 caller', round(rate(serial), 0), 'keys/s', { note: `${serial.keys} keys, one transaction per 99 keys` }),
    row(NAME, `seed: DashboardStore.issueKeys, ${s.issueConcurrency} callers`, round(rate(parallel), 0), 'keys/s', {
      note: `${parallel.keys} keys; the callers retry on the project's key counter`,
    }),
    row(NAME, `seed: ${seed.method}`, round(rate(seed), 0), 'keys/s', { note: `${seed.keys.toLocaleString('en-US')} keys in ${round(seed.ms / 1000, 1)} s` }),
    ...s.offsets.map((offset) => row(NAME, `handler p50 @ offset ${offset.toLocaleString('en-US')}`, round(p50(handlerMs, offset)), 'ms')),
    row(NAME, `handler ratio @${deepest.toLocaleString('en-US')} / @0`, ratio(handlerMs), 'x', { target: { op: '<=', limit: s.ratioTarget } }),
    row(NAME, `listKeysAfter ratio @${deepest.toLocaleString('en-US')} / @0`, ratio(storeMs), 'x', {
      note: `query alone: p50 ${round(p50(storeMs, 0))} ms @0, ${round(p50(storeMs, deepest))} ms @${deepest}`,
    }),
    ...s.offsets.map((offset) => row(NAME, `naive skip p50 @ offset ${offset.toLocaleString('en-US')}`, round(p50(naiveMs, offset)), 'ms')),
    row(NAME, `naive skip ratio @${deepest.toLocaleString('en-US')} / @0`, ratio(naiveMs), 'x', {
      note: 'reads and discards `offset` items from the same index',
    }),
  ];
  return {
    rows,
    details: {
      settings: s,
      seeding: [serial, parallel, seed],
      handlerMs: Object.fromEntries(handlerMs),
      listKeysAfterMs: Object.fromEntries(storeMs),
      naiveMs: Object.fromEntries(naiveMs),
    },
  };
}

/**
 * `offset` the way most DynamoDB code does it: read the index from the start and throw away `offset` items.
 * Each page asks for no more than is still needed, so offset 0 costs one small query, as it would in such code.
 */
async function naiveListKeys(table: BenchTable, projectId: string, offset: number, limit: number): Promise<{ id: string }[]> {
  const index = TABLE.indexes.byIssueOrder;
  const page: { id: string }[] = [];
  let seen = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': index.partitionKey },
        ExpressionAttributeValues: { ':p': projectId },
        ExclusiveStartKey: startKey,
        Limit: offset + limit - seen,
      }),
    );
    for (const item of result.Items ?? []) {
      // The index is keys-only: a key's id is in its partition key. (The page's items themselves are not read here.)
      if (seen++ >= offset && page.length < limit) page.push({ id: keyIdOfPartition(String(item.pk)) });
    }
    startKey = result.LastEvaluatedKey;
  } while (startKey && page.length < limit);
  return page;
}
