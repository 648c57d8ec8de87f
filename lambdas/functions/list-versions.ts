import { listVersions } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery } from '#schemas/requests';

/** GET /v1/projects/{id}/versions */
export const listVersionsEndpoint = defineEndpoint({
  scope: scopeNeededBy('list-versions'),
  query: NoQuery,
  run: ({ project }, projects) => listVersions(projects, project),
});

export const handler = awsApiHandler(listVersionsEndpoint);
