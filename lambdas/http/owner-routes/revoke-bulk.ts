import { UPDATED_ATTRIBUTES } from '#adapters/layout';
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
  // Each key the watermark index lists gets one conditional write (active keys of this project only), no read; a
  // repeat that meets mostly revoked keys reads the rest first (BatchGetItem) and writes only the active ones.
  // The audit entry is put before the revokes and completed with their count after them.
  tableAccess: [
    { queryIndex: 'byWatermark' },
    { actions: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'], partitions: ['key'] },
    RECORD_AUDIT,
    { actions: ['dynamodb:UpdateItem'], partitions: ['projectAudit'], attributes: UPDATED_ATTRIBUTES.auditOutcome },
  ],
  query: NoQuery,
  body: RevokeBulkBody,
  run: ({ project, body, now, timeLeftMs, trail, stores }) => revokeBulkAudited(stores.projects, project, body.watermark, now, timeLeftMs, trail),
});
