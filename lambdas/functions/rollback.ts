import { rollback } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, RollbackBody } from '#schemas/requests';

/** POST /v1/projects/{id}/versions/rollback */
export const rollbackEndpoint = defineEndpoint({
  scope: scopeNeededBy('rollback'),
  query: NoQuery,
  body: RollbackBody,
  run: ({ project, body, now, actor }, projects, audit) => rollback(projects, project, body.version_id, now, { log: audit, actor }),
});

export const handler = awsApiHandler(rollbackEndpoint);
