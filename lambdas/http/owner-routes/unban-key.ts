import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { unbanKey } from '#domain/key-lifecycle';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, UnbanKeyBody } from '#schemas/requests';

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
});
