import { revokeBulkAudited } from '#domain/project-api';
import { defineEndpoint } from '#http/api-handler';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, RevokeBulkBody } from '#schemas/requests';
import { scopeNeededBy } from './routes';

/** Logged when a bulk revoke's keys are revoked but its audit entry could not be completed; the line holds the outcome. */
export const AUDIT_UNSETTLED = 'Bulk revoke answered, but its audit entry could not be completed';

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
