import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { KeyNotFound } from '#domain/errors';
import { unbanKey } from '#domain/key-lifecycle';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, UnbanKeyBody } from '#schemas/requests';
import { OkResponse } from '#schemas/responses';

export const unbanKeyRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys/unban',
  entry: 'unban-key',
  access: 'write',
  doing: 'unbanning a key',
  capacity: 'quiet',
  // Key lifecycle (key-store.ts): one conditional write of the key's ban, then the audit entry.
  tableAccess: [{ actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyBan }, RECORD_AUDIT],
  query: NoQuery,
  body: UnbanKeyBody,
  run: ({ project, body, now, trail, stores }) => unbanKey(stores.keys.store, project, body, now, trail),
  openapi: () => ({
    operationId: 'unbanKey',
    tag: 'Keys',
    summary: 'Lift the ban of a key',
    description: 'The next check of the key is judged as if there had been no ban. A key without a ban answers the same. One write.',
    requestBody: { name: 'UnbanKeyRequest', description: 'The key.', examples: { unban: { summary: 'Unban a key', value: { key_id: EXAMPLE.keyId } } } },
    ok: { name: 'OkResponse', schema: OkResponse, description: 'The key is not banned.', example: { ok: true } satisfies OkResponse },
    errors: [invalid('Empty body', UnbanKeyBody, {}), { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) }],
  }),
});
