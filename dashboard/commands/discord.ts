import { randomBytes } from 'node:crypto';
import { oneOf, UsageError, wholeNumber } from '#dashboard/args';
import type { Command } from '#dashboard/command';
import { CommandError, type DashboardContext } from '#dashboard/context';
import { DISCORD_ACTIONS, type DiscordAction, KEY_OPTION } from '#domain/discord/commands';
import { discordLinkProblem, linkDiscord, RESET_COOLDOWN_SECONDS, unlinkDiscord } from '#domain/discord/link';
import { interactionsUrlOf } from '#http/public-routes';
import { fileDiscordKeyPair } from '#local/discord-key';
import { DISCORD_USER_ID } from '#schemas/requests';
import { projectId, requireProject } from './input';

/**
 * `discord link`, `discord unlink` and `discord simulate` (DESIGN.md, "Buyers help themselves in Discord"): link a
 * project to the publisher's Discord application, and try its commands locally, signed as Discord signs them.
 */

/** The loader routes' base URL, or a sentence saying how to name it. */
function loaderBaseUrlOf(context: DashboardContext): string {
  if (!context.loaderBaseUrl)
    throw new CommandError("The loader routes' base URL is unknown: run npm start, deploy the stack (output ServiceUrl), or set LOADER_BASE_URL");
  return context.loaderBaseUrl;
}

export interface DiscordLinkInput {
  projectId: string;
  publicKey: string;
  applicationId?: string;
  resetCooldown?: number;
}

export const discordLink: Command<DiscordLinkInput, { interactions_url: string; reset_cooldown: number }> = {
  name: 'discord link',
  flags: {
    project: { required: true, placeholder: 'ID' },
    'public-key': { required: true, placeholder: 'HEX64' },
    'application-id': { placeholder: 'ID' },
    'reset-cooldown': { placeholder: 'SECONDS' },
  },
  validate(flags) {
    const applicationId = flags.optional('application-id');
    const cooldown = flags.optional('reset-cooldown');
    const input: DiscordLinkInput = {
      projectId: projectId(flags),
      publicKey: flags.required('public-key'),
      ...(applicationId === undefined ? {} : { applicationId }),
      ...(cooldown === undefined ? {} : { resetCooldown: wholeNumber('reset-cooldown', cooldown, RESET_COOLDOWN_SECONDS) }),
    };
    const problem = discordLinkProblem(input);
    // The rule names the API's fields; the command line names its flags.
    if (problem) throw new UsageError(`--${problem.replace(/^(\w+)/, (field) => field.replace(/_/g, '-'))}`);
    return input;
  },
  async run(context, input) {
    const base = loaderBaseUrlOf(context);
    const link = await linkDiscord(context.stores.discord, input.projectId, input, context.now());
    if (!link) throw new CommandError(`Project ${input.projectId} not found: create one with "project create"`);
    return { interactions_url: interactionsUrlOf(base, input.projectId), reset_cooldown: link.resetCooldown };
  },
};

export const discordUnlink: Command<{ projectId: string }, { ok: true }> = {
  name: 'discord unlink',
  flags: { project: { required: true, placeholder: 'ID' } },
  validate: (flags) => ({ projectId: projectId(flags) }),
  async run(context, input) {
    if (!(await unlinkDiscord(context.stores.discord, input.projectId)))
      throw new CommandError(`Project ${input.projectId} not found: create one with "project create"`);
    return { ok: true };
  },
};

export interface SimulateInput {
  projectId: string;
  userId: string;
  command: DiscordAction;
  key?: string;
}

/**
 * The application command interaction Discord would send for a user's slash command in a server, from the linked
 * application when the link names one (the endpoint refuses any other).
 */
function slashCommandInteraction(input: SimulateInput, applicationId: string | null) {
  const snowflake = () => `1${randomBytes(8).readBigUInt64BE().toString().padStart(18, '0').slice(0, 18)}`;
  return {
    type: 2,
    id: snowflake(),
    application_id: applicationId ?? snowflake(),
    token: randomBytes(32).toString('base64url'),
    version: 1,
    guild_id: snowflake(),
    data: {
      id: snowflake(),
      name: input.command,
      type: 1,
      ...(input.key === undefined ? {} : { options: [{ name: KEY_OPTION, type: 3, value: input.key }] }),
    },
    member: { user: { id: input.userId, username: 'local-buyer' } },
  };
}

export const discordSimulate: Command<SimulateInput, object> = {
  name: 'discord simulate',
  flags: {
    project: { required: true, placeholder: 'ID' },
    user: { required: true, placeholder: 'DISCORD_ID' },
    command: { required: true, placeholder: DISCORD_ACTIONS.join('|') },
    key: { placeholder: 'KEY' },
  },
  validate(flags) {
    const userId = flags.required('user');
    if (!DISCORD_USER_ID.test(userId)) throw new UsageError(`--user must be a Discord user id: 17 to 20 digits; got "${userId}"`);
    const key = flags.optional('key');
    return {
      projectId: projectId(flags),
      userId,
      command: oneOf('command', flags.required('command'), DISCORD_ACTIONS),
      ...(key === undefined ? {} : { key }),
    };
  },
  async run(context, input) {
    const url = interactionsUrlOf(loaderBaseUrlOf(context), input.projectId);
    await requireProject(context, input.projectId);
    const keys = await fileDiscordKeyPair(process.env.DISCORD_KEY_FILE || undefined);
    const link = await context.stores.discord.discordLink(input.projectId);
    const body = JSON.stringify(slashCommandInteraction(input, link?.applicationId ?? null));
    const timestamp = String(context.now());
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Signature-Ed25519': keys.signRequest(timestamp, body), 'X-Signature-Timestamp': timestamp },
      body,
    }).catch((error: unknown) => {
      throw new CommandError(`Cannot reach ${url} (${error instanceof Error ? error.message : String(error)}): is the local stack running (npm start)?`);
    });
    const text = await response.text();
    if (response.status === 401) {
      throw new CommandError(
        `The endpoint refused the signature (401): link the project to the local key pair first: discord link --project ${input.projectId} --public-key ${keys.publicKeyHex}`,
      );
    }
    if (!response.ok) throw new CommandError(`The endpoint answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as object;
  },
};
