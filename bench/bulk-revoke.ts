import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { localDynamoConfig } from '#adapters/client';
import { keyOf } from '#adapters/layout';
import { createStores } from '#adapters/stores';
import { BULK_REVOKE_CONCURRENCY, revokeBulk } from '#domain/project-api';
import { type CapacityTally, capacityRecordingClient, indexUnits } from '#test-support/consumed-capacity';
import type { BenchTable } from './support/dynamodb';
import { batchWriteKeys, createBusinessProject, nowSeconds, type SeedReport } from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { mapBounded, median, round, timed } from './support/stats';

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
  /** revokeBulk's 10,000 keys ÷ DynamoDB Local's own 10,000 conditional writes at the same concurrency, same run. */
  targetEngineRatio: 1.5,
} as const;

interface Group {
  watermark: string;
  keys: number;
}

/** Keys whose revoke the first version measured at 3 WCU: its table write, a byWatermark delete and a byIssueOrder update (issue 15). */
const FIRST_VERSION_WCU_PER_KEY = 3;

/**
 * The domain's revokeBulk with the real repository (watermark index → one conditional write per key,
 * BULK_REVOKE_CONCURRENCY in flight), on a client that adds up the capacity DynamoDB reports per table and index;
 * beside each 10,000-key run, the engine alone: the same conditional writes on 10,000 other keys whose ids are
 * known already, at the same concurrency on the same client, the floor any bulk revoke on DynamoDB Local has.
 */
export async function benchBulkRevoke(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = BULK_REVOKE_SETTINGS;
  const { projectId } = await createBusinessProject(table.stores, 'bench bulk-revoke');
  const groups: Group[] = s.sizes.flatMap(({ keys, runs }) => Array.from({ length: runs }, () => ({ watermark: randomBytes(8).toString('hex'), keys })));
  const engineGroups: Group[] = groups.filter((g) => g.keys === 10_000).map((g) => ({ watermark: randomBytes(8).toString('hex'), keys: g.keys }));
  const seeding: SeedReport[] = [await batchWriteKeys(table, projectId, s.otherKeys)];
  for (const group of [...groups, ...engineGroups]) seeding.push(await batchWriteKeys(table, projectId, group.keys, { watermark: group.watermark }));
  const seededKeys = seeding.reduce((sum, seed) => sum + seed.keys, 0);
  log(`${NAME}: seeded ${seededKeys} keys in ${Math.round(seeding.reduce((sum, seed) => sum + seed.ms, 0))} ms`);

  const recorder = capacityRecordingClient(localDynamoConfig(table.endpoint));
  const projects = createStores(recorder.db, table.tableName).projects;
  const project = await projects.getProject(projectId);
  if (!project) throw new Error('bench project vanished');
  const runs: { keys: number; ms: number; revokedCount: number; complete: boolean; capacity: CapacityTally }[] = [];
  const engineRuns: { ms: number; written: number }[] = [];
  const engine = async (group: Group) => {
    const ids: string[] = [];
    for await (const page of projects.keyIdsWithWatermark(projectId, group.watermark)) ids.push(...page);
    const { ms, result } = await timed(() =>
      mapBounded(ids, BULK_REVOKE_CONCURRENCY, (id) =>
        recorder.db.send(
          new UpdateCommand({
            TableName: table.tableName,
            Key: keyOf.key(id),
            UpdateExpression: 'SET revoked = :one, revokedAt = :now',
            ConditionExpression: 'projectId = :p AND revoked = :zero',
            ExpressionAttributeValues: { ':p': projectId, ':one': 1, ':zero': 0, ':now': nowSeconds() },
          }),
        ),
      ),
    );
    engineRuns.push({ ms, written: result.length });
    log(`${NAME}: engine alone, ${result.length} conditional writes of known keys in ${Math.round(ms)} ms`);
  };
  for (const [index, group] of groups.entries()) {
    // Engine first, then revokeBulk, alternating per pair, so neither always runs on a warmer engine.
    const engineGroup = group.keys === 10_000 ? engineGroups[runs.filter((run) => run.keys === 10_000).length] : undefined;
    if (engineGroup && index % 2 === 0) await engine(engineGroup);
    recorder.take();
    const { ms, result } = await timed(() => revokeBulk(projects, project, group.watermark, nowSeconds(), () => Number.POSITIVE_INFINITY));
    const capacity = recorder.take();
    runs.push({ keys: group.keys, ms, revokedCount: result.revoked_count, complete: result.complete, capacity });
    log(
      `${NAME}: ${group.keys} keys revoked in ${Math.round(ms)} ms (revoked_count ${result.revoked_count}, ${capacity.write.table} table WCU, ${indexUnits(capacity.write)} index WCU)`,
    );
    if (engineGroup && index % 2 === 1) await engine(engineGroup);
  }
  recorder.db.destroy();

  const check = await verify(table, projectId, new Set([...groups, ...engineGroups].map((g) => g.watermark)));
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
  const engineMs = median(engineRuns.map((run) => run.ms));
  const bulkMs = median(runs.filter((run) => run.keys === 10_000).map((run) => run.ms));
  rows.push(
    row(NAME, '10,000 keys, engine alone p50', round(engineMs / 1000, 2), 's', {
      note: `DynamoDB Local's own ${engineRuns[0]?.written ?? 0} conditional UpdateItems of known keys, ${BULK_REVOKE_CONCURRENCY} in flight, same client, same run`,
    }),
    row(NAME, '10,000 keys ÷ engine alone', round(bulkMs / engineMs, 2), '×', { target: { op: '<=', limit: s.targetEngineRatio } }),
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
      { note: 'none: each listed key gets its conditional write, no read first' },
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
  return { rows, details: { settings: s, concurrency: BULK_REVOKE_CONCURRENCY, seeding, runs, engineRuns, check } };
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
