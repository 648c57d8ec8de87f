import { apiHandler } from '#http/api-handler';
import { rollback } from '#domain/project-api';
import { NoQuery, RollbackBody } from '#schemas/requests';

/** POST /v1/projects/{id}/versions/rollback */
export const handler = apiHandler({
  query: NoQuery,
  body: RollbackBody,
  run: ({ project, body }, store) => rollback(store, project, body.version_id),
});
