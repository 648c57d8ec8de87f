import { listWebhooks } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { ListPageQuery } from '#schemas/requests';

export const listWebhooksRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/webhooks',
  entry: 'list-webhooks',
  access: 'read',
  doing: 'listing webhooks',
  tableAccess: [{ actions: ['dynamodb:Query'], partitions: ['project'] }],
  query: ListPageQuery,
  run: ({ project, scope, query, stores }) => listWebhooks(stores.projects, project, scope, query),
});
