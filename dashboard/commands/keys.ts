import type { DashboardIssuedKey, NewKeys } from '#adapters/dashboard-store';
import { oneOf, UsageError, wholeNumber } from '#dashboard/args';
import type { Command } from '#dashboard/command';
import { watermarkProblem } from '#schemas/formats';
import { DISCORD_USER_ID, MAX_FINGERPRINTS, MAX_NOTE_LENGTH } from '#schemas/requests';
import { KEY_TIERS, MAX_KEYS_PER_DASHBOARD_ISSUE, MAX_UNIX_SECONDS, printableText, projectId, requireProject } from './input';

function discordUserId(text: string): string {
  if (!DISCORD_USER_ID.test(text)) throw new UsageError(`--discord-id must be a Discord user id: 17 to 20 digits; got "${text}"`);
  return text;
}

function watermark(text: string): string {
  const problem = watermarkProblem(text);
  if (problem) throw new UsageError(`--${problem}`);
  return text;
}

/** What `keys issue` hands the repository; the time is added when it runs. */
export type KeysIssueInput = Omit<NewKeys, 'now'>;

/** `keys issue`: up to MAX_KEYS_PER_DASHBOARD_ISSUE keys of a project, the raw keys in the answer, this once. */
export const keysIssue: Command<KeysIssueInput, { keys: DashboardIssuedKey[] }> = {
  name: 'keys issue',
  flags: {
    project: { required: true, placeholder: 'ID' },
    count: { placeholder: 'N' },
    watermark: { placeholder: 'HEX16' },
    tier: { placeholder: KEY_TIERS.join('|') },
    'max-uses': { placeholder: 'N' },
    'expires-at': { placeholder: 'UNIX' },
    'max-fingerprints': { placeholder: 'N' },
    note: { placeholder: 'TEXT' },
    'discord-id': { placeholder: 'ID' },
  },
  validate(flags) {
    const count = flags.optional('count');
    const mark = flags.optional('watermark');
    const maxUses = flags.optional('max-uses');
    const expiresAt = flags.optional('expires-at');
    const maxFingerprints = flags.optional('max-fingerprints');
    const note = flags.optional('note');
    const discordId = flags.optional('discord-id');
    return {
      projectId: projectId(flags),
      count: count === undefined ? 1 : wholeNumber('count', count, { min: 1, max: MAX_KEYS_PER_DASHBOARD_ISSUE }),
      ...(mark === undefined ? {} : { watermark: watermark(mark) }),
      tier: oneOf('tier', flags.optional('tier') ?? 'standard', KEY_TIERS),
      maxUses: maxUses === undefined ? null : wholeNumber('max-uses', maxUses, { min: 1, max: Number.MAX_SAFE_INTEGER }),
      // A past expiry is allowed: expired keys are what some abuse detectors look for.
      ...(expiresAt === undefined ? {} : { expiresAt: wholeNumber('expires-at', expiresAt, { min: 1, max: MAX_UNIX_SECONDS }) }),
      // The owner API's rules for the same fields (DESIGN.md, "Selling keys").
      maxFingerprints: maxFingerprints === undefined ? null : wholeNumber('max-fingerprints', maxFingerprints, { min: 1, max: MAX_FINGERPRINTS }),
      ...(note === undefined ? {} : { note: printableText('note', note, MAX_NOTE_LENGTH, { allowEmpty: true }) }),
      ...(discordId === undefined ? {} : { discordId: discordUserId(discordId) }),
    };
  },
  async run(context, input) {
    await requireProject(context, input.projectId);
    return { keys: await context.stores.dashboard.issueKeys({ ...input, now: context.now() }) };
  },
};
