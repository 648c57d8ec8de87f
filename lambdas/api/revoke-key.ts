import { apiHandler } from '#http/api-handler';
import { revokeKey } from '#domain/project-api';
import { NoQuery, RevokeKeyBody } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/revoke */
export const handler = apiHandler({
  query: NoQuery,
  body: RevokeKeyBody,
  run: ({ project, body, now }, store) => revokeKey(store, project, body.key_id, now),
});
