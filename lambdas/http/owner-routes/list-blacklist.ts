import { listBlacklist } from '#domain/blacklist';
import { defineOwnerRoute } from '#http/owner-route';
import { ListBlacklistQuery } from '#schemas/requests';

export const listBlacklistRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/blacklist',
  entry: 'list-blacklist',
  access: 'read',
  doing: 'listing the blacklist',
  capacity: 'quiet',
  // The count and one Query of the page's positions, both consistent (blacklist-store.ts).
  tableAccess: [{ actions: ['dynamodb:GetItem', 'dynamodb:Query'], partitions: ['blacklist'] }],
  query: ListBlacklistQuery,
  run: ({ project, query, stores }) => listBlacklist(stores.blacklist, project, query),
});
