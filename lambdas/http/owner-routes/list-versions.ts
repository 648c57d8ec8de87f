import { listVersions } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { NoQuery } from '#schemas/requests';

export const listVersionsRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/versions',
  entry: 'list-versions',
  access: 'read',
  doing: 'listing versions',
  tableAccess: [{ actions: ['dynamodb:Query'], partitions: ['project'] }],
  query: NoQuery,
  run: ({ project }, projects) => listVersions(projects, project),
});
