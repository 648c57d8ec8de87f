import { listVersions } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { ListPageQuery } from '#schemas/requests';

export const listVersionsRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/versions',
  entry: 'list-versions',
  access: 'read',
  doing: 'listing versions',
  tableAccess: [{ actions: ['dynamodb:Query'], partitions: ['project'] }],
  query: ListPageQuery,
  run: ({ project, query, stores }) => listVersions(stores.projects, project, query),
});
