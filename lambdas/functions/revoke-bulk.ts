import { AUDIT_UNSETTLED } from '#domain/audit';
import { revokeBulkAudited } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, RevokeBulkBody } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/revoke-bulk */
export const revokeBulkEndpoint = defineEndpoint({
  scope: scopeNeededBy('revoke-bulk'),
  query: NoQuery,
  body: RevokeBulkBody,
  run: ({ project, body, now, timeLeftMs, actor, logger }, projects, audit) =>
    revokeBulkAudited(projects, project, body.watermark, now, timeLeftMs, {
      log: audit,
      actor,
      unsettled: (entry, outcome, error) => logger.error(AUDIT_UNSETTLED, { entryId: entry.entryId, projectId: entry.projectId, outcome, error }),
    }),
});

export const handler = awsApiHandler(revokeBulkEndpoint);
