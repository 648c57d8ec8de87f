import { listKeysExample } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { KEYS_PAGE, ListKeysQuery } from '#schemas/requests';
import { ListKeysResponse } from '#schemas/responses';

/** The OpenAPI operation of list-keys (its route: list-keys.ts); the document alone imports it, never a Lambda bundle. */
export const listKeysDoc = (): OperationDoc => ({
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
});
