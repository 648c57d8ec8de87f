import { createHash } from 'node:crypto';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCRIPT_ROUTE, stubUrlOf, VALIDATE_ROUTE } from '#http/public-routes';
import type { FetchReporter } from './dynamodb-local';
import { isMainModule } from './main-module';
import { oldNodeProblem } from './node-version';
import type { RequestLogEntry } from './server';
import { DEFAULT_PORT, type LocalStack, startLocalStack } from './stack';

/**
 * `npm start [-- --port N] [-- --persist [DIR]] [-- --state-file PATH]`: the local stack in the foreground.
 * Prints how to call it, logs each request, and stops cleanly (server, DynamoDB Local) on Ctrl+C, SIGTERM or SIGHUP.
 */

export const DEFAULT_PERSIST_DIR = fileURLToPath(new URL('../.local/dynamodb', import.meta.url));

export interface StartArgs {
  port: number;
  persistDir?: string;
  stateFile?: string;
  help: boolean;
}

const USAGE = 'usage: npm start -- [--port N] [--persist [DIR]] [--state-file PATH]   (PORT in the environment also sets the port)';

/** Flags, then PORT from the environment, then the defaults. Throws one-sentence errors. */
export function parseStartArgs(argv: readonly string[], env: NodeJS.ProcessEnv): StartArgs {
  const args: StartArgs = { port: DEFAULT_PORT, help: false };
  let portText = env.PORT;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const next = argv[i + 1];
    const hasValue = next !== undefined && !next.startsWith('--');
    if ((arg === '--port' || arg === '--state-file') && !hasValue) throw new Error(`${arg} needs a value; ${USAGE}`);
    if (arg === '--help' || arg === '-h') args.help = true;
    else if (arg === '--port') {
      portText = next;
      i++;
    } else if (arg === '--persist') {
      args.persistDir = hasValue ? resolve(next) : DEFAULT_PERSIST_DIR;
      if (hasValue) i++;
    } else if (arg === '--state-file' && next !== undefined) {
      args.stateFile = resolve(next);
      i++;
    } else throw new Error(`Unexpected argument "${arg}"; ${USAGE}`);
  }
  if (portText !== undefined) {
    const port = Number(portText);
    if (!/^[0-9]{1,5}$/.test(portText) || port < 1 || port > 65_535) throw new Error(`Port must be a number from 1 to 65535; got "${portText}"`);
    args.port = port;
  }
  return args;
}

/** What a developer needs to start calling the API, with curl lines ready to paste. */
export function banner(stack: LocalStack, persistDir: string | undefined): string {
  const auth = `-H 'Authorization: Bearer ${stack.token}'`;
  const project = `${stack.baseUrl}/v1/projects/${stack.projectId}`;
  const storage = persistDir ? `kept in ${relative(process.cwd(), persistDir) || '.'}` : 'in memory';
  return [
    '',
    'Script Distribution Developer API: local stack is up',
    '',
    `  Console     ${stack.consoleUrl}   (open it in a browser; sign in with the Token below)`,
    `  Base URL    ${stack.baseUrl}   (the front door, as ServiceUrl in AWS; paths start with /v1)`,
    `  Loader URL  ${stack.baseUrl}   (the same, as in AWS: the loaders' api_base_url is ServiceUrl)`,
    `  Token       ${stack.token}`,
    `  Project     ${stack.projectId}   ("Demo Script", Business plan, keys, 3 versions, 1 webhook)`,
    `  Inbox       ${stack.inboxUrl}   (the Discord embeds the webhook deliveries post)`,
    `  Key page    ${stack.baseUrl}/v1/free/${stack.projectId}?m=${'0'.repeat(64)}   (free keys behind the providers' local stand-ins)`,
    `  Docs        ${stack.baseUrl}/_local/docs`,
    `  DynamoDB    ${stack.dynamodbEndpoint}   table ${stack.tableName}, ${storage}`,
    `  Scripts     ${stack.s3Endpoint}   bucket ${stack.bucketName} (local S3), ${storage}`,
    `  Details in  ${relative(process.cwd(), stack.stateFile)}${stack.reusedDemo ? '   (demo from the persisted table)' : ''}`,
    '',
    'Try it:',
    `  curl -s ${auth} '${project}/keys?limit=5'`,
    `  curl -s ${auth} '${project}/versions'`,
    `  curl -s -X POST ${auth} -H 'Content-Type: application/json' -d '{"watermark":"${stack.sharedWatermark}"}' '${project}/keys/revoke-bulk'`,
    '',
    "A shop's delivery hook issues a key bound to one machine (repeat it: the same key, nothing issued):",
    `  curl -s -X POST ${auth} -H 'Content-Type: application/json' -d '{"order_id":"demo-order-1","max_fingerprints":1}' '${project}/keys'`,
    '',
    `A buyer's loader checks the demo key ${stack.demoKeyId} (no token; KEY_VALID until the key is revoked):`,
    `  curl -s -X POST -H 'Content-Type: application/json' -d '${JSON.stringify(demoCheck(stack))}' '${stack.baseUrl}${VALIDATE_ROUTE.path}'`,
    "The script the buyer's stub loader runs: the current version, stamped with the demo key's watermark:",
    `  curl -s -X POST -H 'Content-Type: application/json' -d '${JSON.stringify(demoCheck(stack))}' '${stack.baseUrl}${SCRIPT_ROUTE.path}'`,
    'Revoke the key, then both answer KEY_REVOKED (the script fetch with a 403):',
    `  curl -s -X POST ${auth} -H 'Content-Type: application/json' -d '{"key_id":"${stack.demoKeyId}"}' '${project}/keys/revoke'`,
    '',
    'Buyers run the hosted stub loader (script_key = "KEY" first); the demo project\'s Discord commands, signed like Discord signs them:',
    `  curl -s '${stubUrlOf(stack.baseUrl, stack.projectId)}' | head -3`,
    `  npm run -s dashboard -- discord simulate --project ${stack.projectId} --user 123456789012345678 --command redeem --key '${stack.demoKey}'`,
    '',
    'Dashboard: npm run -s dashboard -- help',
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

/** A loader check of the demo key, as the Roblox loader in examples/ would send it from one machine. */
export function demoCheck(stack: Pick<LocalStack, 'projectId' | 'demoKey'>) {
  return { project_id: stack.projectId, key: stack.demoKey, fingerprint: createHash('sha256').update('demo-machine').digest('hex'), executor: 'curl' };
}

const MB = 1024 * 1024;

/**
 * The first start's download on stderr: what is fetched, then progress, redrawn in place on a terminal and a line
 * per tenth elsewhere (a CI log gets ten lines, not thousands).
 */
export function fetchReporter(out: { write(text: string): unknown; isTTY?: boolean }): FetchReporter {
  let lastTenth = -1;
  let drawn = false;
  return {
    start: (what) => void out.write(`First start: fetching ${what}.\n`),
    progress(received, total) {
      const amount = total
        ? `${(received / MB).toFixed(1)} of ${(total / MB).toFixed(1)} MB (${Math.floor((received / total) * 100)}%)`
        : `${(received / MB).toFixed(1)} MB`;
      const done = total !== undefined && received >= total;
      if (out.isTTY) {
        out.write(`\r\x1b[K  downloading ${amount}${done ? '\n' : ''}`);
        drawn = !done;
        return;
      }
      const tenth = total ? Math.floor((received / total) * 10) : Math.floor(received / (5 * MB));
      if (tenth === lastTenth && !done) return;
      lastTenth = tenth;
      out.write(`  downloading ${amount}\n`);
    },
    note(line) {
      if (drawn) out.write('\n');
      drawn = false;
      out.write(`${line}\n`);
    },
  };
}

/** Webhook tokens are secrets even locally: the stand-in's paths carry them, the log line does not. */
export function loggedPath(path: string): string {
  return path.replace(/(\/webhooks\/[^/]+\/)[^/?]+/, '$1****');
}

/** The inbox page polls every second; its polls would drown the lines worth reading. */
const QUIET_PATHS = new Set(['/_local/inbox.json']);

function logRequest(entry: RequestLogEntry): void {
  if (QUIET_PATHS.has(entry.path)) return;
  const line = `${entry.method} ${loggedPath(entry.path)} ${entry.status} ${entry.durationMs} ms`;
  if (entry.failure === undefined) console.log(line);
  else console.error(`${line}: ${entry.failure instanceof Error ? (entry.failure.stack ?? entry.failure.message) : String(entry.failure)}`);
}

async function main(): Promise<void> {
  const oldNode = oldNodeProblem('The local stack', process.versions.node);
  if (oldNode) {
    console.error(oldNode);
    process.exit(1);
  }
  let args: StartArgs;
  try {
    args = parseStartArgs(process.argv.slice(2), process.env);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }

  let stack: LocalStack | undefined;
  let signalled = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (signalled) {
      console.error(`${signal} again: exiting without waiting for the stack to stop`);
      process.exit(1);
    }
    signalled = true;
    console.log(`\n${signal}: stopping the local stack`);
    try {
      await stack?.stop();
      process.exit(0);
    } catch (error) {
      console.error(`The local stack did not stop cleanly: ${firstSentence(error)}`);
      process.exit(1);
    }
  };
  // SIGHUP too: a closed terminal would otherwise end Node without stopping DynamoDB Local's Java.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));
  // `npm start` runs us through a shell (sh, cmd.exe) that dies of the SIGTERM npm passes on without passing it to us.
  whenParentExits(() => void shutdown('SIGTERM'));

  try {
    stack = await startLocalStack({
      port: args.port,
      persistDir: args.persistDir,
      stateFile: args.stateFile,
      discordApiBase: process.env.DISCORD_API_BASE || undefined,
      onRequest: logRequest,
      onFetch: fetchReporter(process.stderr),
    });
  } catch (error) {
    // A signal during start-up also kills DynamoDB Local's Java (same process group): not an error to report.
    if (signalled) process.exit(0);
    console.error(firstSentence(error));
    process.exit(1);
  }
  if (signalled) {
    await stack.stop();
    process.exit(0);
  }
  console.log(banner(stack, args.persistDir));
}

const PARENT_CHECK_INTERVAL_MS = 500;

/**
 * Calls `onExit` once the process that started this one is gone: on POSIX we are then adopted by another process
 * (our ppid changes); on Windows the parent's pid stops answering. Polled, because no platform signals it.
 */
export function whenParentExits(onExit: () => void, parentPid: number = process.ppid): NodeJS.Timeout {
  const timer = setInterval(() => {
    if (process.ppid === parentPid && isRunning(parentPid)) return;
    clearInterval(timer);
    onExit();
  }, PARENT_CHECK_INTERVAL_MS);
  timer.unref();
  return timer;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Start-up failures (no Java, no registry, port taken) are one sentence; the rest of a message is detail. */
function firstSentence(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}

if (isMainModule(import.meta.url)) await main();
