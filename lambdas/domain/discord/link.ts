import { InvalidInput } from '../errors';
import type { DiscordLink, DiscordLinkStore } from '../ports';

export type { DiscordLink };

import { ed25519PublicKeyProblem } from './ed25519-key';
import { DISCORD_PUBLIC_KEY_FORM } from './signature';

/**
 * A project's link to a Discord application (DESIGN.md, "Buyers help themselves in Discord"): the application's
 * public key, which signs every interaction, and how often a buyer may reset a key's machines. The dashboard's
 * `discord link`/`discord unlink` and the console's project settings call these; the caller audits the change.
 */

/** A buyer's `resethwid` resets a key at most once per this many seconds. */
export const RESET_COOLDOWN_SECONDS = { min: 3_600, max: 2_592_000, default: 86_400 } as const;

/** A Discord application id (a snowflake), as the developer portal shows it. */
const DISCORD_APPLICATION_ID_FORM = /^[0-9]{17,20}$/;

/** What the project item keeps of its Discord application. */

export interface DiscordLinkRequest {
  publicKey: string;
  applicationId?: string | null;
  resetCooldown?: number;
}

/** What is wrong with a link request, naming the field, or undefined. */
export function discordLinkProblem(request: DiscordLinkRequest): string | undefined {
  if (!DISCORD_PUBLIC_KEY_FORM.test(request.publicKey.toLowerCase()))
    return `public_key must be the application's public key from Discord's developer portal: 64 hex characters; got ${request.publicKey.length} characters`;
  const weakness = ed25519PublicKeyProblem(Buffer.from(request.publicKey, 'hex'));
  if (weakness) return `public_key ${weakness}: copy the Public Key from Discord's developer portal`;
  if (request.applicationId !== undefined && request.applicationId !== null && !DISCORD_APPLICATION_ID_FORM.test(request.applicationId))
    return 'application_id must be a Discord application id: 17 to 20 digits';
  const cooldown = request.resetCooldown;
  if (cooldown !== undefined && (!Number.isInteger(cooldown) || cooldown < RESET_COOLDOWN_SECONDS.min || cooldown > RESET_COOLDOWN_SECONDS.max))
    return `reset_cooldown must be whole seconds from ${RESET_COOLDOWN_SECONDS.min} (an hour) to ${RESET_COOLDOWN_SECONDS.max} (30 days)`;
  return undefined;
}

/**
 * Link (or link again: the key and the cooldown are replaced) a project that exists; undefined when it does not.
 * Throws InvalidInput, having written nothing, for a request discordLinkProblem refuses (its message names the field).
 */
export async function linkDiscord(store: DiscordLinkStore, projectId: string, request: DiscordLinkRequest, now: number): Promise<DiscordLink | undefined> {
  const problem = discordLinkProblem(request);
  if (problem) throw new InvalidInput(problem);
  const link: DiscordLink = {
    publicKey: request.publicKey.toLowerCase(),
    applicationId: request.applicationId ?? null,
    resetCooldown: request.resetCooldown ?? RESET_COOLDOWN_SECONDS.default,
    linkedAt: now,
  };
  return (await store.setDiscordLink(projectId, link)) ? link : undefined;
}

/** Unlink: the endpoint answers 401 from the next request on. False when the project does not exist. */
export const unlinkDiscord = (store: DiscordLinkStore, projectId: string): Promise<boolean> => store.removeDiscordLink(projectId);
