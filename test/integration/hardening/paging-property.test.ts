import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listKeys } from '#domain/project-api';
import { KEYS_PAGE } from '#schemas/requests';
import { createTestTable, FIXED_NOW, seedOwner, type TestTable } from '#test-support/fixtures';
import { HARDENING_RUNS, reportFigure, timeoutFor } from '#test-support/hardening';

/**
 * Key pagination on DynamoDB Local, against random shapes: a project with a random number of keys (issued in
 * random batch sizes, some revoked), paged from a random offset with a random limit. Every key from the offset
 * on must be visited exactly once, in issue order, each page as full as the keys left allow.
 */

let table: TestTable;
let ownerId: string;

beforeAll(async () => {
  table = await createTestTable('hardening-paging');
  ({ ownerId } = await seedOwner(table.stores));
});

afterAll(async () => {
  await table?.drop();
});

describe('paging keys on DynamoDB Local', () => {
  it(
    'visits every key from the offset on exactly once and in issue order, for random key counts, limits and offsets',
    async () => {
      const { stores } = table;
      // Each run seeds a project of up to 300 keys, so half as many runs as the races keep CI fast.
      const runs = Math.max(5, Math.ceil(HARDENING_RUNS / 2));
      let pagesRead = 0;
      let keysIssued = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 300 }),
          fc.integer({ min: 30, max: 150 }),
          fc.integer({ min: 1, max: KEYS_PAGE.maxLimit }),
          fc.nat(),
          fc.array(fc.boolean(), { minLength: 300, maxLength: 300 }),
          async (count, batchSize, limit, offsetSeed, revokeMask) => {
            // Offsets up to a little past the end, so the empty tail is tried as well.
            const offset = offsetSeed % (count + 3);
            const projectId = await stores.dashboard.createProject({ ownerId, name: 'Paging', plan: 'business', now: FIXED_NOW });
            const issued: string[] = [];
            for (let start = 0; start < count; start += batchSize) {
              const batch = await stores.dashboard.issueKeys({
                projectId,
                count: Math.min(batchSize, count - start),
                tier: 'standard',
                maxUses: null,
                now: FIXED_NOW,
              });
              issued.push(...batch.map((key) => key.id));
            }
            keysIssued += count;
            // Revoked keys stay in the list (keys are never deleted): revoking must not move or hide them.
            await Promise.all(issued.filter((_, i) => revokeMask[i]).map((keyId) => stores.projects.revokeKey(projectId, keyId, FIXED_NOW)));
            const project = await stores.projects.getProject(projectId);
            if (!project) throw new Error('project vanished');

            const visited: string[] = [];
            for (let cursor = offset; ; cursor += limit) {
              const page = await listKeys(stores.projects, project, { limit, offset: cursor });
              pagesRead += 1;
              expect(page.total).toBe(count);
              expect(page.keys).toHaveLength(Math.max(0, Math.min(limit, count - cursor)));
              visited.push(...page.keys.map((key) => key.id));
              if (page.keys.length < limit) break;
            }
            expect(visited).toEqual(issued.slice(offset));
            expect(new Set(visited).size).toBe(visited.length);
          },
        ),
        { numRuns: runs },
      );
      reportFigure(`paging property: ${runs} random projects, ${keysIssued} keys issued, ${pagesRead} pages read, every key visited once in issue order`);
    },
    timeoutFor(1_500),
  );
});
