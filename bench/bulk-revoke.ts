import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { BULK_REVOKE_CONCURRENCY, revokeBulk } from '#domain/project-api';
import { TABLE } from '#store/table-definition';
import type { BenchTable } from './support/dynamodb';
import { batchWriteKeys, createBusinessProject, nowSeconds, type SeedReport } from './support/fixtures';
import { type BenchResult, row } from './support/report';
import { median, round, timed } from './support/stats';

const NAME = 'bulk-revoke';
export const BULK_REVOKE_SETTINGS = {
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

/** The domain's revokeBulk with the real repository: watermark index → conditional writes, BULK_REVOKE_CONCURRENCY in flight. */
export async function benchBulkRevoke(table: BenchTable, log: (line: string) => void): Promise<BenchResult> {
  const s = BULK_REVOKE_SETTINGS;
  const { projectId } = await createBusinessProject(table.stores, 'bench bulk-revoke');
  const groups: Group[] = s.sizes.flatMap(({ keys, runs }) => Array.from({ length: runs }, () => ({ watermark: randomBytes(8).toString('hex'), keys })));
  const seeding: SeedReport[] = [await batchWriteKeys(table, projectId, s.otherKeys)];
  for (const group of groups) seeding.push(await batchWriteKeys(table, projectId, group.keys, { watermark: group.watermark }));
  const seededKeys = seeding.reduce((sum, seed) => sum + seed.keys, 0);
  log(`${NAME}: seeded ${seededKeys} keys in ${Math.round(seeding.reduce((sum, seed) => sum + seed.ms, 0))} ms`);

  const project = await table.stores.projects.getProject(projectId);
  if (!project) throw new Error('bench project vanished');
  const runs: { keys: number; ms: number; revokedCount: number }[] = [];
  for (const group of groups) {
    const { ms, result } = await timed(() => revokeBulk(table.stores.projects, project, group.watermark, nowSeconds()));
    runs.push({ keys: group.keys, ms, revokedCount: result.revoked_count });
    log(`${NAME}: ${group.keys} keys revoked in ${Math.round(ms)} ms (revoked_count ${result.revoked_count})`);
  }

  const check = await verify(table, projectId, new Set(groups.map((g) => g.watermark)));
  const wrongCounts = runs.filter((run) => run.revokedCount !== run.keys).length;
  const rows = s.sizes.flatMap(({ keys }) => {
    const ms = median(runs.filter((run) => run.keys === keys).map((run) => run.ms));
    const label = keys.toLocaleString('en-US');
    return [
      row(NAME, `${label} keys p50`, round(ms / 1000, 2), 's', keys === 10_000 ? { target: { op: '<', limit: s.targetSecondsFor10k } } : {}),
      row(NAME, `${label} keys rate`, round((keys / ms) * 1000, 0), 'keys/s'),
    ];
  });
  rows.push(
    row(NAME, 'runs with a wrong revoked_count', wrongCounts, '', { target: { op: '<=', limit: 0 } }),
    row(NAME, 'target keys left active', check.targetStillActive, '', { target: { op: '<=', limit: 0 } }),
    row(NAME, 'other keys changed', check.othersChanged, '', { target: { op: '<=', limit: 0 }, note: `${check.others.toLocaleString('en-US')} keys on other watermarks checked` }),
  );
  return { rows, details: { settings: s, concurrency: BULK_REVOKE_CONCURRENCY, seeding, runs, check } };
}

/** Read every key of the project: the target watermarks' keys must all be revoked, every other key untouched. */
async function verify(table: BenchTable, projectId: string, targets: Set<string>) {
  const index = TABLE.indexes.byIssueOrder;
  let others = 0;
  let othersChanged = 0;
  let targetStillActive = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.db.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': index.partitionKey },
        ExpressionAttributeValues: { ':p': projectId },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const active = item.revoked === 0 && typeof item.watermarkKey === 'string' && item.revokedAt === undefined;
      if (targets.has(String(item.watermark))) {
        if (item.revoked !== 1 || item.watermarkKey !== undefined) targetStillActive++;
      } else {
        others++;
        if (!active) othersChanged++;
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { others, othersChanged, targetStillActive };
}
