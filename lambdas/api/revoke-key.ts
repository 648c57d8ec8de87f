import { revokeKey } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, RevokeKeyBody } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/revoke */
export const revokeKeyEndpoint = defineEndpoint({
  query: NoQuery,
  body: RevokeKeyBody,
  run: ({ project, body, now }, projects) => revokeKey(projects, project, body.key_id, now),
});

export const handler = awsApiHandler(revokeKeyEndpoint);
