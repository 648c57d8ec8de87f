import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { RATE_LIMIT } from '#domain/rate-limit';
import { startLocalServer } from '#local/server';
import { startTelemetryPipeline } from '#local/telemetry-pipeline';
import { KEYS_PAGE } from '#schemas/requests';
import { MemoryScriptStore } from '#test-support/memory-stores';
import type { LeakReport } from '../sdapi/leak';
import { runSdapi } from '../sdapi/main';
import type { BenchTable } from './support/dynamodb';
import { batchWriteKeys, createBusinessProject } from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { median, round, timed } from './support/stats';

const NAME = 'sdapi-leak';
const SDAPI_LEAK_SETTINGS = {
  /** Keys of the project in all, the figure. */
  projectKeys: 50_000,
  /** Keys carrying each leaked watermark; each run leaks a watermark of its own, since a revoke happens once. */
  keysPerLeak: 2,
  runs: 3,
} as const;

interface Run {
  ms: number;
  requests: string[];
  /** Key reads (GET) sent before the first revoke: what a person waits through before anything is revoked, beside the one trace. */
  readsBeforeRevoke: number;
  waitedMs: number;
  report: LeakReport;
}

/**
 * `sdapi leak FILE --yes` in-process, against the local server (the real authorizer, handlers and exact 100/min
 * limit) on a 50,000-key project: each run a dump naming one leaked watermark and one no key carries, then a
 * repeat of the last dump, which must say "already revoked".
 */
export async function benchSdapiLeak(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = SDAPI_LEAK_SETTINGS;
  const project = await createBusinessProject(table.stores, 'bench sdapi-leak');
  const leaks = Array.from({ length: s.runs }, () => randomBytes(8).toString('hex'));
  const seeding = [await batchWriteKeys(table, project.projectId, s.projectKeys - s.runs * s.keysPerLeak)];
  for (const watermark of leaks) seeding.push(await batchWriteKeys(table, project.projectId, s.keysPerLeak, { watermark }));
  log(`${NAME}: seeded ${s.projectKeys} keys in ${Math.round(seeding.reduce((sum, seed) => sum + seed.ms, 0))} ms`);

  const telemetry = startTelemetryPipeline({ store: table.stores.telemetry });
  const server = await startLocalServer({ port: 0, stores: table.stores, telemetry: telemetry.sink, scripts: new MemoryScriptStore() });
  const dir = await mkdtemp(join(tmpdir(), 'bench-sdapi-leak-'));
  try {
    const leak = async (file: string): Promise<Run> => {
      const requests: string[] = [];
      let waitedMs = 0;
      let stdout = '';
      const { ms, result: code } = await timed(() =>
        runSdapi(['leak', file, '--yes', '--json'], {
          stdout: {
            write: (text) => {
              stdout += text;
            },
            isTTY: false,
          },
          stderr: { write: () => undefined, isTTY: false },
          stdinIsTTY: false,
          ask: async () => '',
          env: { SDAPI_BASE_URL: server.url, SDAPI_TOKEN: project.token, SDAPI_PROJECT: project.projectId },
          cwd: dir,
          fetch: (input, init) => {
            requests.push(`${init?.method ?? 'GET'} ${String(input).replace(server.url, '')}`);
            return fetch(input, init);
          },
          sleep: async (waitMs) => {
            waitedMs += waitMs;
            await delay(waitMs);
          },
        }),
      );
      if (code !== 0) throw new Error(`sdapi leak exited ${code}: ${stdout}`);
      // Key reads before the first revoke; the trace (POST …/leak/trace, the hidden mark) goes before them too.
      const firstRevoke = requests.findIndex((request) => request.includes('/keys/revoke-bulk'));
      const before = firstRevoke === -1 ? requests : requests.slice(0, firstRevoke);
      const readsBeforeRevoke = before.filter((request) => request.startsWith('GET')).length;
      return { ms, requests, readsBeforeRevoke, waitedMs, report: JSON.parse(stdout) as LeakReport };
    };

    const runs: Run[] = [];
    let lastDump = '';
    for (const [i, watermark] of leaks.entries()) {
      lastDump = join(dir, `leak-${i}.lua`);
      await writeFile(lastDump, `-- dumped loader\nlocal wm = "WM_${watermark}"\nlocal decoy = "WM_${randomBytes(8).toString('hex')}"\n`);
      const run = await leak(lastDump);
      runs.push(run);
      log(`${NAME}: run ${i + 1}: ${run.requests.length} requests (${run.readsBeforeRevoke} before the first revoke) in ${Math.round(run.ms)} ms`);
    }
    const repeat = await leak(lastDump);
    const repeated = repeat.report.watermarks.find((w) => w.watermark === leaks.at(-1));
    log(`${NAME}: repeat: ${repeat.requests.length} requests in ${Math.round(repeat.ms)} ms, already_revoked ${repeated?.already_revoked}`);

    const revokedWrong = runs.filter((run) => run.report.watermarks.find((w) => w.active_keys > 0)?.revoked_count !== s.keysPerLeak).length;
    // What the listing leak sent before its first revoke: every page of the project, 100 keys a request.
    const listingReads = Math.ceil(s.projectKeys / KEYS_PAGE.maxLimit);
    const listingMinutes = Math.floor((listingReads - 1) / RATE_LIMIT.requests);
    const rows = [
      row(
        NAME,
        `requests before the first revoke, ${s.projectKeys.toLocaleString('en-US')}-key project`,
        median(runs.map((run) => run.readsBeforeRevoke)),
        'requests',
        {
          target: { op: '<=', limit: 2 },
          note: `one filtered read per watermark in the dump (2 here), after the one trace request; the listing leak sent ${listingReads} (every page of 100), over ${listingMinutes} full minutes of the ${RATE_LIMIT.requests}/min limit`,
        },
      ),
      row(NAME, 'leak p50, scan to revoked', round(median(runs.map((run) => run.ms)) / 1000, 2), 's', { target: { op: '<', limit: 60 } }),
      row(NAME, 'requests per leak', median(runs.map((run) => run.requests.length)), 'requests'),
      row(NAME, 'time waited on 429', runs.reduce((sum, run) => sum + run.waitedMs, 0) / 1000, 's', { target: { op: '<=', limit: 0 } }),
      row(NAME, 'runs with a wrong revoked_count', revokedWrong, '', { target: { op: '<=', limit: 0 } }),
      row(NAME, 'repeat says already revoked, with the key count', repeated?.active_keys === 0 && repeated.already_revoked === s.keysPerLeak ? 1 : 0, '', {
        target: { op: '>=', limit: 1 },
        note: `${repeat.requests.length} requests, no revoke`,
      }),
    ];
    return {
      rows,
      details: {
        settings: s,
        seeding,
        runs: runs.map(({ report: _report, ...run }) => run),
        repeat: { ms: repeat.ms, requests: repeat.requests, watermark: repeated },
      },
    };
  } finally {
    await server.close();
    await telemetry.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
