import { randomBytes } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stores } from '#adapters/stores';
import type { Project } from '#domain/model';
import { unixSeconds } from '#domain/model';
import { revokeBulk, rollback } from '#domain/project-api';
import { consumeRateLimit, RATE_LIMIT, RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { createApiHandler } from '#http/api-handler';
import { listVersionsRoute } from '#http/owner-routes/list-versions';
import { memoryKeySecret } from '#local/key-secret';
import { apiEvent, createTestTable, FIXED_NOW, lambdaContext, NO_DEADLINE, seedOwner, seedProject, type TestTable } from '#test-support/fixtures';
import { HARDENING_RUNS, reportFigure, timeoutFor } from '#test-support/hardening';

/**
 * The API's writes raced against each other on DynamoDB Local, each race repeated HARDENING_RUNS times on a
 * fresh project. What must hold in every repetition: no key counted twice or counted without being revoked,
 * no rollback landing anywhere but on a requested version of the project, no request past 100 in a window.
 */

let table: TestTable;
let stores: Stores;
let ownerId: string;
/** Writes a race lost or counted twice, over every repetition: must stay 0. */
const anomalies = { lostOrDoubleCounted: 0 };

beforeAll(async () => {
  table = await createTestTable('hardening-races');
  stores = table.stores;
  ({ ownerId } = await seedOwner(stores));
});

afterAll(async () => {
  reportFigure(`races: lost or double-counted writes over all repetitions = ${anomalies.lostOrDoubleCounted}`);
  await table?.drop();
});

const newWatermark = () => randomBytes(8).toString('hex');
const randomInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function projectWithKeys(count: number, watermark: string): Promise<{ project: Project; keyIds: string[] }> {
  const seeded = await seedProject(stores, { ownerId, keys: count, watermark });
  const project = await stores.projects.getProject(seeded.projectId);
  if (!project) throw new Error('project vanished');
  return { project, keyIds: seeded.keys.map((key) => key.id) };
}

async function revokedFlags(project: Project): Promise<Map<string, number>> {
  const keys = await stores.projects.listKeysAfter(project.id, 0, 1_000);
  return new Map(keys.map((key) => [key.id, key.revoked]));
}

function noteAnomalies(count: number): number {
  anomalies.lostOrDoubleCounted += count;
  return count;
}

describe(`races on DynamoDB Local, ${HARDENING_RUNS} repetitions each`, () => {
  it(
    'two concurrent bulk revokes of one watermark count every key once between them',
    async () => {
      let keysRaced = 0;
      for (let run = 0; run < HARDENING_RUNS; run++) {
        const watermark = newWatermark();
        const { project, keyIds } = await projectWithKeys(randomInt(1, 50), watermark);
        const [first, second] = await Promise.all([
          revokeBulk(stores.projects, project, watermark, FIXED_NOW, NO_DEADLINE),
          revokeBulk(stores.projects, project, watermark, FIXED_NOW, NO_DEADLINE),
        ]);
        const flags = await revokedFlags(project);
        const stillActive = [...flags.values()].filter((revoked) => revoked === 0).length;
        expect(noteAnomalies(Math.abs(first.revoked_count + second.revoked_count - keyIds.length) + stillActive)).toBe(0);
        keysRaced += keyIds.length;
      }
      reportFigure(`race bulk+bulk: ${HARDENING_RUNS} runs, ${keysRaced} keys, sum of revoked_count = keys every run`);
    },
    timeoutFor(250),
  );

  it(
    'single revokes racing a bulk revoke count each key once in total',
    async () => {
      let keysRaced = 0;
      for (let run = 0; run < HARDENING_RUNS; run++) {
        const watermark = newWatermark();
        const { project, keyIds } = await projectWithKeys(randomInt(2, 50), watermark);
        // Singles aimed at a random half of the keys, fired in the same tick as the bulk revoke.
        const targets = keyIds.filter(() => Math.random() < 0.5);
        const [bulk, ...singles] = await Promise.all([
          revokeBulk(stores.projects, project, watermark, FIXED_NOW, NO_DEADLINE),
          ...targets.map((keyId) => stores.projects.revokeKey(project.id, keyId, FIXED_NOW)),
        ]);
        const singlesThatRevoked = singles.filter((outcome) => outcome === 'revoked').length;
        expect(singles.every((outcome) => outcome === 'revoked' || outcome === 'already_revoked')).toBe(true);
        const stillActive = [...(await revokedFlags(project)).values()].filter((revoked) => revoked === 0).length;
        expect(noteAnomalies(Math.abs(bulk.revoked_count + singlesThatRevoked - keyIds.length) + stillActive)).toBe(0);
        keysRaced += keyIds.length;
      }
      reportFigure(`race single+bulk: ${HARDENING_RUNS} runs, ${keysRaced} keys, each counted once`);
    },
    timeoutFor(250),
  );

  it(
    'concurrent rollbacks all succeed and leave current_version_id on one of the requested versions of the project',
    async () => {
      let rollbacks = 0;
      for (let run = 0; run < HARDENING_RUNS; run++) {
        const seeded = await seedProject(stores, { ownerId, versions: ['v1', 'v2', 'v3', 'v4', 'v5'] });
        const project = await stores.projects.getProject(seeded.projectId);
        if (!project) throw new Error('project vanished');
        const requested = Array.from({ length: randomInt(2, 8) }, () => seeded.versions[randomInt(0, seeded.versions.length - 1)]?.id ?? '');
        const results = await Promise.all(
          requested.map((versionId, i) =>
            rollback(stores.projects, project, versionId, FIXED_NOW, { log: stores.audit, actor: { tokenId: 'tok_race', requestId: `race-${run}-${i}` } }),
          ),
        );
        expect(results.map((result) => result.current_version_id)).toEqual(requested);

        const after = await stores.projects.getProject(project.id);
        const versions = await stores.projects.listVersions(project.id);
        expect(requested).toContain(after?.currentVersionId);
        expect(versions.map((version) => version.id)).toContain(after?.currentVersionId);
        rollbacks += requested.length;
      }
      reportFigure(`race rollbacks: ${HARDENING_RUNS} runs, ${rollbacks} concurrent rollbacks, every end state a requested version`);
    },
    timeoutFor(250),
  );

  it(
    'a key issued while a bulk revoke runs is either revoked and counted or left active, never counted without being revoked',
    async () => {
      let issuedDuring = 0;
      let caught = 0;
      let runsWithBoth = 0;
      for (let run = 0; run < HARDENING_RUNS; run++) {
        const watermark = newWatermark();
        const { project, keyIds: before } = await projectWithKeys(randomInt(10, 50), watermark);
        const issuing = (async () => {
          const ids: string[] = [];
          for (let batch = 0; batch < 4; batch++) {
            ids.push(
              ...(
                await stores.dashboard.issueKeys({ projectId: project.id, count: randomInt(1, 5), watermark, tier: 'standard', maxUses: null, now: FIXED_NOW })
              ).map((key) => key.id),
            );
          }
          return ids;
        })();
        // The bulk revoke starts up to 40 ms into the issuing, so some runs catch a few of the new keys and some none.
        const bulkRevoke = sleep(randomInt(0, 40)).then(() => revokeBulk(stores.projects, project, watermark, FIXED_NOW, NO_DEADLINE));
        const [bulk, during] = await Promise.all([bulkRevoke, issuing]);
        const flags = await revokedFlags(project);
        const revokedDuring = during.filter((id) => flags.get(id) === 1).length;

        // Keys that existed before the revoke started are all revoked (DynamoDB Local's index is read-after-write).
        expect(before.every((id) => flags.get(id) === 1)).toBe(true);
        // What the call counted is exactly what it revoked: every earlier key plus the later keys it reached.
        expect(noteAnomalies(Math.abs(bulk.revoked_count - (before.length + revokedDuring)))).toBe(0);
        expect(during.every((id) => flags.get(id) === 0 || flags.get(id) === 1)).toBe(true);
        issuedDuring += during.length;
        caught += revokedDuring;
        if (revokedDuring > 0 && revokedDuring < during.length) runsWithBoth += 1;
      }
      reportFigure(
        `race issue-during-bulk: ${HARDENING_RUNS} runs, ${issuedDuring} keys issued mid-revoke, ${caught} caught and counted, the rest left active (${runsWithBoth} runs with both)`,
      );
    },
    timeoutFor(250),
  );
});

describe('rate limit under concurrency', () => {
  const reps = Math.max(2, Math.ceil(HARDENING_RUNS / 4));

  it(
    `lets exactly 100 of 150 concurrent requests of one token through in one window (${reps} repetitions, fixed clock)`,
    async () => {
      for (let run = 0; run < reps; run++) {
        const bucket = `race-${newWatermark()}`;
        // Mid-window on a fixed clock, so the minute boundary cannot split the burst.
        const now = FIXED_NOW + 20 + run * 60;
        const decisions = await Promise.all(Array.from({ length: 150 }, () => consumeRateLimit(stores.rateLimits, bucket, now)));
        const allowed = decisions.filter((decision) => decision.allowed);
        expect(noteAnomalies(Math.abs(allowed.length - RATE_LIMIT.requests))).toBe(0);
        expect(allowed.map((decision) => decision.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      }
      reportFigure(`race rate limit: ${reps} runs x 150 concurrent requests, exactly 100 allowed each run`);
    },
    timeoutFor(250),
  );

  it('answers 150 concurrent calls of the deployed list-versions handler with exactly 100 x 200 and 50 x 429 with Retry-After', async () => {
    const listVersionsHandler = createApiHandler(listVersionsRoute, {
      stores,
      keySecret: memoryKeySecret(),
      now: () => unixSeconds(),
      logger: new Logger({ serviceName: 'developer-api' }),
    });
    const owner = await seedOwner(stores);
    const { projectId } = await seedProject(stores, { ownerId: owner.ownerId, versions: ['only'] });
    // The handler reads the real clock: start the burst well inside a minute.
    const secondOfMinute = Math.floor(Date.now() / 1000) % 60;
    if (secondOfMinute > 55) await new Promise((resolve) => setTimeout(resolve, (61 - secondOfMinute) * 1000));
    const replies = await Promise.all(
      Array.from({ length: 150 }, () => listVersionsHandler(apiEvent('list-versions', { projectId, caller: owner }), lambdaContext())),
    );
    const ok = replies.filter((reply) => reply.statusCode === 200);
    const limited = replies.filter((reply) => reply.statusCode === 429);
    expect(ok).toHaveLength(100);
    expect(limited).toHaveLength(50);
    for (const reply of limited) {
      expect(JSON.parse(reply.body)).toEqual({ error: RATE_LIMIT_MESSAGE });
      expect(Number(reply.headers?.['Retry-After'])).toBeGreaterThanOrEqual(1);
    }
  });
});
