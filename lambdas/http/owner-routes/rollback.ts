import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { VersionNotFound } from '#domain/errors';
import { rollback } from '#domain/project-api';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, RollbackBody } from '#schemas/requests';
import { RollbackResponse } from '#schemas/responses';

export const rollbackRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/versions/rollback',
  entry: 'rollback',
  access: 'write',
  doing: 'rolling back a version',
  // One transaction: check the version item exists, move the project's pointer (nothing else of it), put the audit entry.
  tableAccess: [
    { actions: ['dynamodb:ConditionCheckItem'], partitions: ['project'] },
    { actions: ['dynamodb:UpdateItem'], partitions: ['project'], attributes: UPDATED_ATTRIBUTES.currentVersion },
    RECORD_AUDIT,
  ],
  query: NoQuery,
  body: RollbackBody,
  run: ({ project, body, now, trail, stores }) => rollback(stores.projects, project, body.version_id, now, trail),
  openapi: () => ({
    operationId: 'rollbackVersion',
    tag: 'Versions',
    summary: 'Roll back to a version',
    description: 'Makes the given version of the project the current one. Rolling back to the current version is a no-op success.',
    requestBody: {
      name: 'RollbackRequest',
      description: 'The version to make current.',
      examples: { rollback: { summary: 'Roll back', value: { version_id: EXAMPLE.olderVersionId } } },
    },
    ok: {
      name: 'RollbackResponse',
      schema: RollbackResponse,
      description: 'The version is current.',
      example: { ok: true, current_version_id: EXAMPLE.olderVersionId } satisfies RollbackResponse,
    },
    errors: [invalid('Empty body', RollbackBody, {}), { summary: 'No such version in this project', error: new VersionNotFound(EXAMPLE.versionId) }],
  }),
});
