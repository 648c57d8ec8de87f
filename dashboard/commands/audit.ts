import type { Command } from '#dashboard/command';
import type { AuditEntry } from '#domain/audit';
import { auditLimit, projectId, requireProject } from './input';

/** `audit list`: who changed what in a project through the API, newest first. (`token audit` lists an owner's.) */
export const auditList: Command<{ projectId: string; limit: number }, { entries: AuditEntry[] }> = {
  name: 'audit list',
  flags: { project: { required: true, placeholder: 'ID' }, limit: { placeholder: 'N' } },
  validate: (flags) => ({ projectId: projectId(flags), limit: auditLimit(flags) }),
  async run(context, input) {
    await requireProject(context, input.projectId);
    return { entries: await context.stores.audit.list({ projectId: input.projectId }, input.limit) };
  },
};
