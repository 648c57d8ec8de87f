import { rollback } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, RollbackBody } from '#schemas/requests';

/** POST /v1/projects/{id}/versions/rollback */
export const rollbackEndpoint = defineEndpoint({
  query: NoQuery,
  body: RollbackBody,
  run: ({ project, body }, projects) => rollback(projects, project, body.version_id),
});

export const handler = awsApiHandler(rollbackEndpoint);
