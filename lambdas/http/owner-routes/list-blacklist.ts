import { listBlacklist } from '#domain/blacklist';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { KEYS_PAGE, ListBlacklistQuery } from '#schemas/requests';
import { ListBlacklistResponse } from '#schemas/responses';
import { listBlacklistExample } from './blacklist-examples';

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
  run: ({ project, query }, _projects, _audit, _keys, blacklist) => listBlacklist(blacklist, project, query),
  openapi: () => ({
    operationId: 'listBlacklist',
    tag: 'Blacklist',
    summary: "List the project's blacklist",
    description:
      'Entries in the order they were added, `limit` per page from `offset`, as keys page; removing an entry moves the newest one into its place. `total` counts the entries. Each entry names its buyer by exactly one of `fingerprint`, `discord_id`, `email_sha256`.',
    queryDescriptions: {
      limit: `Entries per page (default ${KEYS_PAGE.defaultLimit}, at most ${KEYS_PAGE.maxLimit}).`,
      offset: 'How many entries to skip (default 0). Pages cost the same at any offset.',
    },
    ok: { name: 'ListBlacklistResponse', schema: ListBlacklistResponse, description: 'A page of entries.', example: listBlacklistExample },
    errors: [invalid('limit out of range', ListBlacklistQuery, { limit: '500' })],
  }),
});
