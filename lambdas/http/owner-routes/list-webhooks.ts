import { listWebhooks } from '#domain/project-api';
import { EXAMPLE } from '#http/openapi/examples';
import { unknownQuery } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { NoQuery } from '#schemas/requests';
import { ListWebhooksResponse } from '#schemas/responses';

export const listWebhooksRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/webhooks',
  entry: 'list-webhooks',
  access: 'read',
  doing: 'listing webhooks',
  tableAccess: [{ actions: ['dynamodb:Query'], partitions: ['project'] }],
  query: NoQuery,
  run: ({ project, scope, stores }) => listWebhooks(stores.projects, project, scope),
  openapi: () => ({
    operationId: 'listWebhooks',
    tag: 'Webhooks',
    summary: 'List webhook configurations',
    description:
      'Every webhook configuration of the project. Read-only: webhooks are managed in the dashboard. A `read` token sees each `url` with its token redacted; a `write` token sees it whole.',
    ok: {
      name: 'ListWebhooksResponse',
      schema: ListWebhooksResponse,
      description: 'The webhook configurations.',
      example: {
        webhooks: [
          {
            id: EXAMPLE.webhookId,
            url: 'https://discord.com/api/webhooks/1311223344556677889/Zx9-example-webhook-token',
            events: '["version_deployed","key_abuse"]',
            enabled: 1,
            created_at: 1763616000,
            updated_at: 1763616000,
          },
        ],
      } satisfies ListWebhooksResponse,
    },
    errors: unknownQuery(),
  }),
});
