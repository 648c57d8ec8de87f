import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_STATE_FILE } from '#local/state-file';
import { requestSync } from './http-sync';
import { type HttpReply, type HttpRequest, runInRoblox } from './roblox';

/**
 * `npm run loader -- --key KEY [--fingerprint ID] [--state-file PATH]`: runs examples/roblox-loader.luau, the stub
 * buyers run, in the fengari Lua VM against the running local stack (found through .local/stack.json), and prints
 * what the buyer would see: the served script's output, or the sentence that stopped it.
 */

export const STUB_LOADER = fileURLToPath(new URL('../examples/roblox-loader.luau', import.meta.url));

export interface StubRun {
  /** Lines the script printed. */
  output: string[];
  /** The message that stopped the stub (a refusal sentence, an unreachable server), if one did. */
  error?: string;
  /** The status of each request the stub sent. */
  statuses: number[];
  /** The seconds of each `task.wait` before the stub asked again. */
  waits: number[];
}

/** The stub with its STUB_SETTINGS lines set, as a publisher edits them before handing it out. */
export function configuredStub(source: string, settings: Record<string, string>): string {
  let configured = source;
  for (const [name, value] of Object.entries(settings)) {
    const line = new RegExp(`^(\\t${name} = ).*,$`, 'm');
    if (!line.test(configured)) throw new Error(`The stub loader has no STUB_SETTINGS line for ${name}`);
    configured = configured.replace(line, `$1${JSON.stringify(value)},`);
  }
  return configured;
}

/**
 * One run of the stub as a buyer's executor would run it, against `baseUrl`. `files` are the executor's files
 * (the stub keeps its copy of the script there), so a second run with the same map sends If-None-Match.
 */
export async function runStubLoader(options: {
  baseUrl: string;
  projectId: string;
  key: string;
  machineId: string;
  files?: Map<string, string>;
  request?: (request: HttpRequest) => HttpReply;
  /** What a wait does; by default the run really waits (the stub's Retry-After, a few seconds at most). */
  wait?: (seconds: number) => void;
}): Promise<StubRun> {
  const source = configuredStub(await readFile(STUB_LOADER, 'utf8'), { api_base_url: options.baseUrl, project_id: options.projectId });
  const run: StubRun = { output: [], statuses: [], waits: [] };
  const send = options.request ?? requestSync;
  const result = runInRoblox(source, 'roblox-loader.luau', {
    key: options.key,
    machineId: options.machineId,
    executor: 'npm run loader',
    files: options.files,
    print: (line) => run.output.push(line),
    wait: (seconds) => {
      run.waits.push(seconds);
      (options.wait ?? sleepSync)(seconds);
    },
    request: (request) => {
      const reply = send(request);
      if (!('raise' in reply)) run.statuses.push(reply.StatusCode);
      return reply;
    },
  });
  if (!result.ok) run.error = result.error;
  return run;
}

/** The VM's calls are synchronous: a real wait blocks this thread, as `task.wait` blocks the buyer's script. */
function sleepSync(seconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
}

const USAGE = 'usage: npm run loader -- --key KEY [--fingerprint MACHINE_ID] [--state-file PATH]';

export function parseLoaderArgs(argv: readonly string[]): { key: string; machineId: string; stateFile: string } {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1];
    if (!['--key', '--fingerprint', '--state-file'].includes(flag)) throw new Error(`Unexpected argument "${flag}"; ${USAGE}`);
    if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value; ${USAGE}`);
    values.set(flag, value);
  }
  const key = values.get('--key');
  if (!key) throw new Error(`--key is required: the demo key is "demoKey" in .local/stack.json; ${USAGE}`);
  return { key, machineId: values.get('--fingerprint') ?? hostname(), stateFile: resolve(values.get('--state-file') ?? DEFAULT_STATE_FILE) };
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parseLoaderArgs>;
  try {
    args = parseLoaderArgs(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  let stack: { baseUrl: string; projectId: string };
  try {
    stack = JSON.parse(await readFile(args.stateFile, 'utf8')) as { baseUrl: string; projectId: string };
  } catch {
    console.error(`No running local stack (${args.stateFile} not found): run npm start first`);
    return 1;
  }
  // The executor's files persist between runs, as an executor's workspace folder does: a repeat run is a 304.
  const filesPath = join(dirname(args.stateFile), 'loader-files.json');
  const files = new Map<string, string>(Object.entries(await readFile(filesPath, 'utf8').then((text) => JSON.parse(text) as Record<string, string>, () => ({}))));
  const run = await runStubLoader({ baseUrl: stack.baseUrl, projectId: stack.projectId, key: args.key, machineId: args.machineId, files });
  await writeFile(filesPath, JSON.stringify(Object.fromEntries(files)), { mode: 0o600 });
  for (const line of run.output) console.log(line);
  if (run.error) console.log(run.error);
  console.error(`(stub loader: HTTP ${run.statuses.join(', ') || 'none'}${run.statuses.includes(304) ? ', the kept copy ran' : ''})`);
  return run.error ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = await main();
