import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { updateKey } from '#domain/key-lifecycle';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, UpdateKeyBody } from '#schemas/requests';

export const updateKeyRoute = defineOwnerRoute({
  method: 'PATCH',
  path: '/v1/projects/{id}/keys/{key_id}',
  entry: 'update-key',
  access: 'write',
  doing: 'editing a key',
  capacity: 'quiet',
  // The edit asks nothing back; the key detail it answers is read after it, as get-key reads it.
  tableAccess: [
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyEdit },
    { actions: ['dynamodb:GetItem'], partitions: ['key'] },
    RECORD_AUDIT,
  ],
  query: NoQuery,
  body: UpdateKeyBody,
  run: ({ project, keyId, body, now, trail, stores }) => updateKey(stores.keys.store, project, keyId, body, now, trail),
});
