import { randomBytes } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { planStamp, stampBytes, stampWithPlan } from '#domain/hidden-mark';
import { newId } from '#domain/ids';
import { MAX_DUMP_BYTES } from '#domain/leak-trace';
import { unixSeconds } from '#domain/model';
import { placeholderParts, sha256Hex, stampParts } from '#domain/scripts';
import { callerOfToken } from '#domain/tokens';
import { createApiHandler } from '#http/api-handler';
import { traceLeakRoute } from '#http/owner-routes/trace-leak';
import { memoryKeySecret } from '#local/key-secret';
import type { TraceLeakResponse } from '#schemas/responses';
import { obfuscatedScript, readableScript } from '#test-support/luau-fixtures';
import type { BenchTable } from './support/dynamodb';
import { apiGatewayEvent, createBusinessProject, issueKeys, lambdaContext, nowSeconds } from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { median, round } from './support/stats';

const NAME = 'hidden-mark';
const MIB = 1024 * 1024;
const HIDDEN_MARK_SETTINGS = {
  /** The issue's script: 2 MiB, obfuscated-like (one line, encrypted string table). */
  stampBytes: 2 * MIB,
  /** Stamps of each kind (the first 10 not counted), interleaved (visible, both, …) so drift hits both alike. */
  stampRounds: 210,
  versions: 50,
  traceRuns: 3,
} as const;

/**
 * The hidden mark's costs: stamping a 2 MiB obfuscated-like script with both marks against the visible marks alone,
 * side by side in one run, each as the loader does it for a 200: the visible stamp (stampParts, a rope until
 * something reads it) then its SHA-256; both marks (stampBytes) then the SHA-256 of those bytes and the body's text.
 * Then `POST …/leak/trace` of a 5 MiB dump through the route's
 * handler on DynamoDB Local, for a project with 50 versions: time, and the heap and RSS it took.
 */
export async function benchHiddenMark(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = HIDDEN_MARK_SETTINGS;
  const script = obfuscatedScript(7, s.stampBytes);
  const planStarted = performance.now();
  const plan = planStamp(script);
  const planMs = performance.now() - planStarted;
  const parts = placeholderParts(script);
  log(`${NAME}: planned ${script.length} bytes in ${Math.round(planMs)} ms: ${plan.summary.positions} places, weak ${plan.summary.weak}`);

  // CPU time of this process (user + system) per stamp, beside wall time: on a machine other work keeps busy, wall
  // time mostly measures the wait for a core, and the two kinds would be compared through that noise.
  const visibleMs: number[] = [];
  const bothMs: number[] = [];
  const visibleWallMs: number[] = [];
  const bothWallMs: number[] = [];
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const versionId = newId('ver');
  for (let round = 0; round < s.stampRounds; round++) {
    const watermark = randomBytes(8).toString('hex');
    const wall0 = performance.now();
    const cpu0 = cpuMs();
    sha256Hex(stampParts(parts, watermark));
    const wall1 = performance.now();
    const cpu1 = cpuMs();
    // As deliverScript does: the body's hash from its bytes, the body as text for the response.
    const bytes = stampBytes(plan, versionId, watermark);
    sha256Hex(bytes);
    bytes.toString('utf8');
    const wall2 = performance.now();
    const cpu2 = cpuMs();
    // The first rounds warm the JIT; the rest are counted.
    if (round >= 10) {
      visibleMs.push(cpu1 - cpu0);
      bothMs.push(cpu2 - cpu1);
      visibleWallMs.push(wall1 - wall0);
      bothWallMs.push(wall2 - wall1);
    }
  }
  const ratio = median(bothMs) / median(visibleMs);

  // A project with 50 versions, the leaked one among them, and the leaker's key.
  const project = await createBusinessProject(table.stores, 'bench hidden-mark');
  const versionIds: string[] = [];
  for (let n = 0; n < s.versions; n++) {
    const id = newId('ver');
    await table.stores.dashboard.uploadVersion({
      id,
      projectId: project.projectId,
      sizeBytes: 1000 + n,
      sha256: sha256Hex(id),
      notes: `v${n}`,
      now: nowSeconds(),
    });
    versionIds.push(id);
  }
  const leaker = randomBytes(8).toString('hex');
  await issueKeys(table.stores, project.projectId, 1, leaker);
  const leakedVersion = versionIds[37] ?? '';
  const copy = stampWithPlan(plan, leakedVersion, leaker);
  // The leaked copy without its --WM_ line, between a readable script and other text, to 5 MiB.
  const prose = 'Here\'s the leak, don\'t share it! [[ raw ]] "quoted"\n';
  const leaked = `${readableScript(3, 3000)}\n${prose}${copy.slice(copy.indexOf('\n') + 1)}\n`;
  const dump = leaked + prose.repeat(Math.floor((MAX_DUMP_BYTES - Buffer.byteLength(leaked)) / Buffer.byteLength(prose)));

  const handler = createApiHandler(traceLeakRoute, {
    stores: table.stores,
    keySecret: memoryKeySecret(),
    now: () => unixSeconds(),
    logger: new Logger({ serviceName: 'bench', logLevel: 'WARN' }),
  });
  const traceMs: number[] = [];
  let heapMiB = 0;
  let found: TraceLeakResponse['found'] = [];
  const rssBefore = process.resourceUsage().maxRSS / 1024;
  for (let run = 0; run < s.traceRuns; run++) {
    const event = apiGatewayEvent({
      method: 'POST',
      resource: traceLeakRoute.path,
      projectId: project.projectId,
      caller: callerOfToken(project.ownerId, randomBytes(32).toString('hex'), 'read'),
    });
    const textEvent = { ...event, headers: { ...event.headers, 'Content-Type': 'text/plain; charset=utf-8' }, body: dump };
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    const response = await handler(textEvent, lambdaContext('trace-leak'));
    traceMs.push(performance.now() - started);
    heapMiB = Math.max(heapMiB, (process.memoryUsage().heapUsed - heapBefore) / MIB);
    if (response.statusCode !== 200) throw new Error(`trace answered ${response.statusCode}: ${response.body}`);
    found = (JSON.parse(response.body) as TraceLeakResponse).found;
  }
  const named = found.filter((entry) => entry.mark === 'hidden').map((entry) => `${entry.watermark}@${entry.version_id}`);
  if (named.join() !== `${leaker}@${leakedVersion}`) throw new Error(`the trace named ${named.join() || 'nothing'}, not ${leaker}@${leakedVersion}`);
  const rssAfter = process.resourceUsage().maxRSS / 1024;
  log(`${NAME}: traced ${Buffer.byteLength(dump)} bytes in ${traceMs.map(Math.round).join(', ')} ms`);

  return {
    rows: [
      row(NAME, 'Stamp + SHA-256, 2 MiB obfuscated-like, visible marks alone (median CPU)', round(median(visibleMs), 2), 'ms', {
        note: `wall ${round(median(visibleWallMs), 2)} ms`,
      }),
      row(NAME, 'Stamp + SHA-256, 2 MiB obfuscated-like, both marks (median CPU)', round(median(bothMs), 2), 'ms', {
        note: `wall ${round(median(bothWallMs), 2)} ms`,
      }),
      row(NAME, 'Both marks ÷ visible alone, same run (CPU)', round(ratio, 2), '×', {
        target: { op: '<=', limit: 1.25 },
        note: `wall time: ${round(median(bothWallMs) / median(visibleWallMs), 2)}×`,
      }),
      row(NAME, 'Plan a 2 MiB version (once per container and version)', Math.round(planMs), 'ms', {
        note: `${plan.summary.positions} places, ${plan.slots.length} cuts, weak ${plan.summary.weak}`,
      }),
      row(NAME, 'Trace a 5 MiB dump, 50 versions (median of 3)', Math.round(median(traceMs)), 'ms', { note: 'through the route handler on DynamoDB Local' }),
      row(NAME, 'Trace a 5 MiB dump: heap growth (largest of 3)', round(heapMiB, 1), 'MiB'),
      row(NAME, 'Trace a 5 MiB dump: peak RSS of the bench process', Math.round(rssAfter), 'MiB', { note: `${Math.round(rssBefore)} MiB before the traces` }),
    ],
    details: { settings: s, visibleMs, bothMs, visibleWallMs, bothWallMs, traceMs, dumpBytes: Buffer.byteLength(dump), found },
  };
}
