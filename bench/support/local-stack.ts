import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { createStores, type Stores } from '#adapters/stores';
import type { StackInfo } from '#local/state-file';
import { BENCH_REGION } from './dynamodb';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const START_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 15_000;
const STACK_OWN_SETTINGS = new Set(['DYNAMODB_ENDPOINT', 'TABLE_NAME', 'DISCORD_API_BASE', 'PORT']);

/** `npm start` in a process of its own, as a developer runs it, so its memory can be read from outside. */
export interface StackProcess {
  info: StackInfo;
  /** The Node process serving the API (DynamoDB Local's JVM is its child). */
  pid: number;
  /** Stops the stack (it stops its DynamoDB Local) and waits for the process to exit. */
  stop(): Promise<void>;
}

export async function startStackProcess(): Promise<StackProcess> {
  const stateFile = `${ROOT}.cache/bench/local-stack.json`;
  await mkdir(`${ROOT}.cache/bench`, { recursive: true });
  await rm(stateFile, { force: true });
  const port = await freePort();
  // The bench's own table settings must not leak into the stack, which starts its own DynamoDB Local, nor a
  // Discord address: deliveries go to the stack's own stand-in.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !STACK_OWN_SETTINGS.has(name)));
  // tsx as a loader in the same process (what `npm start` runs, minus npm's and tsx's wrapper processes), so the
  // pid is the server's own.
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts', '--port', String(port), '--state-file', stateFile], {
    cwd: ROOT,
    env: inherited,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(timer);
    await rm(stateFile, { force: true });
  };
  try {
    const info = await waitForStateFile(stateFile, child, () => stderr);
    if (child.pid === undefined) throw new Error('local stack has no pid');
    return { info, pid: child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForStateFile(path: string, child: ChildProcess, stderr: () => string): Promise<StackInfo> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`local stack exited with ${child.exitCode} before it was up: ${stderr()}`);
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text) return JSON.parse(text) as StackInfo;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`local stack did not come up within ${START_TIMEOUT_MS / 1000} s: ${stderr()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The dashboard's view of the stack's table: what `npm run dashboard` writes through. */
export function stackStores(info: StackInfo): { stores: Stores; close: () => void } {
  const db = createDocumentClient({ ...localDynamoConfig(info.dynamodbEndpoint), region: BENCH_REGION });
  return { stores: createStores(db, info.tableName), close: () => db.destroy() };
}

/** Resident memory of a process and of its children, read from /proc while something runs. */
export class RssSampler {
  private readonly peaks = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 100,
  ) {}

  start(): void {
    const sample = async () => {
      for (const pid of [this.pid, ...(await childPids(this.pid))]) {
        const kib = await rssKiB(pid);
        if (kib !== undefined) this.peaks.set(pid, Math.max(this.peaks.get(pid) ?? 0, kib));
      }
    };
    void sample();
    this.timer = setInterval(() => void sample(), this.intervalMs);
  }

  /** Peak RSS in MiB: of the process itself, and of each child (DynamoDB Local's JVM) by pid. */
  stop(): { processMiB: number; childrenMiB: Record<string, number> } {
    clearInterval(this.timer);
    const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;
    const children = [...this.peaks].filter(([pid]) => pid !== this.pid);
    return { processMiB: mib(this.peaks.get(this.pid) ?? 0), childrenMiB: Object.fromEntries(children.map(([pid, kib]) => [String(pid), mib(kib)])) };
  }
}

async function rssKiB(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const match = status && /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match ? Number(match[1]) : undefined;
}

async function childPids(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return children.split(/\s+/).filter(Boolean).map(Number);
}
