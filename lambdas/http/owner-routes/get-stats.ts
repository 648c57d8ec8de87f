import { projectStats } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { StatsQuery } from '#schemas/requests';

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
});
