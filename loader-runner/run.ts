import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configuredStub } from '#domain/stub-loader';
import { stubUrlOf } from '#http/public-routes';
import { isMainModule } from '#local/main-module';
import { requestSync } from './http-sync';
import { type HttpReply, type HttpRequest, runInRoblox } from './roblox';

/**
 * `npm run loader -- --key KEY [--project ID] [--base-url URL] [--fingerprint ID] [--state-file PATH]`: runs the
 * buyer's two lines (`script_key = "KEY"`, then `loadstring(game:HttpGet("<hosted stub URL>"))()`) in the fengari Lua
 * VM: the hosted stub (examples/roblox-loader.luau with the project and base URL filled in) comes from the service,
 * and the run prints what the buyer would see: the served script's output, or the sentence that stopped it.
 * --project and --base-url name the project and the loader routes (a publisher's project other than the demo's,
 * another API); what they leave out comes from the running local stack's .local/stack.json in the current folder,
 * as sdapi finds it (npm run runs in the repository's folder).
 */

export const STUB_LOADER = fileURLToPath(new URL('../examples/roblox-loader.luau', import.meta.url));

export interface StubRun {
  /** Lines the script printed. */
  output: string[];
  /** The message that stopped the stub (a refusal sentence, an unreachable server), if one did. */
  error?: string;
  /** The status of each request the stub sent (not the GET of the hosted stub itself). */
  statuses: number[];
  /** The seconds of each `task.wait` before the stub asked again. */
  waits: number[];
}

/**
 * The two lines a buyer runs (DESIGN.md, "Buyers help themselves in Discord"): the key as the global `script_key`,
 * then the hosted stub of `GET /v1/loader/stub/{project_id}`, fetched with game:HttpGet and run.
 */
export const buyerLines = (stubUrl: string, key: string): string =>
  `script_key = ${JSON.stringify(key)}\nloadstring(game:HttpGet(${JSON.stringify(stubUrl)}))()\n`;

/**
 * One run of the stub as a buyer's executor would run it, against `baseUrl`. `files` are the executor's files
 * (the stub keeps its copy of the script there), so a second run with the same map sends If-None-Match. With
 * `hosted`, the buyer's two lines run instead: the stub comes from the service (its hosted stub route), the key
 * from the global `script_key`; otherwise the stub file as a publisher configures it, the key from getgenv().
 */
export async function runStubLoader(options: {
  hosted?: boolean;
  baseUrl: string;
  projectId: string;
  key: string;
  machineId: string;
  files?: Map<string, string>;
  /** The stub's keep_copy setting: keep the script in `files` and ask with If-None-Match. */
  keepCopy?: boolean;
  request?: (request: HttpRequest) => HttpReply;
  /** What a wait does; by default the run really waits (the stub's Retry-After, a few seconds at most). */
  wait?: (seconds: number) => void;
  /** What `os.clock()` answers, in seconds; by default the VM's. */
  clock?: () => number;
  /** Runs in one executor session (getgenv() lasts between them); 1 by default. */
  runs?: number;
}): Promise<StubRun> {
  const source = options.hosted
    ? buyerLines(stubUrlOf(options.baseUrl, options.projectId), options.key)
    : configuredStub(await readFile(STUB_LOADER, 'utf8'), {
        api_base_url: options.baseUrl,
        project_id: options.projectId,
        keep_copy: options.keepCopy ?? false,
      });
  const run: StubRun = { output: [], statuses: [], waits: [] };
  const send = options.request ?? requestSync;
  const result = runInRoblox(
    source,
    options.hosted ? 'buyer.lua' : 'roblox-loader.luau',
    {
      ...(options.hosted ? {} : { key: options.key }),
      machineId: options.machineId,
      executor: 'npm run loader',
      files: options.files,
      ...(options.clock ? { clock: options.clock } : {}),
      print: (line) => run.output.push(line),
      wait: (seconds) => {
        run.waits.push(seconds);
        (options.wait ?? sleepSync)(seconds);
      },
      request: (request) => {
        const reply = send(request);
        // The stub's own requests: game:HttpGet fetching the hosted stub is the buyer's line, not the stub's.
        if (!('raise' in reply) && request.Method !== 'GET') run.statuses.push(reply.StatusCode);
        return reply;
      },
    },
    options.runs,
  );
  if (!result.ok) run.error = result.error;
  return run;
}

/** The VM's calls are synchronous: a real wait blocks this thread, as `task.wait` blocks the buyer's script. */
function sleepSync(seconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
}

const USAGE = 'usage: npm run loader -- --key KEY [--project ID] [--base-url URL] [--fingerprint MACHINE_ID] [--state-file PATH]';

const LOCAL_STACK_FILE = join('.local', 'stack.json');

export interface LoaderArgs {
  key: string;
  machineId: string;
  stateFile: string;
  /** Set only when given: otherwise the local stack's. */
  projectId?: string;
  baseUrl?: string;
}

export function parseLoaderArgs(argv: readonly string[], cwd: string = process.cwd()): LoaderArgs {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1];
    if (!['--key', '--project', '--base-url', '--fingerprint', '--state-file'].includes(flag)) throw new Error(`Unexpected argument "${flag}"; ${USAGE}`);
    if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value; ${USAGE}`);
    values.set(flag, value);
  }
  const key = values.get('--key');
  if (!key) throw new Error(`--key is required: the demo key is "demoKey" in .local/stack.json; ${USAGE}`);
  const baseUrl = values.get('--base-url');
  if (baseUrl !== undefined && !/^https?:\/\/[^/]/.test(baseUrl))
    throw new Error(`--base-url "${baseUrl}" is not an http(s) URL: expected something like http://127.0.0.1:3000; ${USAGE}`);
  const projectId = values.get('--project');
  return {
    key,
    machineId: values.get('--fingerprint') ?? hostname(),
    stateFile: resolve(cwd, values.get('--state-file') ?? LOCAL_STACK_FILE),
    ...(projectId === undefined ? {} : { projectId }),
    ...(baseUrl === undefined ? {} : { baseUrl }),
  };
}

/** Where the stub sends its fetch: the flags first, then the local stack's state file for what they leave out. */
export function stubTarget(args: LoaderArgs, stack: unknown): { baseUrl: string; projectId: string } | string {
  const state = typeof stack === 'object' && stack !== null ? (stack as Record<string, unknown>) : {};
  const baseUrl = args.baseUrl ?? state.baseUrl;
  const projectId = args.projectId ?? state.projectId;
  if (typeof baseUrl === 'string' && typeof projectId === 'string') return { baseUrl, projectId };
  return `No running local stack (${args.stateFile} not found): run npm start first, or pass both --base-url and --project`;
}

async function main(): Promise<number> {
  let args: LoaderArgs;
  try {
    args = parseLoaderArgs(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const needsStack = args.baseUrl === undefined || args.projectId === undefined;
  const stack = needsStack
    ? await readFile(args.stateFile, 'utf8')
        .then((text): unknown => JSON.parse(text))
        .catch(() => undefined)
    : undefined;
  const target = stubTarget(args, stack);
  if (typeof target === 'string') {
    console.error(target);
    return 1;
  }
  // The executor's files persist between runs, as an executor's workspace folder does, and the demo turns keep_copy
  // on: a repeat run is a 304 and runs the kept copy once it hashes to the server's X-Script-SHA256.
  const filesPath = join(dirname(args.stateFile), 'loader-files.json');
  const files = new Map<string, string>(
    Object.entries(
      await readFile(filesPath, 'utf8').then(
        (text) => JSON.parse(text) as Record<string, string>,
        () => ({}),
      ),
    ),
  );
  const run = await runStubLoader({ ...target, hosted: true, key: args.key, machineId: args.machineId, files });
  await mkdir(dirname(filesPath), { recursive: true });
  await writeFile(filesPath, JSON.stringify(Object.fromEntries(files)), { mode: 0o600 });
  for (const line of run.output) console.log(line);
  if (run.error) console.log(run.error);
  console.error(`(stub loader: HTTP ${run.statuses.join(', ') || 'none'}${run.statuses.includes(304) ? ', the kept copy ran' : ''})`);
  return run.error ? 1 : 0;
}

if (isMainModule(import.meta.url)) process.exitCode = await main();
