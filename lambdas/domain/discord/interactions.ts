import { EPHEMERAL, INTERACTION_TYPE, type Interaction, type InteractionReply, type MessageReply, type ModalReply, REPLY_TYPE } from '#schemas/discord';
import { AUDIT_ACTIONS, discordEntry } from '../audit';
import { blacklistProblem } from '../blacklist';
import { hashKeyValue, hasKeyValueForm, keyIdOf } from '../key-values';
import type { AuditLog, BlacklistStore, DiscordKeyStore, DiscordKeyView } from '../ports';
import { actionOf, BUTTON_PREFIX, type DiscordAction, KEY_OPTION, REDEEM_MODAL_ID } from './commands';
import type { DiscordLink } from './link';

/**
 * What a buyer's command does and what the reply says (DESIGN.md, "Buyers help themselves in Discord"). Every reply
 * is ephemeral, pings no one, and names keys by their ids: never a raw key value (the table has none), nor another
 * user's keys. The writes are single conditional writes on the key's own item (#domain/ports DiscordKeyStore), so
 * two users redeeming one key link exactly one, and a reset and its cooldown happen together or not at all.
 */

export interface InteractionDeps {
  store: DiscordKeyStore;
  audit: AuditLog;
  /** The project's buyer blacklist: a listed Discord user redeems nothing. */
  blacklist: BlacklistStore;
}

/** The request's context: the linked project, where its hosted stub is, who asked, when. */
export interface InteractionContext {
  projectId: string;
  link: DiscordLink;
  /** The hosted stub's URL (GET /v1/loader/stub/{project_id} on the loader routes' base URL). */
  stubUrl: string;
  now: number;
  /** The front door's request id, for the audit entries. */
  requestId: string;
}

/** Replies to a user's request, in the buyer's words. */
const REPLIES = {
  unknownCommand: (name: string) => `Unknown command "${name}". The commands are /redeem, /status, /resethwid and /loader.`,
  missingKey: 'Give your key: /redeem key:YOUR-KEY',
  blacklisted: (reason: string) => `The seller does not let this account redeem keys (reason: ${reason}). Ask the seller.`,
  noUser: 'This interaction names no Discord user.',
  notAKey: 'That is not a key of this script. Check that you copied the whole key.',
  linkedToOther: 'That key is linked to another Discord account, so it cannot be linked to yours. Ask the seller if you think this is wrong.',
  noKeys: 'No key is linked to your Discord account yet. Link the key you bought with /redeem key:YOUR-KEY.',
} as const;

const NOTHING_BOUND = (keyId: string) => `- ${code(keyId)}: no machine is bound, nothing to reset; the next run binds its machine.`;

/** `<t:UNIX:R>`: Discord shows it as "in 3 days", in the reader's language and time zone. */
const relative = (unix: number) => `<t:${unix}:R>`;

/** Discord's text formatting is inert in code spans; ids are [A-Za-z0-9_-], so none can break out of one. */
const code = (text: string) => `\`${text.replace(/`/g, '')}\``;

function message(content: string): MessageReply {
  return { type: REPLY_TYPE.channelMessage, data: { content, flags: EPHEMERAL, allowed_mentions: { parse: [] } } };
}

function redeemModal(): ModalReply {
  return {
    type: REPLY_TYPE.modal,
    data: {
      custom_id: REDEEM_MODAL_ID,
      title: 'Redeem a key',
      components: [{ type: 1, components: [{ type: 4, custom_id: KEY_OPTION, label: 'Your key', style: 1, min_length: 1, max_length: 100, required: true }] }],
    },
  };
}

/** The user who asked: `member.user` in a server, `user` in a direct message. */
const userIdOf = (interaction: Interaction): string | undefined => interaction.member?.user?.id ?? interaction.user?.id;

const DISCORD_USER_ID_FORM = /^[0-9]{17,20}$/;

/** What an interaction asks for: an action (and the key it gives), the redeem modal, or something unknown. */
type Request = { action: DiscordAction; key?: string } | { modal: true } | { unknown: string };

function requestOf(interaction: Interaction): Request {
  const data = interaction.data ?? {};
  if (interaction.type === INTERACTION_TYPE.applicationCommand) {
    const name = data.name ?? '';
    const action = actionOf(name);
    if (!action || name.startsWith(BUTTON_PREFIX)) return { unknown: name };
    const key = data.options?.find((option) => option.name === KEY_OPTION)?.value;
    return { action, ...(typeof key === 'string' ? { key } : {}) };
  }
  if (interaction.type === INTERACTION_TYPE.messageComponent) {
    const id = data.custom_id ?? '';
    const action = id.startsWith(BUTTON_PREFIX) ? actionOf(id) : undefined;
    if (!action) return { unknown: id };
    // A button cannot carry the key: the redeem button asks for it in a modal first.
    return action === 'redeem' ? { modal: true } : { action };
  }
  if (interaction.type === INTERACTION_TYPE.modalSubmit && data.custom_id === REDEEM_MODAL_ID) {
    const field = data.components?.flatMap((row) => row.components ?? []).find((input) => input.custom_id === KEY_OPTION);
    return { action: 'redeem', ...(typeof field?.value === 'string' ? { key: field.value } : {}) };
  }
  return { unknown: data.name ?? data.custom_id ?? `interaction type ${interaction.type}` };
}

/** The reply to a verified interaction. */
export async function answerInteraction(deps: InteractionDeps, context: InteractionContext, interaction: Interaction): Promise<InteractionReply> {
  if (interaction.type === INTERACTION_TYPE.ping) return { type: REPLY_TYPE.pong };
  const request = requestOf(interaction);
  if ('unknown' in request) return message(REPLIES.unknownCommand(request.unknown));
  if ('modal' in request) return redeemModal();
  const userId = userIdOf(interaction);
  if (!userId || !DISCORD_USER_ID_FORM.test(userId)) return message(REPLIES.noUser);
  switch (request.action) {
    case 'redeem':
      return message(await redeem(deps, context, userId, request.key));
    case 'status':
      return message(await status(deps, context, userId));
    case 'resethwid':
      return message(await resetHwid(deps, context, userId));
    case 'loader':
      return message(loaderLines(context.stubUrl));
  }
}

/** What a key's state is called in a reply. */
function stateOf(key: DiscordKeyView, now: number): 'revoked' | 'expired' | 'active' {
  if (key.revoked) return 'revoked';
  return now >= key.expiresAt ? 'expired' : 'active';
}

const machinesOf = (key: DiscordKeyView) =>
  key.maxFingerprints === null
    ? 'not bound to machines'
    : `${key.boundMachines} of ${key.maxFingerprints} machine${key.maxFingerprints === 1 ? '' : 's'} bound`;

async function redeem(deps: InteractionDeps, context: InteractionContext, userId: string, value: string | undefined): Promise<string> {
  const key = value?.trim();
  if (!key) return REPLIES.missingKey;
  if (!hasKeyValueForm(key)) return REPLIES.notAKey;
  // A blacklisted user links nothing (DESIGN.md, "Buyer blacklist"): one read before the link's write.
  const listed = await blacklistProblem(deps.blacklist, context.projectId, { discordId: userId });
  if (listed) return REPLIES.blacklisted(listed.reason);
  const keyHash = hashKeyValue(key);
  const ref = { projectId: context.projectId, keyId: keyIdOf(keyHash), keyHash };
  const write = await deps.store.linkKeyToUser(ref, userId, context.now);
  const found = write.key;
  if (!found || found.projectId !== context.projectId || found.keyHash !== keyHash) return REPLIES.notAKey;
  if (!write.written) {
    const state = stateOf(found, context.now);
    if (state === 'revoked') return `Key ${code(found.id)} is revoked: it no longer runs. Ask the seller.`;
    if (state === 'expired') return `Key ${code(found.id)} expired ${relative(found.expiresAt)}. Ask the seller to extend it.`;
    return REPLIES.linkedToOther;
  }
  return `Key ${code(found.id)} is linked to your account. It expires ${relative(found.expiresAt)}; ${machinesOf(found)}. /status shows it, /loader shows how to run the script.`;
}

async function status(deps: InteractionDeps, context: InteractionContext, userId: string): Promise<string> {
  const keys = await deps.store.keysOfUser(context.projectId, userId);
  if (keys.length === 0) return REPLIES.noKeys;
  const lines = keys.map((key) => {
    const state = stateOf(key, context.now);
    const expiry = state === 'expired' ? `expired ${relative(key.expiresAt)}` : `expires ${relative(key.expiresAt)}`;
    const uses = key.maxUses === null ? `${key.currentUses} uses` : `${key.currentUses} of ${key.maxUses} uses`;
    return `- ${code(key.id)}: ${state}, ${expiry}, ${uses}, ${machinesOf(key)}`;
  });
  return [`Your key${keys.length === 1 ? '' : 's'}:`, ...lines].join('\n');
}

/**
 * Each of the user's keys with a machine bound is reset unless its cooldown runs; a key with none bound is left
 * alone and spends no cooldown. Each reset is audited with the user's id.
 */
async function resetHwid(deps: InteractionDeps, context: InteractionContext, userId: string): Promise<string> {
  const keys = await deps.store.keysOfUser(context.projectId, userId);
  if (keys.length === 0) return REPLIES.noKeys;
  const lines: string[] = [];
  for (const key of keys) {
    if (key.boundMachines === 0) {
      lines.push(NOTHING_BOUND(key.id));
      continue;
    }
    const line = await resetOne(deps, context, userId, key.id);
    if (line) lines.push(line);
  }
  return lines.length === 0 ? REPLIES.noKeys : ['Machine reset:', ...lines].join('\n');
}

/** One key's reset in one conditional write, and its audit entry; the reply's line, none for a key no longer the user's. */
async function resetOne(deps: InteractionDeps, context: InteractionContext, userId: string, keyId: string): Promise<string | undefined> {
  const { resetCooldown } = context.link;
  const write = await deps.store.resetMachinesOfUser({ projectId: context.projectId, keyId }, userId, context.now, context.now - resetCooldown);
  if (write.written) {
    const cleared = write.key.boundMachines;
    await deps.audit.record(
      discordEntry({
        projectId: context.projectId,
        at: context.now,
        action: AUDIT_ACTIONS.resetHwid,
        requestId: context.requestId,
        discordUserId: userId,
        target: { key_id: keyId },
        outcome: { cleared },
      }),
    );
    return `- ${code(keyId)}: ${cleared} machine${cleared === 1 ? '' : 's'} unbound; next reset ${relative(context.now + resetCooldown)}.`;
  }
  const before = write.key;
  if (!before || before.projectId !== context.projectId || before.discordId !== userId) return undefined;
  if (before.boundMachines > 0 && before.hwidResetAt !== null) {
    return `- ${code(keyId)}: reset ${relative(before.hwidResetAt)} already; it can be reset again ${relative(before.hwidResetAt + resetCooldown)}.`;
  }
  // Its machines were unbound (by the seller, or a reset a moment ago) between the read and the write.
  return NOTHING_BOUND(keyId);
}

/** The two lines buyers run: their key, then the hosted stub. The user's key is not known here (only its hash is kept). */
function loaderLines(stubUrl: string): string {
  return [
    'Run this in your executor, with your key in place of YOUR-KEY:',
    '```lua',
    'script_key = "YOUR-KEY"',
    `loadstring(game:HttpGet("${stubUrl}"))()`,
    '```',
  ].join('\n');
}
