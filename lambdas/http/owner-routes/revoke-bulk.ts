import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { revokeBulkAudited } from '#domain/project-api';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, RevokeBulkBody } from '#schemas/requests';
import { RevokeBulkResponse } from '#schemas/responses';

export const revokeBulkRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys/revoke-bulk',
  entry: 'revoke-bulk',
  access: 'write',
  doing: 'revoking keys by watermark',
  // A bulk revoke of 10,000 keys needs more than the default timeout: API Gateway's whole 29 s less a second.
  timeoutSeconds: 28,
  // The watermark index keeps revoked keys, so the keys it lists are read (BatchGetItem) before any is revoked.
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
  openapi: () => ({
    operationId: 'revokeBulk',
    tag: 'Keys',
    summary: 'Revoke every key carrying a watermark',
    description:
      'Revokes every active key of the project whose watermark equals the given one: the 16 hex characters after `WM_` in a leaked script dump. `revoked_count` counts the keys this call revoked; no match is a success with 0. A call stops starting revokes about 20 s in, so that it always answers in time: `complete: false` then says keys may remain, and the caller repeats the same call until `complete` is true (a repeat counts only the keys it revokes, so the counts add up to the total).',
    requestBody: {
      name: 'RevokeBulkRequest',
      description: 'The leaked watermark.',
      examples: { revoke_bulk: { summary: 'Revoke a leaked watermark', value: { watermark: EXAMPLE.watermark } } },
    },
    ok: {
      name: 'RevokeBulkResponse',
      schema: RevokeBulkResponse,
      description: 'Matching keys are revoked.',
      example: { ok: true, revoked_count: 3, complete: true } satisfies RevokeBulkResponse,
    },
    errors: [
      invalid('WM_ prefix copied along', RevokeBulkBody, { watermark: `WM_${EXAMPLE.watermark}` }),
      invalid('Not 16 lowercase hex characters', RevokeBulkBody, { watermark: '3f9a1c7e' }),
    ],
  }),
});
