import { type Flags, UsageError, wholeNumber } from '#dashboard/args';
import { CommandError, type DashboardContext } from '#dashboard/context';
import { PATH_ID_PATTERN, printableTextProblem } from '#schemas/formats';

/**
 * What the commands share of their input: the limits of the dashboard's input, the flag checkers more than one
 * noun uses (each throws a UsageError naming the flag), and the reads that must pass before a command writes.
 */

// ---- limits of the dashboard's input ----

/** Keys one `keys issue` call may create: enough for any real batch, small enough to print. */
export const MAX_KEYS_PER_DASHBOARD_ISSUE = 10_000;
export const MAX_PROJECT_NAME_LENGTH = 100;
/** Spec §2.1 shows no tier but `standard`. */
export const KEY_TIERS = ['standard'] as const;
/** Past this a timestamp is in milliseconds, not the Unix seconds the API uses. */
export const MAX_UNIX_SECONDS = 99_999_999_999;
/** Audit entries one `audit list` prints: the newest 50 unless asked, at most 1,000. */
const AUDIT_LIST_LIMIT = { default: 50, max: 1000 } as const;

// ---- flag checkers ----

export function idFlag(flag: string, text: string, what: string, example: string): string {
  if (!PATH_ID_PATTERN.test(text)) throw new UsageError(`--${flag} must be ${what} id like ${example}; got "${text}"`);
  return text;
}

export const ownerId = (flags: Flags) => idFlag('owner', flags.required('owner'), 'an owner', 'own_0123456789abcdef0123');
export const projectId = (flags: Flags) => idFlag('project', flags.required('project'), 'a project', 'prj_0123456789abcdef0123');

export function auditLimit(flags: Flags): number {
  const text = flags.optional('limit');
  return text === undefined ? AUDIT_LIST_LIMIT.default : wholeNumber('limit', text, { min: 1, max: AUDIT_LIST_LIMIT.max });
}

export function printableText(flag: string, text: string, maxLength: number, options: { allowEmpty: boolean }): string {
  if (!options.allowEmpty && text.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  // Bidirectional overrides would reorder the text around them where it is shown (the Discord embeds of names and notes).
  const problem = printableTextProblem(text, maxLength);
  if (problem) throw new UsageError(`--${flag} ${problem}`);
  return text;
}

// ---- reads that must pass before a write ----

export async function requireOwner(context: DashboardContext, owner: string): Promise<void> {
  if (!(await context.stores.dashboard.ownerExists(owner))) throw new CommandError(`Owner ${owner} not found: create one with "owner create"`);
}

export async function requireProject(context: DashboardContext, project: string): Promise<void> {
  if (!(await context.stores.projects.getProject(project))) throw new CommandError(`Project ${project} not found: create one with "project create"`);
}
