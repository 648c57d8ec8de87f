import { EXAMPLE } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { KEYS_PAGE, ListPageQuery } from '#schemas/requests';
import { ListVersionsResponse } from '#schemas/responses';

/** The OpenAPI operation of list-versions (its route: list-versions.ts); the document alone imports it, never a Lambda bundle. */
export const listVersionsDoc = (): OperationDoc => ({
  operationId: 'listVersions',
  tag: 'Versions',
  summary: 'List script versions',
  description:
    'Every version of the project, highest `version_number` first, and the current one; with `limit`, a page of them from `offset`. `total` counts every version, so a client pages until `offset` reaches it. Versions are uploaded in the dashboard.',
  queryDescriptions: {
    limit: `Versions per page (at most ${KEYS_PAGE.maxLimit}); without it, every version from \`offset\`, as before paging.`,
    offset: 'How many versions to skip, highest `version_number` first (default 0).',
  },
  ok: {
    name: 'ListVersionsResponse',
    schema: ListVersionsResponse,
    description: 'The versions.',
    example: {
      versions: [
        { id: EXAMPLE.versionId, version_number: 3, uploaded_at: 1763875200, size_bytes: 48213, notes: 'Fix the teleport cooldown' },
        { id: EXAMPLE.olderVersionId, version_number: 2, uploaded_at: 1763702400, size_bytes: 47980, notes: '' },
      ],
      current_version_id: EXAMPLE.versionId,
      total: 2,
    } satisfies ListVersionsResponse,
  },
  errors: [invalid('limit out of range', ListPageQuery, { limit: '500' }), invalid('offset not a whole number', ListPageQuery, { offset: '-1' })],
});
