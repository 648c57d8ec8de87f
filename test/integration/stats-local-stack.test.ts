import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '#dashboard/commands';
import { type DashboardContext, openContext } from '#dashboard/context';
import { unixSeconds } from '#domain/model';
import { hourStart } from '#domain/time';
import { type LocalStack, startLocalStack } from '#local/stack';
import type { StatsResponse } from '#schemas/responses';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';
import { runCli } from '#test-support/sdapi-run-cli';
import { EXIT } from '../../sdapi/errors';

/**
 * Stats end to end in the running local stack (`npm start` on the run's DynamoDB Local): checks over HTTP and a
 * backdated `telemetry execution --at` through the dashboard CLI, then `sdapi stats` over HTTP. The stack's clock is
 * the real one, so the test finds the checks' hour from the time it made them.
 */

const FP = (n: number) => n.toString(16).padStart(64, '0');
const HOUR = 3600;

let stack: LocalStack;
let dashboard: { context: DashboardContext; close(): void };

const run = async (name: string, ...argv: string[]) => {
  const command = COMMANDS[name];
  if (!command) throw new Error(`no dashboard command ${name}`);
  return command.prepare(argv)(dashboard.context);
};

beforeAll(async () => {
  // A free port can be taken by another process before the stack listens on it: then another one is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      stack = await startLocalStack({
        port: await freePort(),
        dynamodbEndpoint: dynamodbEndpoint(),
        tableName: `local-stats-${Date.now()}`,
        stateFile: `/tmp/local-stats-${process.pid}.json`,
      });
      break;
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error && error.message.includes('is in use'))) throw error;
    }
  }
  dashboard = openContext({ kind: 'local', endpoint: stack.dynamodbEndpoint, tableName: stack.tableName });
}, 120_000);

afterAll(async () => {
  dashboard?.close();
  await stack?.stop();
});

async function validate(body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${stack.baseUrl}/v1/loader/validate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ fingerprint: FP(1), ...body }),
  });
  return String(((await response.json()) as { code?: unknown }).code);
}

const sdapi = (projectId: string, ...argv: string[]) =>
  runCli(['stats', ...argv], { api: { fetch: globalThis.fetch }, env: { SDAPI_BASE_URL: stack.baseUrl, SDAPI_TOKEN: stack.token, SDAPI_PROJECT: projectId } });

async function statsJson(projectId: string, ...argv: string[]): Promise<StatsResponse> {
  const result = await sdapi(projectId, ...argv, '--json');
  expect(result, result.stderr).toMatchObject({ code: EXIT.ok });
  return JSON.parse(result.stdout) as StatsResponse;
}

const bucketAt = (stats: StatsResponse, t: number) => stats.buckets.find((bucket) => bucket.t === t);

describe('stats in the local stack, over HTTP', () => {
  it('sdapi stats shows the checks just made in their hour by result and by executor, and a backdated execution in its own hour and day', async () => {
    const { projectId } = (await run('project create', '--owner', stack.ownerId, '--name', 'Stats', '--plan', 'business')) as { projectId: string };
    const issued = (await run('keys issue', '--project', projectId, '--count', '2')) as { keys: { id: string; key: string }[] };
    const [active, revoked] = issued.keys;
    if (!active || !revoked) throw new Error('two keys expected');
    const revoke = await fetch(`${stack.baseUrl}/v1/projects/${projectId}/keys/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${stack.token}` },
      body: JSON.stringify({ key_id: revoked.id }),
    });
    expect(revoke.status).toBe(200);
    const checkedAt = unixSeconds();
    expect(await validate({ project_id: projectId, key: active.key, executor: 'Wave' })).toBe('KEY_VALID');
    expect(await validate({ project_id: projectId, key: active.key, executor: 'Wave' })).toBe('KEY_VALID');
    expect(await validate({ project_id: projectId, key: active.key, executor: 'Delta' })).toBe('KEY_VALID');
    expect(await validate({ project_id: projectId, key: revoked.key, executor: 'Wave' })).toBe('KEY_REVOKED');
    const backdated = checkedAt - 3 * HOUR;
    await run('telemetry execution', '--project', projectId, '--executor', 'Solara', '--at', String(backdated), '--count', '2');
    // Within the contract's 60 seconds; the deadline only guards a hang.
    await expect.poll(() => stack.telemetryPending(), { timeout: 60_000, interval: 50 }).toBe(0);

    // The checks' hour, unless the clock crossed an hour while they were made (then the next one holds the rest).
    const hour = hourStart(checkedAt);
    const byResult = await statsJson(projectId);
    expect(byResult).toMatchObject({ granularity: 'hour', by: 'result' });
    expect(byResult.buckets).toHaveLength(25);
    const resultTotals = [hour, hour + HOUR].map((t) => bucketAt(byResult, t)?.counts ?? {});
    expect((resultTotals[0]?.ok ?? 0) + (resultTotals[1]?.ok ?? 0)).toBe(3);
    expect((resultTotals[0]?.revoked ?? 0) + (resultTotals[1]?.revoked ?? 0)).toBe(1);
    const byExecutor = await statsJson(projectId, '--by', 'executor');
    const inHour = [hour, hour + HOUR].map((t) => bucketAt(byExecutor, t)?.counts ?? {});
    expect({ Wave: (inHour[0]?.Wave ?? 0) + (inHour[1]?.Wave ?? 0), Delta: (inHour[0]?.Delta ?? 0) + (inHour[1]?.Delta ?? 0) }).toEqual({ Wave: 2, Delta: 1 });
    expect(bucketAt(byExecutor, hourStart(backdated))).toEqual({ t: hourStart(backdated), total: 2, counts: { Solara: 2 } });
    const byDay = await statsJson(projectId, '--granularity', 'day', '--by', 'executor', '--from', String(backdated), '--to', String(checkedAt + 60));
    expect(byDay.buckets.reduce((sum, bucket) => sum + (bucket.counts.Solara ?? 0), 0)).toBe(2);

    // The table for people: a row an hour, its total and a column a name.
    const table = await sdapi(projectId, '--by', 'executor', '--from', String(hour), '--to', String(hour + HOUR));
    expect(table.code).toBe(EXIT.ok);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^HOUR \(UTC\)\s+TOTAL\s+Wave\s+Delta$/);
    expect(lines.at(-1)).toMatch(/^\d+ executions? by executor, /);
  });

  it('sdapi stats refuses a window past its limit before asking, naming the parameter', async () => {
    const result = await sdapi(stack.projectId, '--granularity', 'hour', '--to', '1700000000000');
    expect(result).toMatchObject({ code: EXIT.usage });
    expect(result.stderr).toMatch(/^sdapi: --to must be Unix seconds/);
    const tooLong = await sdapi(stack.projectId, '--from', String(unixSeconds() - 8 * 86_400));
    expect(tooLong.code).toBe(EXIT.apiError);
    expect(tooLong.stderr).toMatch(/^sdapi: from: a window of granularity hour spans at most 7 days \(168 buckets\)/);
  });
});
