import { listKeys } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { ListKeysQuery } from '#schemas/requests';

/** GET /v1/projects/{id}/keys */
export const listKeysEndpoint = defineEndpoint({
  scope: scopeNeededBy('list-keys'),
  query: ListKeysQuery,
  run: ({ project, query }, projects) => listKeys(projects, project, query),
});

export const handler = awsApiHandler(listKeysEndpoint);
