import { revokeKey } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, RevokeKeyBody } from '#schemas/requests';

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
});
