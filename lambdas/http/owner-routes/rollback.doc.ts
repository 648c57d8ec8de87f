import { VersionNotFound } from '#domain/errors';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { RollbackBody } from '#schemas/requests';
import { RollbackResponse } from '#schemas/responses';

/** The OpenAPI operation of rollback (its route: rollback.ts); the document alone imports it, never a Lambda bundle. */
export const rollbackDoc = (): OperationDoc => ({
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
});
