import { KeyNotFound } from '#domain/errors';
import { revokeKey } from '#domain/project-api';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, RevokeKeyBody } from '#schemas/requests';
import { OkResponse } from '#schemas/responses';

export const revokeKeyRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys/revoke',
  entry: 'revoke-key',
  access: 'write',
  doing: 'revoking a key',
  // One transaction: the key's revoke and its audit entry.
  tableAccess: [{ actions: ['dynamodb:UpdateItem'], partitions: ['key'] }, RECORD_AUDIT],
  query: NoQuery,
  body: RevokeKeyBody,
  run: ({ project, body, now, trail, stores }) => revokeKey(stores.projects, project, body.key_id, now, trail),
  openapi: () => ({
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
  }),
});
