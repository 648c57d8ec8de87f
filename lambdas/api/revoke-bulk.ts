import { apiHandler } from '#http/api-handler';
import { revokeBulk } from '#domain/project-api';
import { NoQuery, RevokeBulkBody } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/revoke-bulk */
export const handler = apiHandler({
  query: NoQuery,
  body: RevokeBulkBody,
  run: ({ project, body, now }, store) => revokeBulk(store, project, body.watermark, now),
});
