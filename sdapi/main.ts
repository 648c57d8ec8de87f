import { parseArgs } from 'node:util';
import { SLASH_COMMANDS } from '#domain/discord/commands';
import { watermarkProblem } from '#schemas/formats';
import { BanKeyBody, IssueKeysBody, KEYS_PAGE, parseDuration, StatsQuery, UpdateKeyBody } from '#schemas/requests';
import { BLACKLIST_COMMANDS } from './blacklist';
import { ApiClient } from './client';
import { type Command, type CommandContext, defineCommand, OPTIONS, type OptionName } from './command';
import { LOCAL_STACK_FILE, resolveConfig } from './config';
import { ApiFailure, EXIT, UsageError } from './errors';
import { dateTime, issuedKeysTable, keyDetailText, keysTable, plural, statsTable, versionsTable, webhooksTable } from './format';
import { type CliIo, type Output, Redactor } from './io';
import { leakCommand } from './leak';
import { progressBar } from './progress';

/** Options every command takes; the rest belong to the commands that list them. */
const GLOBAL_OPTIONS: readonly OptionName[] = ['base-url', 'token', 'project', 'json', 'verbose', 'help'];

const COMMANDS: Record<string, Command> = {
  'keys list': {
    usage: 'keys list [--limit N] [--offset N] [--all]',
    summary: 'List key metadata: one page, or every key with --all',
    args: [],
    options: ['limit', 'offset', 'all'],
    run: listKeys,
  },
  'keys issue': {
    usage: 'keys issue [--count N] [--duration 30d] [--max-uses N] [--max-fingerprints N] [--watermark HEX16] [--note TEXT] [--discord-id ID] [--order-id ID]',
    summary: 'Issue keys and print their raw values, shown this once; a repeated --order-id prints the same keys',
    args: [],
    options: ['count', 'duration', 'max-uses', 'max-fingerprints', 'watermark', 'note', 'discord-id', 'order-id'],
    run: issueKeys,
  },
  'keys show': defineCommand({
    usage: 'keys show KEY_ID',
    summary: 'One key in detail: uses, note, Discord id and the machines it is bound to',
    args: ['KEY_ID'],
    options: [],
    run: async ({ client, args: [keyId], print }) => {
      print(await client.getKey(keyId), ({ key }) => keyDetailText(key));
      return EXIT.ok;
    },
  }),
  'keys reset-hwid': defineCommand({
    usage: 'keys reset-hwid KEY_ID',
    summary: "Unbind every machine of a key: its buyer's next machine binds anew",
    args: ['KEY_ID'],
    options: [],
    run: async ({ client, args: [keyId], print }) => {
      print(await client.resetHwid(keyId), ({ cleared }) => `Unbound ${plural(cleared, 'machine')} from key ${keyId}.\n`);
      return EXIT.ok;
    },
  }),
  'keys ban': defineCommand({
    usage: 'keys ban KEY_ID --reason TEXT [--until UNIX | --for DURATION]',
    summary: "Refuse a key's checks with a reason its buyer reads, until a time, for a duration, or until unbanned",
    args: ['KEY_ID'],
    options: ['reason', 'until', 'for'],
    run: banKey,
  }),
  'keys unban': defineCommand({
    usage: 'keys unban KEY_ID',
    summary: 'Lift the ban of a key: its next check runs',
    args: ['KEY_ID'],
    options: [],
    run: async ({ client, args: [keyId], print }) => {
      print(await client.unbanKey(keyId), () => `Unbanned key ${keyId}.\n`);
      return EXIT.ok;
    },
  }),
  'keys extend': defineCommand({
    usage: 'keys extend KEY_ID --duration D',
    summary: 'Add time to a key from its expiry, or from now if it has expired (D: 1d, 7d, 30d, 90d, 365d, seconds or lifetime)',
    args: ['KEY_ID'],
    options: ['duration'],
    run: async ({ client, args: [keyId], options, print }) => {
      if (options.duration === undefined) throw new UsageError('keys extend needs --duration (1d, 7d, 30d, 90d, 365d, whole seconds or lifetime)');
      print(
        await client.extendKey(keyId, durationFlag('--duration', options.duration)),
        ({ expires_at }) => `Key ${keyId} now expires ${dateTime(expires_at)}.\n`,
      );
      return EXIT.ok;
    },
  }),
  'keys edit': defineCommand({
    usage: 'keys edit KEY_ID [--note TEXT] [--discord-id ID] [--max-uses N] [--max-fingerprints N]',
    summary: 'Change what was set at issue; "none" clears a field',
    args: ['KEY_ID'],
    options: ['note', 'discord-id', 'max-uses', 'max-fingerprints'],
    run: editKey,
  }),
  'keys revoke': defineCommand({
    usage: 'keys revoke KEY_ID',
    summary: 'Revoke one key',
    args: ['KEY_ID'],
    options: [],
    run: async ({ client, args: [keyId], print }) => {
      print(await client.revokeKey(keyId), () => `Revoked key ${keyId}.\n`);
      return EXIT.ok;
    },
  }),
  'keys revoke-bulk': defineCommand({
    usage: 'keys revoke-bulk WATERMARK',
    summary: 'Revoke every key carrying a watermark (the 16 hex characters after WM_)',
    args: ['WATERMARK'],
    options: [],
    run: async ({ client, args: [watermark], print, stderr }) => {
      const problem = watermarkProblem(watermark);
      if (problem) throw new UsageError(problem);
      const { revoked_count, calls } = await client.revokeBulkAll(watermark, (answer, call) => {
        if (!answer.complete)
          stderr.write(`sdapi: call ${call} revoked ${plural(answer.revoked_count, 'key')} and stopped before its time limit; repeating for the rest\n`);
      });
      const inCalls = calls > 1 ? ` in ${calls} calls` : '';
      print({ ok: true, revoked_count, complete: true }, () => `Revoked ${plural(revoked_count, 'key')} carrying watermark ${watermark}${inCalls}.\n`);
      return EXIT.ok;
    },
  }),
  'versions list': {
    usage: 'versions list',
    summary: 'List script versions (* marks the current one)',
    args: [],
    options: [],
    run: async ({ client, print }) => {
      print(await client.listVersions(), (result) => versionsTable(result.versions, result.current_version_id));
      return EXIT.ok;
    },
  },
  'versions rollback': defineCommand({
    usage: 'versions rollback VERSION_ID',
    summary: 'Make an earlier version the current one',
    args: ['VERSION_ID'],
    options: [],
    run: async ({ client, args: [versionId], print }) => {
      print(await client.rollback(versionId), (result) => `Current version is now ${result.current_version_id}.\n`);
      return EXIT.ok;
    },
  }),
  'webhooks list': {
    usage: 'webhooks list',
    summary: 'List webhook configurations (read-only)',
    args: [],
    options: [],
    run: async ({ client, print }) => {
      print(await client.listWebhooks(), (result) => webhooksTable(result.webhooks));
      return EXIT.ok;
    },
  },
  stats: {
    usage: 'stats [--granularity hour|day] [--by result|executor|version] [--from UNIX] [--to UNIX]',
    summary: 'Checks by result, or executions by executor or version, a row an hour (or day); default: the last 24 hours',
    args: [],
    options: ['granularity', 'by', 'from', 'to'],
    run: stats,
  },
  ...BLACKLIST_COMMANDS,
  leak: defineCommand({
    usage: 'leak FILE [--yes] [--blacklist]',
    summary: 'Find WM_ watermarks in a leaked dump and revoke the keys carrying them',
    args: ['FILE'],
    options: ['yes', 'blacklist'],
    run: leakCommand,
  }),
};

/**
 * Commands that call no API and need no settings. `discord commands` prints the bulk-overwrite body of Discord's
 * application commands endpoint, for registering the four slash commands (docs/discord.md says how).
 */
const OFFLINE_COMMANDS: Record<string, { usage: string; summary: string; run(stdout: Output): number }> = {
  'discord commands': {
    usage: 'discord commands',
    summary: "Print the JSON of the four Discord slash commands, to register with Discord's API",
    run: (stdout) => {
      stdout.write(`${JSON.stringify(SLASH_COMMANDS, null, 2)}\n`);
      return EXIT.ok;
    },
  },
};

const HELP = `sdapi: the Script Distribution Developer API from the command line

Usage: sdapi <command> [options]

Commands:
${[...Object.values(COMMANDS), ...Object.values(OFFLINE_COMMANDS)]
  // A usage longer than its column gets its summary on the next line, so the two never run together.
  .map((command) =>
    command.usage.length < 44 ? `  ${command.usage.padEnd(44)}${command.summary}` : `  ${command.usage}\n  ${''.padEnd(44)}${command.summary}`,
  )
  .join('\n')}

Options:
  --base-url URL   API base URL, the stack's ServiceUrl output (or SDAPI_BASE_URL)
  --token TOKEN    API token (or SDAPI_TOKEN; prefer the variable, flags show in ps)
  --project ID     Project id (or SDAPI_PROJECT)
  --json           Print JSON instead of tables
  --verbose        Trace each request on stderr (never the token)
  -y, --yes        leak: revoke without asking
  --blacklist      leak: also blacklist the machines and Discord ids of the revoked keys, without asking
  -h, --help       Show this help (or: sdapi help)

Settings not given by flag or variable come from ${LOCAL_STACK_FILE}, which npm start writes.

Exit codes: 0 done; 1 the API or the network failed; 2 wrong command line or settings;
3 leak found no valid watermark; 4 leak was not confirmed.
`;

/** Run one sdapi command line; resolves to the exit code. Never throws. */
export async function runSdapi(argv: string[], io: CliIo): Promise<number> {
  const redactor = new Redactor();
  redactor.add(io.env.SDAPI_TOKEN);
  const stdout = redactor.wrap(io.stdout);
  const stderr = redactor.wrap(io.stderr);
  try {
    const { values: options, positionals } = parseCommandLine(argv);
    redactor.add(options.token);
    // `sdapi help` as the dashboard CLI has it, besides --help.
    const help = options.help || (positionals.length === 1 && positionals[0] === 'help');
    if (help || positionals.length === 0) {
      (help ? stdout : stderr).write(HELP);
      return help ? EXIT.ok : EXIT.usage;
    }
    const offline = OFFLINE_COMMANDS[positionals.join(' ')];
    if (offline) {
      const given = Object.keys(options).filter((option) => option !== 'json');
      if (given.length > 0) throw new UsageError(`--${given[0]} does not apply to "${positionals.join(' ')}"`);
      return offline.run(stdout);
    }
    const { name, command, args } = findCommand(positionals);
    for (const option of Object.keys(options) as OptionName[]) {
      if (!GLOBAL_OPTIONS.includes(option) && !command.options.includes(option)) throw new UsageError(`--${option} does not apply to "${name}"`);
    }
    const config = resolveConfig({ baseUrl: options['base-url'], token: options.token, project: options.project }, io.env, io.cwd);
    redactor.add(config.token);
    if (options.verbose) for (const source of config.sources) stderr.write(`sdapi: ${source}\n`);
    const client = new ApiClient(config, {
      fetch: io.fetch,
      sleep: io.sleep,
      trace: options.verbose ? (line) => stderr.write(`sdapi: ${line}\n`) : undefined,
      onRateLimited: (wait, attempt, max) => {
        clearLine(stderr);
        stderr.write(`sdapi: rate limited (429); waiting ${wait} s before attempt ${attempt + 1} of ${max}\n`);
      },
    });
    const print: CommandContext['print'] = (value, human) => stdout.write(options.json ? `${JSON.stringify(value, null, 2)}\n` : human(value));
    return await command.run({ client, config, options, args, stdout, stderr, io, print });
  } catch (error) {
    return report(error, stderr);
  }
}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // Node's messages name the option, never its value.
    throw new UsageError(error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error));
  }
}

function findCommand(positionals: string[]): { name: string; command: Command; args: string[] } {
  for (const words of [2, 1]) {
    const name = positionals.slice(0, words).join(' ');
    const command = COMMANDS[name];
    if (!command) continue;
    const args = positionals.slice(words);
    if (args.length !== command.args.length) {
      throw new UsageError(`"${name}" takes ${command.args.length === 0 ? 'no arguments' : command.args.join(' ')}: sdapi ${command.usage}`);
    }
    return { name, command, args };
  }
  throw new UsageError(`Unknown command "${positionals.join(' ')}"; run sdapi --help for the list`);
}

async function listKeys({ client, options, stderr, print }: CommandContext): Promise<number> {
  if (options.all) {
    if (options.limit !== undefined || options.offset !== undefined) throw new UsageError('--all pages through every key; drop --limit and --offset');
    const progress = progressBar(stderr, 'keys');
    const result = await client.allKeys((fetched, total) => progress.update(fetched, total)).finally(() => progress.done());
    print(result, ({ keys }) => {
      const active = keys.filter((key) => key.revoked === 0).length;
      return `${keysTable(keys)}${plural(keys.length, 'key')}: ${active} active, ${keys.length - active} revoked.\n`;
    });
    return EXIT.ok;
  }
  const limit = wholeNumber('--limit', options.limit, KEYS_PAGE.defaultLimit, 1, KEYS_PAGE.maxLimit);
  const offset = wholeNumber('--offset', options.offset, KEYS_PAGE.defaultOffset, 0, KEYS_PAGE.maxOffset);
  print(await client.listKeys({ limit, offset }), ({ keys, total }) => {
    const shown =
      keys.length === 0 ? `No keys at offset ${offset} (${plural(total, 'key')} in all).` : `Keys ${offset + 1}-${offset + keys.length} of ${total}.`;
    const next = offset + keys.length < total && keys.length > 0 ? ` Next page: --offset ${offset + keys.length}, or --all for every key.` : '';
    return `${keys.length === 0 ? '' : keysTable(keys)}${shown}${next}\n`;
  });
  return EXIT.ok;
}

/**
 * `keys issue`: the flags become the body as the API takes it (numbers where it wants numbers), checked here with
 * the API's own schema so a mistake is a usage error before any request. The raw values are printed this once.
 */
async function issueKeys({ client, options, print }: CommandContext): Promise<number> {
  const numeric = (value: string | undefined) => (value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : value);
  const body = Object.fromEntries(
    Object.entries({
      count: numeric(options.count),
      duration: numeric(options.duration),
      max_uses: numeric(options['max-uses']),
      max_fingerprints: numeric(options['max-fingerprints']),
      watermark: options.watermark,
      note: options.note,
      discord_id: options['discord-id'],
      order_id: options['order-id'],
    }).filter(([, value]) => value !== undefined),
  );
  const checked = IssueKeysBody.safeParse(body);
  if (!checked.success) throw new UsageError(`--${(checked.error.issues[0]?.message ?? 'invalid flags').replaceAll('_', '-')}`);
  print(
    await client.issueKeys(body),
    ({ keys }) => `${issuedKeysTable(keys)}${plural(keys.length, 'key')} issued. The KEY column is shown this once: hand each to its buyer now.\n`,
  );
  return EXIT.ok;
}

/** A duration flag as the API takes it: whole seconds as a number, a preset or `lifetime` as is; checked here first. */
function durationFlag(flag: string, value: string): string | number {
  const duration = /^\d{1,15}$/.test(value) ? Number(value) : value;
  if (parseDuration(duration) === undefined) throw new UsageError(`${flag} must be 1d, 7d, 30d, 90d, 365d, lifetime or whole seconds from 60 to 315360000`);
  return duration;
}

/** `keys ban`: `--for` is counted from now here, so the API gets the `until` it takes. */
async function banKey({ client, args: [keyId], options, print, io }: CommandContext<readonly ['KEY_ID']>): Promise<number> {
  if (options.until !== undefined && options.for !== undefined) throw new UsageError('give --until or --for, not both');
  let until: number | undefined;
  if (options.until !== undefined) until = wholeNumber('--until', options.until, 0, 0, Number.MAX_SAFE_INTEGER);
  if (options.for !== undefined) {
    const duration = durationFlag('--for', options.for);
    if (duration === 'lifetime') throw new UsageError('--for takes a duration; for a ban until unbanned leave out --until and --for');
    until = Math.floor((io.now ?? Date.now)() / 1000) + (parseDuration(duration) as number);
  }
  const body = { key_id: keyId, reason: options.reason, ...(until === undefined ? {} : { until }) };
  const checked = BanKeyBody.safeParse(body);
  if (!checked.success) throw new UsageError(`--${(checked.error.issues[0]?.message ?? 'invalid flags').replaceAll('_', '-')}`);
  print(await client.banKey(checked.data), () => `Banned key ${keyId}${until === undefined ? ' until unbanned' : ` until ${dateTime(until)}`}.\n`);
  return EXIT.ok;
}

/** `keys edit`: each flag given becomes a field of the PATCH; `none` sends null, which clears it. */
async function editKey({ client, args: [keyId], options, print }: CommandContext<readonly ['KEY_ID']>): Promise<number> {
  const value = (flag: string | undefined, numeric: boolean) => {
    if (flag === undefined) return undefined;
    if (flag === 'none') return null;
    return numeric && /^\d{1,15}$/.test(flag) ? Number(flag) : flag;
  };
  const body = Object.fromEntries(
    Object.entries({
      note: value(options.note, false),
      discord_id: value(options['discord-id'], false),
      max_uses: value(options['max-uses'], true),
      max_fingerprints: value(options['max-fingerprints'], true),
    }).filter(([, field]) => field !== undefined),
  );
  const checked = UpdateKeyBody.safeParse(body);
  if (!checked.success) {
    const message =
      Object.keys(body).length === 0
        ? 'keys edit needs at least one of --note, --discord-id, --max-uses, --max-fingerprints'
        : checked.error.issues[0]?.message;
    throw new UsageError(Object.keys(body).length === 0 ? (message ?? '') : `--${(message ?? 'invalid flags').replaceAll('_', '-')}`);
  }
  print(await client.editKey(keyId, checked.data), ({ key }) => keyDetailText(key));
  return EXIT.ok;
}

/** `stats`: the flags are the API's query parameters, checked with its own schema before any request. */
async function stats({ client, options, print }: CommandContext): Promise<number> {
  const query = Object.fromEntries(
    Object.entries({ granularity: options.granularity, by: options.by, from: options.from, to: options.to }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  const checked = StatsQuery.safeParse(query);
  if (!checked.success) throw new UsageError(`--${checked.error.issues[0]?.message ?? 'invalid flags'}`);
  print(await client.stats(query), statsTable);
  return EXIT.ok;
}

function wholeNumber(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const number = /^\d{1,15}$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= min && number <= max)) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}`);
  return number;
}

/** Erase a progress bar, if one is drawn, before a message takes the line. */
function clearLine(output: Output): void {
  if (output.isTTY) output.redraw?.('');
}

function report(error: unknown, stderr: Output): number {
  clearLine(stderr);
  if (error instanceof UsageError) {
    stderr.write(`sdapi: ${error.message}\n`);
    return EXIT.usage;
  }
  if (error instanceof ApiFailure) {
    const status = error.status === undefined ? '' : `HTTP ${error.status}, `;
    stderr.write(`sdapi: ${error.message} (${status}${error.request})\n`);
    return EXIT.apiError;
  }
  stderr.write(`sdapi: unexpected failure: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT.apiError;
}
