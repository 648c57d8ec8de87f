import { KeyNotFound } from '#domain/errors';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { RevokeKeyBody } from '#schemas/requests';
import { OkResponse } from '#schemas/responses';

/** The OpenAPI operation of revoke-key (its route: revoke-key.ts); the document alone imports it, never a Lambda bundle. */
export const revokeKeyDoc = (): OperationDoc => ({
  operationId: 'revokeKey',
  tag: 'Keys',
  summary: 'Revoke one key',
  description: 'The key stops working at once. Revoking a key that is already revoked succeeds again, so a retry is safe.',
  requestBody: {
    name: 'RevokeKeyRequest',
    description: 'The key to revoke.',
    examples: { revoke: { summary: 'Revoke a key', value: { key_id: EXAMPLE.keyId } } },
  },
  ok: { name: 'OkResponse', schema: OkResponse, description: 'The key is revoked.', example: { ok: true } satisfies OkResponse },
  errors: [invalid('Empty body', RevokeKeyBody, {}), { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) }],
});
