import { keyDetail } from '#domain/selling-keys';
import { defineOwnerRoute } from '#http/owner-route';
import { NoQuery } from '#schemas/requests';

export const getKeyRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/keys/{key_id}',
  entry: 'get-key',
  access: 'read',
  doing: 'reading a key',
  tableAccess: [{ actions: ['dynamodb:GetItem'], partitions: ['key'] }],
  query: NoQuery,
  run: ({ project, keyId, now, stores }) => keyDetail(stores.keys.store, project, keyId, now),
});
