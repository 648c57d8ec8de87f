import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BenchTable, handlerEnv } from './dynamodb';
import { lambdaContext } from './fixtures';

/**
 * One cold start: a fresh Node process that imports a function's bundle and serves it one event, as a new Lambda
 * sandbox would, with the times it took.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ColdStartFunction {
  /** Entry relative to `lambdas/`, as ServiceFunction takes it. */
  entry: string;
  /** A realistic first event for run `run` (each run may need its own key, watermark, ...). */
  event: (run: number) => unknown;
  /** Throws when the first answer is not the expected success. */
  check: (answer: unknown) => void;
  /** The function's own environment in the stack (queue URLs, ...), beside TABLE_NAME. */
  env?: Record<string, string>;
}

export interface ColdStartSample {
  /** From the child's process start (`performance.timeOrigin`) to the handler's answer. */
  sinceProcessStartMs: number;
  /** Node's own start, before the first line of the child runs. */
  bootMs: number;
  importMs: number;
  firstRequestMs: number;
  /** User + system CPU the child used up to the answer: steadier than wall time on a busy machine. */
  cpuMs: number;
  /** From the parent's spawn() to the answer on the child's stdout. */
  spawnToAnswerMs: number;
}

const RESULT_MARKER = 'BENCH_COLD_START_RESULT ';

/**
 * The child: note the time since process start, import the bundle (external @aws-sdk resolves from the
 * project's node_modules, as the Lambda runtime provides it), serve one event, print the times.
 */
const CHILD_SOURCE = `
const startedAt = performance.now();
const { handler } = await import(process.env.BENCH_BUNDLE_URL);
const importedAt = performance.now();
// JSON carries no functions: the context gets back the one a handler calls (a bulk revoke's time budget).
const context = { ...JSON.parse(process.env.BENCH_CONTEXT), getRemainingTimeInMillis: () => 10000 };
const answer = await handler(JSON.parse(process.env.BENCH_EVENT), context);
const answeredAt = performance.now();
const cpu = process.cpuUsage();
process.stdout.write('\\n' + process.env.BENCH_MARKER + JSON.stringify({ answer, bootMs: startedAt, importMs: importedAt - startedAt, firstRequestMs: answeredAt - importedAt, sinceProcessStartMs: answeredAt, cpuMs: (cpu.user + cpu.system) / 1000 }));
process.exit(0);
`;

/**
 * Run `fn`'s bundle at `bundleFile` in a fresh process with event `eventIndex`, in the environment the stack gives it
 * (and `env`, the variant's), killed after `timeoutMs`; throws when it fails or its answer is not the expected one.
 */
export async function coldStart(
  fn: ColdStartFunction,
  bundleFile: string,
  table: BenchTable,
  run: { env: Record<string, string>; eventIndex: number; timeoutMs: number },
): Promise<ColdStartSample> {
  const name = fn.entry.replace(/\.ts$/, '').replace('/', '-');
  // Only what a Lambda sandbox would have: the function's environment, nothing inherited from this shell.
  const env = {
    ...handlerEnv(table),
    ...fn.env,
    ...run.env,
    AWS_LAMBDA_FUNCTION_NAME: name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
    BENCH_BUNDLE_URL: pathToFileURL(bundleFile).href,
    BENCH_EVENT: JSON.stringify(fn.event(run.eventIndex)),
    BENCH_CONTEXT: JSON.stringify(lambdaContext(name)),
    BENCH_MARKER: RESULT_MARKER,
  };
  const spawnedAt = performance.now();
  const { stdout, exitCode, stderr } = await runChild(env, run.timeoutMs);
  const spawnToAnswerMs = performance.now() - spawnedAt;
  if (exitCode !== 0) throw new Error(`${fn.entry}: cold-start process exited ${exitCode}: ${stderr}`);
  // The function logs to stdout too (Powertools at INFO); the result is the line after the marker.
  const resultLine = stdout.split('\n').find((line) => line.startsWith(RESULT_MARKER));
  if (!resultLine) throw new Error(`${fn.entry}: no result from the cold-start process: ${stdout.slice(-2000)} ${stderr}`);
  const output = JSON.parse(resultLine.slice(RESULT_MARKER.length)) as Omit<ColdStartSample, 'spawnToAnswerMs'> & { answer: unknown };
  fn.check(output.answer);
  const { bootMs, importMs, firstRequestMs, sinceProcessStartMs, cpuMs } = output;
  return { sinceProcessStartMs, bootMs, importMs, firstRequestMs, cpuMs, spawnToAnswerMs };
}

function runChild(env: Record<string, string>, timeoutMs: number): Promise<{ stdout: string; stderr: string; exitCode: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD_SOURCE], { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, exitCode });
    });
  });
}
