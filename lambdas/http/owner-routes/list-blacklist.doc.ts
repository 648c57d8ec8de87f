import type { OperationDoc } from '#http/openapi/operation-doc';
import { invalid } from '#http/openapi/operation-doc';
import { KEYS_PAGE, ListBlacklistQuery } from '#schemas/requests';
import { ListBlacklistResponse } from '#schemas/responses';
import { listBlacklistExample } from './blacklist-examples';

/** The OpenAPI operation of list-blacklist (its route: list-blacklist.ts); the document alone imports it, never a Lambda bundle. */
export const listBlacklistDoc = (): OperationDoc => ({
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
});
