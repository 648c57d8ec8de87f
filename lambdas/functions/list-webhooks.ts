import { listWebhooks } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery } from '#schemas/requests';

/** GET /v1/projects/{id}/webhooks */
export const listWebhooksEndpoint = defineEndpoint({
  scope: scopeNeededBy('list-webhooks'),
  query: NoQuery,
  run: ({ project, scope }, projects) => listWebhooks(projects, project, scope),
});

export const handler = awsApiHandler(listWebhooksEndpoint);
