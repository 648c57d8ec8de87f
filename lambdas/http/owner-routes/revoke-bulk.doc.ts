import { EXAMPLE } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { RevokeBulkBody } from '#schemas/requests';
import { RevokeBulkResponse } from '#schemas/responses';

/** The OpenAPI operation of revoke-bulk (its route: revoke-bulk.ts); the document alone imports it, never a Lambda bundle. */
export const revokeBulkDoc = (): OperationDoc => ({
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
});
