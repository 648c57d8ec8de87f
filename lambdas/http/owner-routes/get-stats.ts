import { GRANULARITY, NO_VERSION_NAME, OTHER_NAME, STATS_RESULTS, statsWindow, TOP_NAMES } from '#domain/analytics/stats';
import { InvalidInput } from '#domain/errors';
import { projectStats } from '#domain/project-api';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { StatsQuery } from '#schemas/requests';
import { StatsResponse } from '#schemas/responses';

/** The 400 statsWindow answers for a window it refuses, in its own words. */
function statsWindowError(from: number, to: number): InvalidInput {
  try {
    statsWindow({ granularity: 'hour', by: 'result', from, to }, to);
  } catch (error) {
    if (error instanceof InvalidInput) return error;
  }
  throw new Error(`the window ${from}..${to} unexpectedly passed`);
}

export const getStatsRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/stats',
  entry: 'get-stats',
  access: 'read',
  doing: 'reading stats',
  capacity: 'quiet',
  // One Query of the project's stats counters (stats-store.ts).
  tableAccess: [{ actions: ['dynamodb:Query'], partitions: ['stats'] }],
  query: StatsQuery,
  run: ({ project, query, now, stores }) => projectStats(stores.projects, project, query, now),
  openapi: () => ({
    operationId: 'getStats',
    tag: 'Stats',
    summary: "The project's traffic by hour or day",
    description: `Key checks by result, or executions by executor or version, in one bucket for every UTC hour (or day) that overlaps \`[from, to)\`, ascending, zero-filled. Counts are exact and include a check within 60 seconds. Hour buckets are kept ${GRANULARITY.hour.keptSeconds / 86_400} days, day buckets ${GRANULARITY.day.keptSeconds / 86_400}.`,
    queryDescriptions: {
      granularity: `Bucket length: \`hour\` (a window of at most ${GRANULARITY.hour.limit}) or \`day\` (at most ${GRANULARITY.day.limit}). Buckets are UTC hours or UTC days.`,
      by: `What a bucket counts: \`result\` (key checks by result: ${STATS_RESULTS.join(', ')}), \`executor\` or \`version\` (executions by executor name or version id; at most ${TOP_NAMES} names a bucket, the rest under \`${OTHER_NAME}\`, executions with no version under \`${NO_VERSION_NAME}\`).`,
      from: 'Start of the window, Unix seconds, before `to`. Default: `to` minus a day (`hour`) or 30 days (`day`).',
      to: 'End of the window (exclusive), Unix seconds. Default: now.',
    },
    ok: {
      name: 'StatsResponse',
      schema: StatsResponse,
      description: 'The buckets of the window.',
      example: {
        granularity: 'hour',
        by: 'result',
        from: 1_700_000_000,
        to: 1_700_007_200,
        buckets: [
          { t: 1_699_999_200, total: 41, counts: { ok: 38, revoked: 3, expired: 0, hwid_locked: 0, over_limit: 0 } },
          { t: 1_700_002_800, total: 0, counts: { ok: 0, revoked: 0, expired: 0, hwid_locked: 0, over_limit: 0 } },
          { t: 1_700_006_400, total: 12, counts: { ok: 12, revoked: 0, expired: 0, hwid_locked: 0, over_limit: 0 } },
        ],
      } satisfies StatsResponse,
    },
    errors: [
      invalid('Unknown granularity', StatsQuery, { granularity: 'week' }),
      invalid('Timestamp in milliseconds', StatsQuery, { to: '1700000000000' }),
      { summary: 'from not before to', error: statsWindowError(1_700_003_600, 1_700_000_000) },
      { summary: 'Window past the limit', error: statsWindowError(1_700_000_000 - 8 * 86_400, 1_700_000_000) },
    ],
  }),
});
