import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { banKey } from '#domain/key-lifecycle';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { BanKeyBody, NoQuery } from '#schemas/requests';

export const banKeyRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys/ban',
  entry: 'ban-key',
  access: 'write',
  doing: 'banning a key',
  capacity: 'quiet',
  // Key lifecycle (key-store.ts): one conditional write of the key's ban, then the audit entry.
  tableAccess: [{ actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyBan }, RECORD_AUDIT],
  query: NoQuery,
  body: BanKeyBody,
  run: ({ project, body, now, trail, stores }) => banKey(stores.keys.store, project, body, now, trail),
});
