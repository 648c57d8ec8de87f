import { UsageError, usageLine } from './args';
import { audited, DASHBOARD_AUDITS } from './audited';
import { type Command, parseCommand } from './command';
import { auditList } from './commands/audit';
import { discordLink, discordSimulate, discordUnlink } from './commands/discord';
import { freeSet, freeShow } from './commands/free';
import { keysIssue } from './commands/keys';
import { ownerCreate } from './commands/owner';
import { projectCreate } from './commands/projects';
import { shopAdd, shopList, shopMap, shopRemove, shopSimulate } from './commands/shops';
import { detectDaily, telemetryExecution, telemetryValidation } from './commands/telemetry';
import { tokenAudit, tokenCreate, tokenList, tokenMigrate, tokenRevoke } from './commands/tokens';
import { versionsUpload } from './commands/versions';
import { webhooksAdd } from './commands/webhooks';
import type { DashboardContext } from './context';

/**
 * The CLI's table of commands. Each command lives by its noun in `commands/` (the Command shape is command.ts);
 * a new command is one more line in COMMANDS.
 */

/** A command with its input type hidden, so commands of any shape share one table. */
export interface CommandEntry {
  usage: string;
  /** Checks the arguments at once (throws UsageError) and returns the run, which needs a table. */
  prepare(argv: readonly string[]): (context: DashboardContext) => Promise<object>;
}

function entry<Input, Result extends object>(command: Command<Input, Result>): CommandEntry {
  return {
    usage: usageLine(command.name, command.flags),
    prepare: (argv) => {
      const input = parseCommand(command, argv);
      return (context) => command.run(context, input);
    },
  };
}

/** Every command of the CLI by name, in the order the usage lists them. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  [ownerCreate.name]: entry(ownerCreate),
  [tokenCreate.name]: entry(tokenCreate),
  [projectCreate.name]: entry(projectCreate),
  // The dashboard's writes are audited with the identity that ran them (dashboard/audited.ts).
  [keysIssue.name]: entry(audited(keysIssue, DASHBOARD_AUDITS.keysIssue)),
  [versionsUpload.name]: entry(audited(versionsUpload, DASHBOARD_AUDITS.versionsUpload)),
  [webhooksAdd.name]: entry(audited(webhooksAdd, DASHBOARD_AUDITS.webhooksAdd)),
  [tokenList.name]: entry(tokenList),
  [tokenRevoke.name]: entry(tokenRevoke),
  [tokenAudit.name]: entry(tokenAudit),
  [tokenMigrate.name]: entry(audited(tokenMigrate, DASHBOARD_AUDITS.tokenMigrate)),
  [auditList.name]: entry(auditList),
  [telemetryExecution.name]: entry(telemetryExecution),
  [telemetryValidation.name]: entry(telemetryValidation),
  [detectDaily.name]: entry(detectDaily),
  [discordLink.name]: entry(audited(discordLink, DASHBOARD_AUDITS.discordLink)),
  [discordUnlink.name]: entry(audited(discordUnlink, DASHBOARD_AUDITS.discordUnlink)),
  [discordSimulate.name]: entry(discordSimulate),
  [shopAdd.name]: entry(audited(shopAdd, DASHBOARD_AUDITS.shopAdd)),
  [shopList.name]: entry(shopList),
  [shopMap.name]: entry(audited(shopMap, DASHBOARD_AUDITS.shopMap)),
  [shopRemove.name]: entry(audited(shopRemove, DASHBOARD_AUDITS.shopRemove)),
  [shopSimulate.name]: entry(shopSimulate),
  [freeSet.name]: entry(freeSet),
  [freeShow.name]: entry(freeShow),
};

/** The command named by the leading words of argv (the longest name that matches) and the rest. */
export function findCommand(
  argv: readonly string[],
  commands: Readonly<Record<string, CommandEntry>> = COMMANDS,
): { entry: CommandEntry; rest: readonly string[] } {
  const firstFlag = argv.findIndex((arg) => arg.startsWith('-'));
  const words = firstFlag === -1 ? argv : argv.slice(0, firstFlag);
  for (let n = words.length; n > 0; n--) {
    const name = words.slice(0, n).join(' ');
    const found = Object.hasOwn(commands, name) ? commands[name] : undefined;
    if (found) return { entry: found, rest: argv.slice(n) };
  }
  const given = words.join(' ');
  throw new UsageError(`${given ? `Unknown command "${given}"` : 'No command given'}; commands: ${Object.keys(commands).join(', ')}`);
}
