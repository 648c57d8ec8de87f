import { InvalidInput } from '#domain/errors';
import { AuditQuery } from '#schemas/console';
import { defineConsoleRoute, json, read } from '../console-route';

/** The project's audit entries, newest first. */
export const listAudit = defineConsoleRoute({
  method: 'GET',
  path: '/projects/{id}/audit',
  need: read('reading the audit trail'),
  query: AuditQuery,
  run: async ({ project, query, stores }) => {
    if (query.limit < 1 || query.limit > 1000) throw new InvalidInput('limit must be a whole number from 1 to 1000');
    return json({ entries: await stores.auditEntries.list({ projectId: project.id }, query.limit) });
  },
});
