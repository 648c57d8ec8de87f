import { apiHandler } from '#http/api-handler';
import { listKeys } from '#domain/project-api';
import { ListKeysQuery } from '#schemas/requests';

/** GET /v1/projects/{id}/keys */
export const handler = apiHandler({
  query: ListKeysQuery,
  run: ({ project, query }, store) => listKeys(store, project, query),
});
