import { emailSha256 } from '#domain/blacklist';
import { AddBlacklistBody, KEYS_PAGE } from '#schemas/requests';
import type { BlacklistEntrySchema } from '#schemas/responses';
import { type Command, type CommandContext, defineCommand } from './command';
import { EXIT, UsageError } from './errors';
import { dateTime, plural, table } from './format';

/** The buyer an entry names, as a cell: its kind and its value. */
const buyerOf = (entry: BlacklistEntrySchema): string =>
  entry.fingerprint !== undefined
    ? `machine ${entry.fingerprint}`
    : entry.discord_id !== undefined
      ? `discord ${entry.discord_id}`
      : `email ${entry.email_sha256}`;

const entriesTable = (entries: readonly BlacklistEntrySchema[], total: number, offset: number): string =>
  entries.length === 0
    ? `No entries${offset > 0 ? ` from ${offset}` : ''} (${total === 1 ? '1 entry' : `${total} entries`} in all).\n`
    : `${table(
        ['ENTRY', 'BUYER', 'REASON', 'ADDED'],
        entries.map((entry) => [entry.id, buyerOf(entry), entry.reason, dateTime(entry.created_at)]),
      )}${offset + entries.length < total ? `${offset + entries.length} of ${total}; --offset ${offset + entries.length} for more.\n` : ''}`;

/** `blacklist add`: exactly one buyer; `--email` is hashed here (trimmed, lowercased), so the address never leaves the machine. */
async function add({ client, options, print }: CommandContext<readonly []>): Promise<number> {
  if (options.email !== undefined && options['email-sha256'] !== undefined) throw new UsageError('give --email or --email-sha256, not both');
  const body = {
    ...(options.fingerprint !== undefined && { fingerprint: options.fingerprint }),
    ...(options['discord-id'] !== undefined && { discord_id: options['discord-id'] }),
    ...(options.email !== undefined && { email_sha256: emailSha256(options.email) }),
    ...(options['email-sha256'] !== undefined && { email_sha256: options['email-sha256'] }),
    reason: options.reason,
  };
  const checked = AddBlacklistBody.safeParse(body);
  if (!checked.success) {
    const message = checked.error.issues[0]?.message ?? 'invalid flags';
    // The API's field names as this command's flags.
    throw new UsageError(
      message
        .replaceAll('discord_id', '--discord-id')
        .replaceAll('email_sha256', '--email-sha256')
        .replace(/^(fingerprint|reason)\b/, '--$1'),
    );
  }
  print(await client.addToBlacklist(checked.data), ({ id, banned_keys }) => `Blacklisted as ${id}; banned ${plural(banned_keys, 'key')}.\n`);
  return EXIT.ok;
}

export const BLACKLIST_COMMANDS: Record<string, Command> = {
  'blacklist add': defineCommand({
    usage: 'blacklist add (--fingerprint HEX64 | --discord-id ID | --email ADDRESS | --email-sha256 HEX64) --reason TEXT',
    summary: 'Blacklist a buyer: their bound and Discord-linked keys are banned, and they get no new binding, redeem or key',
    args: [],
    options: ['fingerprint', 'discord-id', 'email', 'email-sha256', 'reason'],
    run: add,
  }),
  'blacklist list': defineCommand({
    usage: 'blacklist list [--limit N] [--offset N]',
    summary: "List the project's blacklist",
    args: [],
    options: ['limit', 'offset'],
    run: async ({ client, options, print }) => {
      const number = (flag: string, value: string | undefined, fallback: number, max: number) => {
        if (value === undefined) return fallback;
        if (!/^\d{1,15}$/.test(value) || Number(value) > max) throw new UsageError(`--${flag} must be a whole number from 0 to ${max}`);
        return Number(value);
      };
      const limit = Math.max(1, number('limit', options.limit, KEYS_PAGE.defaultLimit, KEYS_PAGE.maxLimit));
      const offset = number('offset', options.offset, 0, KEYS_PAGE.maxOffset);
      print(await client.listBlacklist(limit, offset), ({ entries, total }) => entriesTable(entries, total, offset));
      return EXIT.ok;
    },
  }),
  'blacklist remove': defineCommand({
    usage: 'blacklist remove ENTRY_ID',
    summary: 'Remove a blacklist entry (the keys it banned stay banned until unbanned)',
    args: ['ENTRY_ID'],
    options: [],
    run: async ({ client, args: [entryId], print }) => {
      print(await client.removeFromBlacklist(entryId), () => `Removed ${entryId} from the blacklist; the keys it banned stay banned.\n`);
      return EXIT.ok;
    },
  }),
};
