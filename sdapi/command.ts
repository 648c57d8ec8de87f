import type { ApiClient } from './client';
import type { ApiConfig } from './config';
import type { CliIo, Output } from './io';

/** Every option sdapi parses; GLOBAL_OPTIONS (main.ts) and each command say which apply where. */
export const OPTIONS = {
  'base-url': { type: 'string' },
  token: { type: 'string' },
  project: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  all: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  count: { type: 'string' },
  duration: { type: 'string' },
  'max-uses': { type: 'string' },
  'max-fingerprints': { type: 'string' },
  watermark: { type: 'string' },
  note: { type: 'string' },
  'discord-id': { type: 'string' },
  'order-id': { type: 'string' },
  reason: { type: 'string' },
  until: { type: 'string' },
  for: { type: 'string' },
  granularity: { type: 'string' },
  by: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  fingerprint: { type: 'string' },
  email: { type: 'string' },
  'email-sha256': { type: 'string' },
  blacklist: { type: 'boolean' },
} as const;

export type OptionName = keyof typeof OPTIONS;
type ParsedOptions = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean };

/** What a command runs with; `Args` are the names of its positional arguments (main.ts's findCommand counts them). */
export interface CommandContext<Args extends readonly string[] = readonly string[]> {
  client: ApiClient;
  config: ApiConfig;
  options: ParsedOptions;
  /** The command's positional arguments, one string for each name it declares. */
  args: { [Index in keyof Args]: string };
  stdout: Output;
  stderr: Output;
  io: CliIo;
  /** Print `value` as JSON for --json, else the text `human` renders; one of them, never both. */
  print<T>(value: T, human: (value: T) => string): void;
}

export interface Command<Args extends readonly string[] = readonly string[]> {
  usage: string;
  summary: string;
  args: Args;
  options: OptionName[];
  run(context: CommandContext<Args>): Promise<number>;
}

/** A command whose `run` sees exactly the arguments it declares (`args: ['KEY_ID']` gives `args: [keyId]`, a string). */
export const defineCommand = <const Args extends readonly string[]>(definition: Command<Args>): Command<Args> => definition;
