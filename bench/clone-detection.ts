import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { DynamoTelemetryStore } from '#adapters/telemetry-store';
import { ingestTelemetry } from '#domain/analytics/ingest';
import { newId } from '#domain/ids';
import { CLONE_DETECTION_ITEMS, meterCapacity } from '#test-support/capacity-meter';
import { BENCH_REGION, type BenchTable } from './support/dynamodb';
import { createBusinessProject, nowSeconds } from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { round } from './support/stats';

const NAME = 'clone-detection';
const CLONE_DETECTION_SETTINGS = {
  /** Distinct hashes of one script, each arriving in an ingest batch of its own (the worst case: nothing to fold). */
  hashes: 600,
  /** Issue 15's target: linear cost, at most this many write units per new hash. */
  targetWriteUnitsPerHash: 5,
} as const;

/**
 * What clone detection costs in DynamoDB capacity, from the `ConsumedCapacity` DynamoDB Local returns for every
 * request of the telemetry store: one script reported with 600 distinct hashes, one ingest per hash, so every hash
 * after the first fires clone_detected. Linear means every hash costs the same, the 600th as much as the 2nd.
 * Counted are the writes of the items clone detection keeps (CLONE_DETECTION_ITEMS); the ingest's total is noted.
 */
export async function benchCloneDetection(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = CLONE_DETECTION_SETTINGS;
  const { projectId } = await createBusinessProject(table.stores, 'bench clone detection');
  // Ingest keeps only records of a version the project has; its uploaded sha256 is the original every hash is judged against.
  const versionId = newId('ver');
  await table.stores.dashboard.uploadVersion({ id: versionId, projectId, sizeBytes: 1024, sha256: 'a'.repeat(64), notes: 'bench', now: nowSeconds() });
  const db = createDocumentClient({ ...localDynamoConfig(table.endpoint), region: BENCH_REGION });
  const meter = meterCapacity(db);
  const store = new DynamoTelemetryStore(db, table.tableName);
  const start = nowSeconds() - s.hashes;
  const perHash: number[] = [];
  let events = 0;
  try {
    for (let i = 0; i < s.hashes; i++) {
      const before = meter.writesTo(CLONE_DETECTION_ITEMS);
      const record = { kind: 'execution', projectId, scriptId: 'scr_bench', versionId, executor: 'Bench', scriptHash: hashOf(i), at: start + i };
      const result = await ingestTelemetry(store, [record], start + i);
      events += result.events.filter((event) => event.name === 'clone_detected').length;
      perHash.push(meter.writesTo(CLONE_DETECTION_ITEMS) - before);
      if ((i + 1) % 200 === 0) log(`${NAME}: ${i + 1} hashes, ${round(meter.writesTo(CLONE_DETECTION_ITEMS), 1)} WCU so far`);
    }
  } finally {
    db.destroy();
  }
  const total = meter.writesTo(CLONE_DETECTION_ITEMS);
  const last100 = perHash.slice(-100).reduce((sum, units) => sum + units, 0) / 100;
  const first100 = perHash.slice(1, 101).reduce((sum, units) => sum + units, 0) / 100;
  return {
    rows: [
      row(NAME, `write units for ${s.hashes} hashes of one script`, round(total, 1), 'WCU', {
        note: `hash records, script tally and clone_detected events; ${events} events fired; the whole ingest (counters, executors too) ${round(meter.writeUnits, 1)} WCU and ${round(meter.readUnits, 1)} RCU`,
      }),
      row(NAME, 'write units per hash', round(total / s.hashes, 2), 'WCU', { target: { op: '<=', limit: s.targetWriteUnitsPerHash } }),
      row(NAME, 'hashes 501-600 vs 2-101, per hash', round(last100 / first100, 2), '×', {
        target: { op: '<=', limit: 1.1 },
        note: 'linear: a late hash costs what an early one does',
      }),
    ],
    details: {
      hashes: s.hashes,
      cloneDetectionWriteUnits: total,
      ingestWriteUnits: meter.writeUnits,
      ingestReadUnits: meter.readUnits,
      events,
      writesByItem: meter.writesByItem(),
      byCommand: meter.byCommand(),
      perHashFirst10: perHash.slice(0, 10),
      perHashLast10: perHash.slice(-10),
    },
  };
}

const hashOf = (i: number) => (0x10000000 + i).toString(16);
