import { removeFromBlacklist } from '#domain/blacklist';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery } from '#schemas/requests';

export const removeFromBlacklistRoute = defineOwnerRoute({
  method: 'DELETE',
  path: '/v1/projects/{id}/blacklist/{entry_id}',
  entry: 'remove-from-blacklist',
  access: 'write',
  doing: 'removing from the blacklist',
  capacity: 'quiet',
  // The entry, the count and the last position moved into the freed one, in one transaction (blacklist-store.ts).
  tableAccess: [{ actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'], partitions: ['blacklist'] }, RECORD_AUDIT],
  query: NoQuery,
  run: ({ project, entryId, now, trail, stores }) => removeFromBlacklist(stores.blacklist, project, entryId, now, trail),
});
