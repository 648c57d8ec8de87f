import { keySecretSealer } from '#adapters/secret-sealer';
import { UsageError } from '#dashboard/args';
import type { Command } from '#dashboard/command';
import { CommandError, type DashboardContext } from '#dashboard/context';
import { openSettings, sealSettings } from '#domain/free-keys/sealing';
import { FreeKeySettings, type FreeKeySettingsView, freeSettingsProblem, viewOf } from '#schemas/free-keys';
import { projectId } from './input';

/**
 * `free set` and `free show` (DESIGN.md, "Free keys behind checkpoints"; docs/free-keys.md): a project's checkpoints
 * and its free keys' terms. Secrets are sealed before they are written and never printed.
 */

const notFound = (id: string) => new CommandError(`Project ${id} not found: create one with "project create"`);

function sealerFor(context: DashboardContext) {
  if (!context.keySecret) throw new CommandError("The stack's key secret is not available here: free keys can be set on the local stack or from the console");
  return keySecretSealer(context.keySecret, 'freeKeys');
}

/** A whole-number flag as the schema reads it (the schema names the bounds). */
function numberFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,3}$/.test(text)) throw new UsageError(`--${flag} must be a whole number; got "${text}"`);
  return Number(text);
}

export interface FreeSetInput {
  projectId: string;
  settings: FreeKeySettings;
}

export const freeSet: Command<FreeSetInput, FreeKeySettingsView> = {
  name: 'free set',
  flags: {
    project: { required: true, placeholder: 'ID' },
    checkpoints: { required: true, placeholder: 'JSON' },
    'duration-hours': { placeholder: 'N' },
    machines: { placeholder: 'N' },
    'keys-per-day': { placeholder: 'N' },
    off: { kind: 'switch' },
  },
  validate(flags) {
    let checkpoints: unknown;
    try {
      checkpoints = JSON.parse(flags.required('checkpoints'));
    } catch {
      throw new UsageError('--checkpoints must be JSON: [{"provider":"workink","url":"https://…","link_id":"…","secret":"…"}, …]');
    }
    const raw = {
      enabled: !flags.switch('off'),
      checkpoints,
      duration_hours: numberFlag('duration-hours', flags.optional('duration-hours')),
      machines: numberFlag('machines', flags.optional('machines')),
      keys_per_machine_per_day: numberFlag('keys-per-day', flags.optional('keys-per-day')),
    };
    const input = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined));
    const problem = freeSettingsProblem(input);
    if (problem) throw new UsageError(problem);
    return { projectId: projectId(flags), settings: FreeKeySettings.parse(input) };
  },
  async run(context, input) {
    const sealed = await sealSettings(sealerFor(context), input.projectId, input.settings);
    if (!(await context.stores.freeKeys.putSettings(input.projectId, sealed))) throw notFound(input.projectId);
    return viewOf(input.settings);
  },
};

export const freeShow: Command<{ projectId: string }, FreeKeySettingsView | { enabled: false; checkpoints: [] }> = {
  name: 'free show',
  flags: { project: { required: true, placeholder: 'ID' } },
  validate: (flags) => ({ projectId: projectId(flags) }),
  async run(context, input) {
    if (!(await context.stores.projects.getProject(input.projectId))) throw notFound(input.projectId);
    const stored = await context.stores.freeKeys.settings(input.projectId);
    if (!stored) return { enabled: false, checkpoints: [] };
    return viewOf(await openSettings(sealerFor(context), input.projectId, stored));
  },
};
