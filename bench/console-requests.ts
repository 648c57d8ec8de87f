import { Logger } from '@aws-lambda-powertools/logger';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { type ConsoleHandler, consoleStoresOf, createConsoleHandler } from '#http/console-api';
import { buildHttpApiEvent } from '#local/proxy-event';
import { meterCapacity } from '#test-support/capacity-meter';
import { MemoryScriptStore } from '#test-support/memory-stores';
import { BENCH_REGION, type BenchTable } from './support/dynamodb';
import { batchWriteKeys, createBusinessProject, lambdaContext, nowSeconds } from './support/fixtures';
import { type BenchResult, type Row, row } from './support/report';
import { round } from './support/stats';

const NAME = 'console-requests';
const CONSOLE_REQUESTS_SETTINGS = { keys: 100_000, note: 'bench buyer zephyrine', discordId: '123456789012345678' } as const;

const ORIGIN = 'http://127.0.0.1:3000';

/**
 * What the console asks of DynamoDB, counted on its own client: the requests and read units of signing in, of the
 * keys page's load (its session check and first page of the listing) and of each kind of search, on a project of
 * 100,000 keys. The counts say "no scan": each is a handful of requests whatever the project's size.
 */
export async function benchConsoleRequests(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = CONSOLE_REQUESTS_SETTINGS;
  const project = await createBusinessProject(table.stores, 'bench console requests');
  log(`${NAME}: seeding ${s.keys.toLocaleString('en-US')} keys`);
  await batchWriteKeys(table, project.projectId, s.keys - 3);
  const issued = await table.stores.dashboard.issueKeys({
    projectId: project.projectId,
    count: 3,
    tier: 'standard',
    maxUses: null,
    now: nowSeconds(),
    watermark: 'c0ffee00c0ffee00',
    note: s.note,
    discordId: s.discordId,
  });

  const db = createDocumentClient({ ...localDynamoConfig(table.endpoint), region: BENCH_REGION });
  const meter = meterCapacity(db);
  const handler = createConsoleHandler({
    stores: consoleStoresOf(createStores(db, table.tableName)),
    keySecret: { get: async () => new Uint8Array(32) },
    now: nowSeconds,
    logger: new Logger({ serviceName: NAME, logLevel: 'SILENT' }),
    scripts: new MemoryScriptStore(),
    staging: { presign: async () => ({ url: '', headers: {} }), read: async () => undefined, discard: async () => undefined },
    tokenKeys: { register: async () => undefined, revoke: async () => undefined },
    discordApiBase: 'http://127.0.0.1:9',
    loaderBaseUrl: ORIGIN,
  });
  try {
    const signIn = await call(handler, 'POST', '/session', undefined, { token: project.token });
    const cookie = (signIn.cookies?.[0] ?? '').split(';')[0] ?? '';
    const keys = `/projects/${project.projectId}/keys/search`;
    const measured: [string, () => Promise<unknown>][] = [
      ['sign in', () => call(handler, 'POST', '/session', undefined, { token: project.token })],
      [
        'keys page load (session check + first 100 keys)',
        async () => {
          await call(handler, 'GET', '/session', cookie);
          await call(handler, 'GET', keys, cookie);
        },
      ],
      ['next page of 100 keys', () => call(handler, 'GET', `${keys}?offset=50000`, cookie)],
      ['search by key id', () => call(handler, 'GET', `${keys}?q=${issued[0]?.id}`, cookie)],
      ['search by watermark (3 keys)', () => call(handler, 'GET', `${keys}?q=c0ffee00c0ffee00`, cookie)],
      ['search by Discord id (3 keys)', () => call(handler, 'GET', `${keys}?q=${s.discordId}`, cookie)],
      ['search by two note words (3 keys)', () => call(handler, 'GET', `${keys}?q=${encodeURIComponent('zephyr bench')}`, cookie)],
      ['status filter page, revoked (none among 1,000 read)', () => call(handler, 'GET', `${keys}?status=revoked`, cookie)],
    ];
    const rows: Row[] = [];
    const details: Record<string, unknown> = {};
    for (const [what, run] of measured) {
      meter.reset();
      await run();
      const byCommand = meter.byCommand();
      const requests = Object.values(byCommand).reduce((sum, units) => sum + units.requests, 0);
      rows.push(row(NAME, `${what}: DynamoDB requests`, requests, 'requests'));
      rows.push(row(NAME, `${what}: read units`, round(meter.readUnits, 1), 'RCU', { note: `write units ${round(meter.writeUnits, 1)}` }));
      details[what] = byCommand;
    }
    return { rows, details };
  } finally {
    db.destroy();
  }
}

async function call(handler: ConsoleHandler, method: string, path: string, cookie?: string, body?: unknown) {
  const [rawPath = '', query = ''] = path.split('?');
  const headers: [string, string][] = [['host', '127.0.0.1:3000'], ['origin', ORIGIN], ...(cookie ? ([['cookie', cookie]] as [string, string][]) : [])];
  const result = await handler(
    buildHttpApiEvent({
      method,
      routePath: '$default',
      rawPath: `/console/api${rawPath}`,
      rawQueryString: query,
      headerPairs: headers,
      body: body === undefined ? null : JSON.stringify(body),
      isBase64Encoded: false,
      requestId: `bench-${Math.random()}`,
      timeEpoch: Date.now(),
      sourceIp: '127.0.0.1',
      stage: '$default',
      accountId: '000000000000',
      apiId: 'local',
      domainName: '127.0.0.1',
    }),
    lambdaContext(NAME),
  );
  if (result.statusCode >= 400) throw new Error(`${method} ${path} answered ${result.statusCode}: ${result.body}`);
  return result;
}
