/**
 * The four slash commands and the buttons that do the same (DESIGN.md, "Buyers help themselves in Discord"), as
 * Discord registers them (`sdapi discord commands` prints them) and as the endpoint reads them back.
 */

export const DISCORD_ACTIONS = ['redeem', 'status', 'resethwid', 'loader'] as const;
export type DiscordAction = (typeof DISCORD_ACTIONS)[number];

/** A button's custom id names its action: `sd:redeem`, `sd:status`, `sd:resethwid`, `sd:loader`. */
export const BUTTON_PREFIX = 'sd:';
/** The redeem button's modal, and its one text field. */
export const REDEEM_MODAL_ID = 'sd:redeem:modal';
export const KEY_OPTION = 'key';

/** Discord's option type for a string, and the command type of a slash command. */
const STRING_OPTION = 3;
const CHAT_INPUT = 1;

export interface SlashCommand {
  name: DiscordAction;
  type: typeof CHAT_INPUT;
  description: string;
  options?: { name: string; type: typeof STRING_OPTION; description: string; required: boolean; min_length: number; max_length: number }[];
  /** Usable in the publisher's server and in a direct message with the application. */
  contexts: number[];
}

/** The bulk-overwrite body of Discord's "application commands" endpoint. */
export const SLASH_COMMANDS: readonly SlashCommand[] = [
  {
    name: 'redeem',
    type: CHAT_INPUT,
    description: 'Link a key you bought to your Discord account',
    options: [{ name: KEY_OPTION, type: STRING_OPTION, description: 'Your key (only you see the reply)', required: true, min_length: 1, max_length: 100 }],
    contexts: [0, 1],
  },
  { name: 'status', type: CHAT_INPUT, description: 'Your keys: status, expiry, uses and machines', contexts: [0, 1] },
  { name: 'resethwid', type: CHAT_INPUT, description: 'Unbind your machines, to run on a new one or another executor', contexts: [0, 1] },
  { name: 'loader', type: CHAT_INPUT, description: 'The two lines that run the script', contexts: [0, 1] },
];

/** The action a command name or a button's custom id names, or undefined. */
export function actionOf(name: string): DiscordAction | undefined {
  const bare = name.startsWith(BUTTON_PREFIX) ? name.slice(BUTTON_PREFIX.length) : name;
  return (DISCORD_ACTIONS as readonly string[]).includes(bare) ? (bare as DiscordAction) : undefined;
}
