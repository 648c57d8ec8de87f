/**
 * Command-line flags of the dashboard CLI: `--name value`, `--name=value` and switches like `--disabled`.
 * Parsing is pure and strict (unknown, repeated or valueless flags are errors), and every error is one line
 * that says what to fix.
 */

/** Bad input on the command line: exit code 2, the message on stderr, nothing written. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface FlagSpec {
  /** `value` flags take one value (the default); `switch` flags take none; `list` flags take one value each time given. */
  kind?: 'value' | 'switch' | 'list';
  required?: boolean;
  /** How the value reads in the usage line, e.g. `ID`, `N`, `HEX16`. */
  placeholder?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** `keys issue --project ID [--count N] [--disabled]`, from the command's own flag table. */
export function usageLine(command: string, specs: FlagSpecs): string {
  const parts = Object.entries(specs).map(([name, spec]) => {
    const flag = spec.kind === 'switch' ? `--${name}` : `--${name} ${spec.placeholder ?? 'VALUE'}`;
    const shown = spec.kind === 'list' ? `${flag} [${flag} ...]` : flag;
    return spec.required ? shown : `[${shown}]`;
  });
  return [command, ...parts].join(' ');
}

/** The flags given on the command line, checked against the command's flag table. */
export class Flags {
  constructor(
    private readonly command: string,
    private readonly values: ReadonlyMap<string, string | true>,
    private readonly lists: ReadonlyMap<string, readonly string[]> = new Map(),
  ) {}

  /** Every value of a `list` flag, in the order given. */
  all(name: string): readonly string[] {
    return this.lists.get(name) ?? [];
  }

  /** The value of a required flag (parsing already made sure it is there). */
  required(name: string): string {
    const value = this.values.get(name);
    if (typeof value !== 'string') throw new UsageError(`"${this.command}" needs --${name}`);
    return value;
  }

  optional(name: string): string | undefined {
    const value = this.values.get(name);
    return typeof value === 'string' ? value : undefined;
  }

  switch(name: string): boolean {
    return this.values.get(name) === true;
  }
}

export function parseFlags(command: string, argv: readonly string[], specs: FlagSpecs): Flags {
  const usage = `usage: ${usageLine(command, specs)}`;
  const values = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--') || arg === '--') throw new UsageError(`Unexpected argument "${arg}" for "${command}"; ${usage}`);
    const equals = arg.indexOf('=');
    const name = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
    const spec = specs[name];
    if (!Object.hasOwn(specs, name) || !spec) throw new UsageError(`Unknown flag --${name} for "${command}"; ${usage}`);
    if (values.has(name) && spec.kind !== 'list') throw new UsageError(`--${name} is given more than once; give it once`);
    if (spec.kind === 'switch') {
      if (equals !== -1) throw new UsageError(`--${name} is a switch and takes no value`);
      values.set(name, true);
      continue;
    }
    let value: string;
    if (equals !== -1) value = arg.slice(equals + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        throw new UsageError(`--${name} needs a value (${spec.placeholder ?? 'VALUE'}); a value starting with -- goes as --${name}=VALUE`);
      }
      value = next;
      i++;
    }
    values.set(name, value);
    if (spec.kind === 'list') lists.set(name, [...(lists.get(name) ?? []), value]);
  }
  const missing = Object.entries(specs).filter(([name, spec]) => spec.required && !values.has(name));
  if (missing.length > 0) {
    throw new UsageError(`"${command}" needs ${missing.map(([name]) => `--${name}`).join(' and ')}; ${usage}`);
  }
  return new Flags(command, values, lists);
}

/** A whole number written in plain decimal digits, so `1e3`, `0x10`, `1.0` and ` 7` are refused. */
export function wholeNumber(flag: string, text: string, range: { min: number; max: number }): number {
  const message = `--${flag} must be a whole number from ${range.min} to ${range.max}; got "${text}"`;
  if (!/^-?[0-9]{1,16}$/.test(text)) throw new UsageError(message);
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) throw new UsageError(message);
  return value;
}

export function oneOf<T extends string>(flag: string, text: string, allowed: readonly T[]): T {
  const found = allowed.find((candidate) => candidate === text);
  if (found === undefined) throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}; got "${text}"`);
  return found;
}
