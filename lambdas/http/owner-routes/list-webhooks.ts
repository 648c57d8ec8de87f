import { listWebhooks } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { NoQuery } from '#schemas/requests';

export const listWebhooksRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/webhooks',
  entry: 'list-webhooks',
  access: 'read',
  doing: 'listing webhooks',
  tableAccess: [{ actions: ['dynamodb:Query'], partitions: ['project'] }],
  query: NoQuery,
  run: ({ project, scope }, projects) => listWebhooks(projects, project, scope),
});
