import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { AUDIT_UNSETTLED } from '#domain/audit';
import { revokeBulkAudited } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, RevokeBulkBody } from '#schemas/requests';

export const revokeBulkRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys/revoke-bulk',
  entry: 'revoke-bulk',
  access: 'write',
  doing: 'revoking keys by watermark',
  // A bulk revoke of 10,000 keys needs more than the default timeout: API Gateway's whole 29 s less a second.
  timeoutSeconds: 28,
  // Each key the watermark index lists gets one conditional write (active keys of this project only), no read.
  // The audit entry is put before the revokes and completed with their count after them.
  tableAccess: [
    { queryIndex: 'byWatermark' },
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'] },
    RECORD_AUDIT,
    { actions: ['dynamodb:UpdateItem'], partitions: ['projectAudit'], attributes: UPDATED_ATTRIBUTES.auditOutcome },
  ],
  query: NoQuery,
  body: RevokeBulkBody,
  run: ({ project, body, now, timeLeftMs, actor, logger }, projects, audit) =>
    revokeBulkAudited(projects, project, body.watermark, now, timeLeftMs, {
      log: audit,
      actor,
      unsettled: (entry, outcome, error) => logger.error(AUDIT_UNSETTLED, { entryId: entry.entryId, projectId: entry.projectId, outcome, error }),
    }),
});
