import { apiHandler } from '#http/api-handler';
import { listVersions } from '#domain/project-api';
import { NoQuery } from '#schemas/requests';

/** GET /v1/projects/{id}/versions */
export const handler = apiHandler({
  query: NoQuery,
  run: ({ project }, store) => listVersions(store, project),
});
