import { projectStats } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { StatsQuery } from '#schemas/requests';

/** GET /v1/projects/{id}/stats */
export const getStatsEndpoint = defineEndpoint({
  scope: scopeNeededBy('get-stats'),
  query: StatsQuery,
  run: ({ project, query, now }, projects) => projectStats(projects, project, query, now),
});

export const handler = awsApiHandler(getStatsEndpoint);
