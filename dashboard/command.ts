import { type FlagSpecs, type Flags, parseFlags } from './args';
import type { DashboardContext } from './context';

/**
 * The dashboard's commands. Each is pure argument checking (`validate`: flags → input, throws UsageError)
 * then `run`: the reads that must pass (owner, project exist) and only then the writes, so bad input of
 * any kind writes nothing. Tests call `parseCommand` and `run` directly; cli.ts adds argv, stdout and exit.
 * The commands live by noun in `commands/`; `commands.ts` is the CLI's table of them.
 */
export interface Command<Input, Result extends object> {
  name: string;
  flags: FlagSpecs;
  validate(flags: Flags): Input;
  run(context: DashboardContext, input: Input): Promise<Result>;
}

export function parseCommand<Input>(command: Command<Input, object>, argv: readonly string[]): Input {
  return command.validate(parseFlags(command.name, argv, command.flags));
}
