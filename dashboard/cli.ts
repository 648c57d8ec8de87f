import { ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { isMainModule } from '#local/main-module';
import { oldNodeProblem } from '#local/node-version';
import { DEFAULT_STATE_FILE } from '#local/state-file';
import { UsageError } from './args';
import { COMMANDS, findCommand } from './commands';
import { CommandError, locateTable, oneLine, openContext, readStackOutputs, type TableLocation } from './context';

/**
 * `npm run -s dashboard -- <command> [flags]`: one JSON object on stdout; on bad input one line on stderr,
 * nothing written, exit 2 for a bad command line and 1 for anything else (unknown owner, no table).
 */
export interface CliIo {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stateFile?: string;
  /** process.versions.node unless a test passes another. */
  nodeVersion?: string;
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const HELP_FLAGS = new Set(['help', '--help', '-h']);

export async function runCli(io: CliIo): Promise<number> {
  // Before anything else: on an older Node the AWS SDK warns and the Lambda code is not what runs in AWS.
  const oldNode = oldNodeProblem('The dashboard CLI', io.nodeVersion ?? process.versions.node);
  if (oldNode) {
    io.stderr(`${oldNode}\n`);
    return EXIT.failed;
  }
  if (io.argv.length === 0 || HELP_FLAGS.has(io.argv[0] ?? '')) {
    const usage = Object.values(COMMANDS).map((command) => `  ${command.usage}`);
    (io.argv.length === 0 ? io.stderr : io.stdout)(`${['usage: npm run -s dashboard -- <command> [flags]', ...usage].join('\n')}\n`);
    return io.argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  let location: TableLocation | undefined;
  try {
    const { entry, rest } = findCommand(io.argv);
    const run = entry.prepare(rest);
    location = await locateTable({ env: io.env, stateFile: io.stateFile ?? DEFAULT_STATE_FILE, readStackOutputs });
    const { context, close } = openContext(location);
    try {
      io.stdout(`${JSON.stringify(await run({ ...context, warn: (line) => io.stderr(`${line}\n`) }))}\n`);
    } finally {
      close();
    }
    return EXIT.ok;
  } catch (error) {
    io.stderr(`${describeFailure(error, location)}\n`);
    return error instanceof UsageError ? EXIT.usage : EXIT.failed;
  }
}

/** One line a person can act on, for any failure. */
export function describeFailure(error: unknown, location: TableLocation | undefined): string {
  if (error instanceof UsageError || error instanceof CommandError) return oneLine(error);
  const where = location?.kind === 'local' ? `DynamoDB at ${location.endpoint}` : 'DynamoDB in AWS';
  if (isConnectionRefused(error)) return `Cannot reach ${where}: is the local stack running (npm start)?`;
  if (error instanceof ResourceNotFoundException) return `Table ${location?.tableName ?? '(unknown)'} not found in ${where}`;
  return oneLine(error);
}

function isConnectionRefused(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ECONNREFUSED' || (typeof message === 'string' && message.includes('ECONNREFUSED'));
}

if (isMainModule(import.meta.url)) {
  process.exitCode = await runCli({
    argv: process.argv.slice(2),
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}
