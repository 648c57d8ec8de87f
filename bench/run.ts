import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchApiPath } from './api-path';
import { benchBulkRevoke } from './bulk-revoke';
import { benchCloneDetection } from './clone-detection';
import { benchColdStart } from './cold-start';
import { benchConsole } from './console';
import { benchConsoleRequests } from './console-requests';
import { benchDelivery } from './delivery';
import { benchDiscord } from './discord';
import { benchEdge } from './edge';
import { benchHiddenMark } from './hidden-mark';
import { benchListKeys } from './list-keys';
import { benchLoaderCheck } from './loader-check';
import { benchLoaderCost } from './loader-cost';
import { benchLoaderFlood } from './loader-flood';
import { benchScriptFetch } from './script-fetch';
import { benchSdapiLeak } from './sdapi-leak';
import { benchSellingKeys } from './selling-keys';
import { benchShops } from './shops';
import { benchStats } from './stats';
import { type BenchTable, createBenchTable, deleteBenchTable, existingTables } from './support/dynamodb';
import { type StackProcess, startStackProcess } from './support/local-stack';
import { type BenchResult, formatTable, type Row, writeJson } from './support/report';
import { round } from './support/stats';

/**
 * `npm run bench`: every benchmark against its own in-memory DynamoDB Local (or DYNAMODB_ENDPOINT), one table
 * for the run, a table on stdout and the figures in bench/results/latest.json.
 */
const USAGE = `usage: npx tsx bench/run.ts [--only NAME,...] [--seed batch|issue] [--experiments] [--against REF] [--out FILE]
  --only         run these benchmarks only: cold-start, delivery, api-path, list-keys, bulk-revoke,
                 loader-check, loader-cost, loader-flood, script-fetch, clone-detection, sdapi-leak, hidden-mark,
                 selling-keys, edge, stats, console, console-requests, discord, shops
  --seed         how list-keys writes its 100,000 keys: BatchWriteItem in the repository's layout (batch, default)
                 or DashboardStore.issueKeys itself (issue, slower)
  --experiments  also measure the alternatives (cold-start builds, stream poll intervals) beside what is deployed
  --against REF  cold-start also measures the functions of git ref REF (checked out into a temporary worktree,
                 bundled the same way) in the same rounds, and reports this tree's first answer ÷ REF's
  --out FILE     where the figures go (default bench/results/latest.json for a full run; none for --only)`;
interface BenchContext {
  table: BenchTable;
  /** `npm start` in a process of its own, started on first use and shared by the benchmarks that need it. */
  stack: () => Promise<StackProcess>;
  log: (line: string) => void;
  flags: Flags;
}

const BENCHMARKS = {
  'cold-start': ({ table, log, flags }) => benchColdStart(table, log, { experiments: flags.experiments, ...(flags.against ? { against: flags.against } : {}) }),
  delivery: async ({ stack, table, log, flags }) => benchDelivery(await stack(), table, log, { experiments: flags.experiments }),
  'api-path': async ({ stack, log }) => benchApiPath(await stack(), log),
  'list-keys': ({ table, log, flags }) => benchListKeys(table, log, flags.seed),
  'bulk-revoke': ({ table, log }) => benchBulkRevoke(table, log),
  'loader-check': async ({ table, stack, log }) => benchLoaderCheck(table, await stack(), log),
  'loader-cost': ({ table, log }) => benchLoaderCost(table, log),
  'loader-flood': ({ table, log }) => benchLoaderFlood(table, log),
  'script-fetch': async ({ table, stack, log }) => benchScriptFetch(table, await stack(), log),
  'clone-detection': ({ table, log }) => benchCloneDetection(table, log),
  'sdapi-leak': ({ table, log }) => benchSdapiLeak(table, log),
  'hidden-mark': ({ table, log }) => benchHiddenMark(table, log),
  'selling-keys': ({ table, log }) => benchSellingKeys(table, log),
  edge: ({ log }) => benchEdge(log),
  stats: ({ table, log }) => benchStats(table, log),
  console: async ({ stack, log }) => benchConsole(await stack(), log),
  'console-requests': ({ table, log }) => benchConsoleRequests(table, log),
  discord: ({ table, log }) => benchDiscord(table, log),
  shops: ({ table, log }) => benchShops(table, log),
} satisfies Record<string, (context: BenchContext) => Promise<BenchResult>>;
type BenchName = keyof typeof BENCHMARKS;
const USES_STACK = new Set<BenchName>(['delivery', 'api-path', 'loader-check', 'script-fetch', 'console']);

interface Flags {
  seed: 'batch' | 'issue';
  /** Also measure the design alternatives (cold-start builds, stream poll intervals), beside what is deployed. */
  experiments: boolean;
  /** A git ref whose functions the cold-start part measures beside this tree's. */
  against?: string;
}

const RESULTS_FILE = fileURLToPath(new URL('./results/latest.json', import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      seed: { type: 'string', default: 'batch' },
      experiments: { type: 'boolean', default: false },
      against: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const names = selectBenchmarks(values.only);
  if (values.seed !== 'batch' && values.seed !== 'issue') throw new Error('--seed is batch or issue');
  const flags: Flags = { seed: values.seed, experiments: values.experiments, ...(values.against ? { against: values.against } : {}) };
  // A partial run does not overwrite the full run's figures unless asked to.
  const out = values.out ?? (values.only ? undefined : RESULTS_FILE);

  const startedAt = new Date();
  const log = (line: string) => process.stderr.write(`[${((Date.now() - startedAt.getTime()) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
  // Loaded only when needed: with DYNAMODB_ENDPOINT set, no Java is started.
  const dynamo = process.env.DYNAMODB_ENDPOINT ? undefined : await (await import('#local/dynamodb-local')).startDynamoDbLocal({});
  const endpoint = process.env.DYNAMODB_ENDPOINT ?? dynamo?.endpoint ?? '';
  log(`DynamoDB Local at ${endpoint}${dynamo ? ' (started for this run, in memory)' : ' (DYNAMODB_ENDPOINT)'}`);
  const others = await existingTables(endpoint);
  if (others.length > 0)
    log(
      `warning: ${endpoint} already holds ${others.length} table(s); DynamoDB Local writes slowly to a table created after a busy streamed one, so unset DYNAMODB_ENDPOINT to let the bench start its own`,
    );
  const table = await createBenchTable(endpoint, `bench-${randomBytes(4).toString('hex')}`);

  let stackProcess: Promise<StackProcess> | undefined;
  const stack = () =>
    (stackProcess ??= startStackProcess().then((started) => {
      log(`local stack (npm start) up at ${started.info.baseUrl}, pid ${started.pid}`);
      return started;
    }));
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  try {
    for (const name of names) {
      // Other work on this machine moves every figure: the load when each benchmark starts goes with its figures.
      const loadAtStart = loadavg().map((load) => round(load, 2));
      log(
        `${name}: start (load average ${loadAtStart.join(', ')}${(loadAtStart[0] ?? 0) > cpus().length ? ': the machine is busy, figures will be noisy' : ''})`,
      );
      const startedBench = performance.now();
      const result = await BENCHMARKS[name]({ table, stack, log, flags });
      rows.push(...result.rows);
      details[name] = { ...result.details, loadAverageAtStart: loadAtStart, seconds: round((performance.now() - startedBench) / 1000, 1) };
      // An idle stack still polls its stream: stopped as soon as no benchmark left needs it.
      if (stackProcess && !names.slice(names.indexOf(name) + 1).some((next) => USES_STACK.has(next))) {
        await (await stackProcess).stop();
        stackProcess = undefined;
      }
      log(`${name}: done in ${round((performance.now() - startedBench) / 1000, 1)} s`);
    }
  } finally {
    await (await stackProcess?.catch(() => undefined))?.stop();
    await deleteBenchTable(table).catch(() => undefined);
    await dynamo?.stop();
  }

  const seconds = round((Date.now() - startedAt.getTime()) / 1000, 1);
  process.stdout.write(
    `${formatTable(rows)}\n\nWhole run: ${seconds} s on ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}\n`,
  );
  const missed = rows.filter((r) => r.pass === false);
  if (out) {
    await writeJson(out, {
      startedAt: startedAt.toISOString(),
      seconds,
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: round(totalmem() / 2 ** 30, 1), node: process.version, java: javaVersion() },
      dynamodb: { endpoint, startedForRun: dynamo !== undefined, ...(dynamo ? { inMemory: true } : {}) },
      benchmarks: names,
      rows,
      missed: missed.map((r) => `${r.benchmark} / ${r.metric}`),
      details,
    });
    process.stdout.write(`Figures written to ${out}\n`);
  }
}

function selectBenchmarks(only: string | undefined): BenchName[] {
  const all = Object.keys(BENCHMARKS) as BenchName[];
  if (!only) return all;
  const asked = only.split(',').map((name) => name.trim());
  const unknown = asked.filter((name) => !all.includes(name as BenchName));
  if (unknown.length > 0) throw new Error(`Unknown benchmark ${unknown.join(', ')}; choose from ${all.join(', ')}`);
  return all.filter((name) => asked.includes(name));
}

function javaVersion(): string | undefined {
  try {
    return execFileSync('java', ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
