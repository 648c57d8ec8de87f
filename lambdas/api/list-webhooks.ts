import { apiHandler } from '#http/api-handler';
import { listWebhooks } from '#domain/project-api';
import { NoQuery } from '#schemas/requests';

/** GET /v1/projects/{id}/webhooks */
export const handler = apiHandler({
  query: NoQuery,
  run: ({ project }, store) => listWebhooks(store, project),
});
