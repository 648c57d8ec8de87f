import { randomBytes } from 'node:crypto';
import { localDynamoConfig } from '#adapters/client';
import { createStores } from '#adapters/stores';
import { BULK_REVOKE_CONCURRENCY, revokeBulk } from '#domain/project-api';
import { type CapacityTally, capacityRecordingClient, indexUnits } from '#test-support/consumed-capacity';
import type { BenchTable } from './support/dynamodb';
import { batchWriteKeys, createBusinessProject, nowSeconds, type SeedReport } from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { median, round, timed } from './support/stats';

const NAME = 'bulk-revoke';
const BULK_REVOKE_SETTINGS = {
  /** Keys of the project on other watermarks, which every run must leave alone. */
  otherKeys: 10_000,
  /** Each run revokes a watermark of its own, since a revoke cannot be repeated on the same keys. */
  sizes: [
    { keys: 1_000, runs: 5 },
    { keys: 10_000, runs: 3 },
  ],
  targetSecondsFor10k: 10,
} as const;

interface Group {
  watermark: string;
  keys: number;
}

/** Keys whose revoke the first version measured at 3 WCU: its table write, a byWatermark delete and a byIssueOrder update (issue 15). */
const FIRST_VERSION_WCU_PER_KEY = 3;

/**
 * The domain's revokeBulk with the real repository (watermark index → consistent reads → conditional writes,
 * BULK_REVOKE_CONCURRENCY in flight), on a client that adds up the capacity DynamoDB reports per table and index.
 */
export async function benchBulkRevoke(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = BULK_REVOKE_SETTINGS;
  const { projectId } = await createBusinessProject(table.stores, 'bench bulk-revoke');
  const groups: Group[] = s.sizes.flatMap(({ keys, runs }) => Array.from({ length: runs }, () => ({ watermark: randomBytes(8).toString('hex'), keys })));
  const seeding: SeedReport[] = [await batchWriteKeys(table, projectId, s.otherKeys)];
  for (const group of groups) seeding.push(await batchWriteKeys(table, projectId, group.keys, { watermark: group.watermark }));
  const seededKeys = seeding.reduce((sum, seed) => sum + seed.keys, 0);
  log(`${NAME}: seeded ${seededKeys} keys in ${Math.round(seeding.reduce((sum, seed) => sum + seed.ms, 0))} ms`);

  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const projects = createStores(recorder.db, table.tableName).projects;
  const project = await projects.getProject(projectId);
  if (!project) throw new Error('bench project vanished');
  const runs: { keys: number; ms: number; revokedCount: number; complete: boolean; capacity: CapacityTally }[] = [];
  for (const group of groups) {
    recorder.take();
    const { ms, result } = await timed(() => revokeBulk(projects, project, group.watermark, nowSeconds(), () => Number.POSITIVE_INFINITY));
    const capacity = recorder.take();
    runs.push({ keys: group.keys, ms, revokedCount: result.revoked_count, complete: result.complete, capacity });
    log(
      `${NAME}: ${group.keys} keys revoked in ${Math.round(ms)} ms (revoked_count ${result.revoked_count}, ${capacity.write.table} table WCU, ${indexUnits(capacity.write)} index WCU)`,
    );
  }
  recorder.db.destroy();

  const check = await verify(table, projectId, new Set(groups.map((g) => g.watermark)));
  const wrongCounts = runs.filter((run) => run.revokedCount !== run.keys || !run.complete).length;
  const revoked = runs.reduce((sum, run) => sum + run.revokedCount, 0);
  const perKey = (units: (capacity: CapacityTally) => number) => round(runs.reduce((sum, run) => sum + units(run.capacity), 0) / revoked, 3);
  const indexNames = [...new Set(runs.flatMap((run) => [...Object.keys(run.capacity.write.indexes), ...Object.keys(run.capacity.read.indexes)]))];
  const rows = s.sizes.flatMap(({ keys }) => {
    const ms = median(runs.filter((run) => run.keys === keys).map((run) => run.ms));
    const label = keys.toLocaleString('en-US');
    return [
      row(NAME, `${label} keys p50`, round(ms / 1000, 2), 's', keys === 10_000 ? { target: { op: '<', limit: s.targetSecondsFor10k } } : {}),
      row(NAME, `${label} keys rate`, round((keys / ms) * 1000, 0), 'keys/s'),
    ];
  });
  rows.push(
    row(
      NAME,
      'WCU per revoked key, table',
      perKey((c) => c.write.table),
      'WCU',
      {
        target: { op: '<=', limit: 1 },
        note: `first version: ${FIRST_VERSION_WCU_PER_KEY} WCU per key in all, 1 of them on the table`,
      },
    ),
    row(
      NAME,
      'WCU per revoked key, all indexes',
      perKey((c) => indexUnits(c.write)),
      'WCU',
      {
        target: { op: '<=', limit: 0 },
        note: `first version: ${FIRST_VERSION_WCU_PER_KEY - 1} (byWatermark delete + byIssueOrder update, both in one partition per project or watermark)`,
      },
    ),
    ...indexNames.map((name) =>
      row(
        NAME,
        `WCU per revoked key, index ${name}`,
        perKey((c) => c.write.indexes[name] ?? 0),
        'WCU',
      ),
    ),
    row(
      NAME,
      'RCU per revoked key, table',
      perKey((c) => c.read.table),
      'RCU',
      { note: 'consistent BatchGetItem of each listed key, to skip keys already revoked' },
    ),
    ...indexNames.map((name) =>
      row(
        NAME,
        `RCU per revoked key, index ${name}`,
        perKey((c) => c.read.indexes[name] ?? 0),
        'RCU',
      ),
    ),
    row(NAME, 'runs with a wrong revoked_count or incomplete', wrongCounts, '', { target: { op: '<=', limit: 0 } }),
    row(NAME, 'target keys left active', check.targetStillActive, '', { target: { op: '<=', limit: 0 } }),
    row(NAME, 'other keys changed', check.othersChanged, '', {
      target: { op: '<=', limit: 0 },
      note: `${check.others.toLocaleString('en-US')} keys on other watermarks checked`,
    }),
  );
  return { rows, details: { settings: s, concurrency: BULK_REVOKE_CONCURRENCY, seeding, runs, check } };
}

/** Read every key of the project through the API's own listing: the targets must all be revoked, every other key untouched. */
async function verify(table: BenchTable, projectId: string, targets: Set<string>) {
  let others = 0;
  let othersChanged = 0;
  let targetStillActive = 0;
  for (let offset = 0; ; offset += VERIFY_PAGE) {
    const page = await table.stores.projects.listKeysAfter(projectId, offset, VERIFY_PAGE);
    for (const key of page) {
      if (targets.has(key.watermark)) {
        if (key.revoked !== 1) targetStillActive++;
      } else {
        others++;
        if (key.revoked !== 0) othersChanged++;
      }
    }
    if (page.length < VERIFY_PAGE) break;
  }
  return { others, othersChanged, targetStillActive };
}

const VERIFY_PAGE = 1_000;
