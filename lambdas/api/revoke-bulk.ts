import { revokeBulk } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, RevokeBulkBody } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/revoke-bulk */
export const revokeBulkEndpoint = defineEndpoint({
  query: NoQuery,
  body: RevokeBulkBody,
  run: ({ project, body, now, timeLeftMs }, projects) => revokeBulk(projects, project, body.watermark, now, timeLeftMs),
});

export const handler = awsApiHandler(revokeBulkEndpoint);
