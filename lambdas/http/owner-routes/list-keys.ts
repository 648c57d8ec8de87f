import { listKeys } from '#domain/project-api';
import { listKeysExample } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { KEYS_PAGE, ListKeysQuery } from '#schemas/requests';
import { ListKeysResponse } from '#schemas/responses';

export const listKeysRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/keys',
  entry: 'list-keys',
  access: 'read',
  doing: 'listing keys',
  // Both indexes hold keys only (the watermark one serves the `watermark` filter): the page's keys themselves come
  // from one consistent BatchGetItem.
  tableAccess: [{ queryIndex: 'byIssueOrder' }, { queryIndex: 'byWatermark' }, { actions: ['dynamodb:BatchGetItem'], partitions: ['key'] }],
  query: ListKeysQuery,
  run: ({ project, query, stores }) => listKeys(stores.projects, project, query),
  openapi: () => ({
    operationId: 'listKeys',
    tag: 'Keys',
    summary: 'List key metadata',
    description: `Keys in issue order, \`limit\` per page from \`offset\`. Raw key values are never returned. \`total\` counts every key issued, so a client pages until \`offset\` reaches it. With \`watermark\`, only the keys carrying it, read from the watermark index at a cost that grows with the matching keys, not the project.`,
    queryDescriptions: {
      limit: `Keys per page (default ${KEYS_PAGE.defaultLimit}, at most ${KEYS_PAGE.maxLimit}).`,
      offset: 'How many keys to skip, in issue order (default 0). Pages cost the same at any offset.',
      watermark:
        "Only the keys carrying this watermark (16 lowercase hex, the characters after `WM_` in a leaked dump), revoked ones included; `offset` and `total` then count those keys. Not in the spec: an addition that finds a leak's keys without listing the project.",
    },
    ok: { name: 'ListKeysResponse', schema: ListKeysResponse, description: 'A page of keys.', example: listKeysExample },
    errors: [
      invalid('limit out of range', ListKeysQuery, { limit: '500' }),
      invalid('offset not a whole number', ListKeysQuery, { offset: '-1' }),
      invalid('watermark with its WM_ prefix', ListKeysQuery, { watermark: 'WM_3f9a1c2e7b4d8a6f' }),
    ],
  }),
});
