import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { rollback } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, RollbackBody } from '#schemas/requests';

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
});
