import { listVersions } from '#domain/project-api';
import { EXAMPLE } from '#http/openapi/examples';
import { unknownQuery } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { NoQuery } from '#schemas/requests';
import { ListVersionsResponse } from '#schemas/responses';

export const listVersionsRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/versions',
  entry: 'list-versions',
  access: 'read',
  doing: 'listing versions',
  tableAccess: [{ actions: ['dynamodb:Query'], partitions: ['project'] }],
  query: NoQuery,
  run: ({ project, stores }) => listVersions(stores.projects, project),
  openapi: () => ({
    operationId: 'listVersions',
    tag: 'Versions',
    summary: 'List script versions',
    description: 'Every version of the project, highest `version_number` first, and the current one. Versions are uploaded in the dashboard.',
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
      } satisfies ListVersionsResponse,
    },
    errors: unknownQuery(),
  }),
});
