import { oneOf } from '#dashboard/args';
import type { Command } from '#dashboard/command';
import { PLANS, type Plan } from '#domain/model';
import { MAX_PROJECT_NAME_LENGTH, ownerId, printableText, requireOwner } from './input';

/** `project create`: a project of an owner, on a plan (Business unless asked). */
export const projectCreate: Command<{ ownerId: string; name: string; plan: Plan }, { projectId: string }> = {
  name: 'project create',
  flags: {
    owner: { required: true, placeholder: 'ID' },
    name: { required: true, placeholder: 'NAME' },
    plan: { placeholder: PLANS.join('|') },
  },
  validate: (flags) => ({
    ownerId: ownerId(flags),
    name: printableText('name', flags.required('name').trim(), MAX_PROJECT_NAME_LENGTH, { allowEmpty: false }),
    plan: oneOf('plan', flags.optional('plan') ?? 'business', PLANS),
  }),
  async run(context, input) {
    await requireOwner(context, input.ownerId);
    return { projectId: await context.stores.dashboard.createProject({ ...input, now: context.now() }) };
  },
};
