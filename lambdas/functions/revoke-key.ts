import { revokeKey } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, RevokeKeyBody } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/revoke */
export const revokeKeyEndpoint = defineEndpoint({
  scope: scopeNeededBy('revoke-key'),
  query: NoQuery,
  body: RevokeKeyBody,
  run: ({ project, body, now, actor }, projects, audit) => revokeKey(projects, project, body.key_id, now, { log: audit, actor }),
});

export const handler = awsApiHandler(revokeKeyEndpoint);
