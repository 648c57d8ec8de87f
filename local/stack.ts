import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { PROVIDER_BASES, type ProviderBases } from '#adapters/free-key-providers';
import { createS3Client, localS3Config, S3ScriptStore } from '#adapters/script-store';
import { keySecretSealer } from '#adapters/secret-sealer';
import { createStores } from '#adapters/stores';
import { presigningS3Client } from '#adapters/upload-staging';
import { linkDiscord } from '#domain/discord/link';
import { sealSettings } from '#domain/free-keys/sealing';
import { unixSeconds } from '#domain/model';
import { FreeKeySettings } from '#schemas/free-keys';
import { startAlertDigestTimer } from './alert-digest-timer';
import { CONSOLE_PATH, createLocalConsole } from './console';
import { startDailyDetectorTimer } from './daily-detector-timer';
import { startDeliveryPipeline } from './delivery-pipeline';
import { fileDiscordKeyPair } from './discord-key';
import { createDiscordStandIn, type DiscordStandIn, STAND_IN_PREFIX } from './discord-stand-in';
import { createDocsExtension } from './docs';
import { type DynamoDbLocal, type FetchReporter, startDynamoDbLocal } from './dynamodb-local';
import type { LocalExtension } from './extension';
import { createFreeProviderStandIn, standInBases, standInLinkUrl } from './free-providers';
import { startLocalFrontDoor } from './front-door';
import { fileKeySecret } from './key-secret';
import { ensurePrivateDir } from './private-dir';
import { startLocalS3 } from './s3-local';
import { type DemoSeed, seedDemo } from './seed';
import { assertPortFree, type LocalServer, type RequestLogEntry, startLocalServer } from './server';
import { DEFAULT_STATE_FILE, removeStateFileIfOurs, type StackInfo, writeStateFile } from './state-file';
import { ensureTable } from './table';
import { startCheckStreamIngest, startTelemetryPipeline } from './telemetry-pipeline';

export const DEFAULT_PORT = 3000;
const DEFAULT_TABLE_NAME = 'script-distribution-local';
const INBOX_PATH = '/_local/inbox';
/** Beside DynamoDB Local's data: the demo's token exists nowhere else (the table holds only its hash). */
const DEMO_FILE = 'demo.json';

export interface LocalStackOptions {
  port?: number;
  /** Keep the table in this folder across restarts; in memory when absent. */
  persistDir?: string;
  /** Where to write the stack's details; `.local/stack.json` of the repository by default. */
  stateFile?: string;
  tableName?: string;
  /** Use this running DynamoDB (e.g. a test run's) instead of starting DynamoDB Local. */
  dynamodbEndpoint?: string;
  /** Tried for paths under `/_local/` after the built-in ones (the Discord stand-in and inbox, the docs). */
  extensions?: readonly LocalExtension[];
  /** Where deliveries are posted; the stack's own Discord stand-in when absent (env DISCORD_API_BASE in start.ts). */
  discordApiBase?: string;
  onRequest?: (entry: RequestLogEntry) => void;
  /** Told about the first start's download of DynamoDB Local. */
  onFetch?: FetchReporter;
  /** The local Discord application's key pair; `.local/discord-key.pem` of the repository by default. */
  discordKeyFile?: string;
  /** How often the counted checks' stream is read (its poller's default when absent): a test pacing checks one by one reads it sooner. */
  checkStreamPollMs?: number;
}

export interface LocalStack extends StackInfo {
  /** The watermark two demo keys share, for a bulk revoke to try. */
  sharedWatermark: string;
  /** The local Discord: what deliveries posted, also shown at `inboxUrl`. */
  discord: DiscordStandIn;
  stateFile: string;
  /** True when the demo came from an earlier run's persisted table. */
  reusedDemo: boolean;
  /** Checks whose telemetry is not ingested yet (see TelemetryPipeline.pending). */
  telemetryPending(): number;
  /** Closes the server, stops DynamoDB Local and removes the state file; safe to call twice. */
  stop(): Promise<void>;
}

type DemoRecord = Pick<DemoSeed, 'ownerId' | 'token' | 'projectId' | 'sharedWatermark' | 'demoKey' | 'demoKeyId'>;

/**
 * The whole local system: DynamoDB Local, the table from the CDK stack's definition (with TTL), a local S3 for
 * the version scripts, webhook
 * delivery (stream poller → fan-out → in-process queue → delivery → Discord stand-in), the daily analytics
 * detector and the hourly alert digest, the demo data, the HTTP server in front of the real authorizer and handlers,
 * and the front door in front of it all (local/front-door.ts, as the CloudFront distribution in AWS). Whatever fails
 * half-way is stopped again before the error reaches the caller.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stateFile = options.stateFile ?? DEFAULT_STATE_FILE;
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  const port = options.port ?? DEFAULT_PORT;
  // Checked before the file is touched: on a taken port it most likely describes the stack that holds the port.
  await assertPortFree(port);
  // A file left by an earlier run would point waiting tools at a stack that is not up yet.
  await rm(stateFile, { force: true });

  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    if (options.persistDir) await ensurePrivateDir(options.persistDir);
    const dynamodb: Pick<DynamoDbLocal, 'endpoint'> = options.dynamodbEndpoint
      ? { endpoint: options.dynamodbEndpoint }
      : await startDynamoDbLocal({ dataDir: options.persistDir, onFetch: options.onFetch }).then((started) => {
          stops.push(() => started.stop());
          return started;
        });

    const client = new DynamoDBClient(localDynamoConfig(dynamodb.endpoint));
    const db = createDocumentClient(localDynamoConfig(dynamodb.endpoint));
    stops.push(async () => {
      client.destroy();
      db.destroy();
    });
    const { created } = await ensureTable(client, tableName);
    const stores = createStores(db, tableName);
    // A table persisted by an earlier version may hold tokens from before scopes, which read until migrated.
    if (!created) {
      await stores.tokens.migrateLegacyTokens();
      await stores.dashboard.listLegacyProjects();
    }

    // Kept beside the table with --persist: a persisted table's versions need their scripts.
    const s3 = await startLocalS3({ dataDir: options.persistDir && join(options.persistDir, 'scripts') });
    stops.push(() => s3.stop());
    const s3Client = createS3Client(localS3Config(s3.endpoint));
    // The console's upload URLs are signed as the console function signs them in AWS (no checksum of an empty body).
    const presigning = presigningS3Client(localS3Config(s3.endpoint));
    stops.push(async () => {
      s3Client.destroy();
      presigning.destroy();
    });
    const scripts = new S3ScriptStore(s3Client, s3.bucketName);

    // Before the seed, so the demo's own uploads already arrive in the inbox.
    const delivery = await startDeliveryPipeline({
      endpoint: dynamodb.endpoint,
      tableName,
      discordApiBase: options.discordApiBase ?? `http://127.0.0.1:${port}${STAND_IN_PREFIX}`,
    });
    stops.push(() => delivery.stop());
    const telemetry = startTelemetryPipeline({ store: stores.telemetry });
    stops.push(() => telemetry.stop());
    const checkIngest = await startCheckStreamIngest({
      endpoint: dynamodb.endpoint,
      tableName,
      store: stores.telemetry,
      pollIntervalMs: options.checkStreamPollMs,
    });
    stops.push(() => checkIngest.stop());
    const dailyDetector = startDailyDetectorTimer({
      store: stores.telemetry,
      onError: (error) => console.error(`Daily analytics detector failed: ${error instanceof Error ? error.message : String(error)}`),
    });
    stops.push(() => dailyDetector.stop());
    const alertDigest = startAlertDigestTimer({
      store: stores.telemetry,
      onError: (error) => console.error(`Hourly alert digest failed: ${error instanceof Error ? error.message : String(error)}`),
    });
    stops.push(() => alertDigest.stop());

    const previous = created || !options.persistDir ? undefined : await readDemo(options.persistDir);
    const demo: DemoRecord = previous ?? (await seedDemo(stores, scripts, unixSeconds()));
    if (options.persistDir && !previous) await writeDemo(options.persistDir, demo);

    // Made (or read and checked) now, so that a bad secret file stops the start rather than a shop's first order.
    const keySecret = fileKeySecret();
    await keySecret.get();
    // The demo project is linked to the local Discord key pair, so `discord simulate` works at once (again after a
    // restart on a persisted table, should the key file have been made anew).
    const discordKeys = await fileDiscordKeyPair(options.discordKeyFile);
    if ((await stores.discord.discordLink(demo.projectId))?.publicKey !== discordKeys.publicKeyHex)
      await linkDiscord(stores.discord, demo.projectId, { publicKey: discordKeys.publicKeyHex }, unixSeconds());
    const discord = createDiscordStandIn();
    // Known once the server listens (port 0 picks one); the console asks only when serving a request.
    let origin = '';
    const consoleSite = createLocalConsole({
      stores,
      scripts,
      s3: presigning,
      bucketName: s3.bucketName,
      keySecret,
      discordApiBase: options.discordApiBase,
      origin: () => origin,
    });
    // The key page verifies with the providers' stand-ins: their bases are known once the server listens.
    const freeBases: ProviderBases = { ...PROVIDER_BASES };
    const freeStandIn = createFreeProviderStandIn({ recordPostback: (...args) => stores.freeKeys.recordPostback(...args) });
    // The origins on a port of their own; the front door on the stack's port, as the distribution in front of them.
    const server: LocalServer = await startLocalServer({
      port: 0,
      host: '127.0.0.1',
      stores: { ...stores, keyChecks: checkIngest.watch(stores.keyChecks) },
      telemetry: telemetry.sink,
      keySecret,
      scripts,
      extensions: [discord, freeStandIn, createDocsExtension({ exampleProjectId: demo.projectId }), ...(options.extensions ?? [])],
      freeProviderBases: freeBases,
      console: consoleSite,
      onRequest: options.onRequest,
    });
    stops.push(() => server.close());
    const frontDoor = await startLocalFrontDoor({
      port,
      host: '127.0.0.1',
      origins: { consoleApi: server.url, consoleFiles: server.url, ownerApi: server.url, loaderApi: server.url },
      uploadOrigin: s3.endpoint,
    });
    stops.push(() => frontDoor.close());
    origin = frontDoor.url;
    Object.assign(freeBases, standInBases(server.url));
    // The demo project's free keys: one checkpoint of each provider, on the stand-ins (docs/free-keys.md, "Locally").
    if (!(await stores.freeKeys.settings(demo.projectId))) {
      const back = `${frontDoor.url}/v1/free/${demo.projectId}/return`;
      const settings = FreeKeySettings.parse({
        checkpoints: [
          { provider: 'workink', url: standInLinkUrl(frontDoor.url, 'workink', '1', `${back}?token={TOKEN}`), link_id: '1', secret: 'local' },
          { provider: 'linkvertise', url: standInLinkUrl(frontDoor.url, 'linkvertise', '2', back), link_id: '2', secret: 'local' },
          { provider: 'lootlabs', url: standInLinkUrl(frontDoor.url, 'lootlabs', '3', back), link_id: '3', secret: 'local' },
        ],
      });
      await stores.freeKeys.putSettings(demo.projectId, await sealSettings(keySecretSealer(keySecret, 'freeKeys'), demo.projectId, settings));
    }
    // The console is opened by any loopback name; each is an origin of its own to the browser.
    await s3.allowUploadsFrom(['127.0.0.1', 'localhost', '[::1]'].map((name) => `http://${name}:${frontDoor.port}`));

    const info: StackInfo = {
      baseUrl: frontDoor.url,
      token: demo.token,
      ownerId: demo.ownerId,
      projectId: demo.projectId,
      dynamodbEndpoint: dynamodb.endpoint,
      tableName,
      inboxUrl: `${frontDoor.url}${INBOX_PATH}`,
      consoleUrl: `${frontDoor.url}${CONSOLE_PATH}`,
      demoKey: demo.demoKey,
      demoKeyId: demo.demoKeyId,
      s3Endpoint: s3.endpoint,
      bucketName: s3.bucketName,
      discordPublicKey: discordKeys.publicKeyHex,
    };
    await writeStateFile(stateFile, info);
    stops.push(() => removeStateFileIfOurs(stateFile, info));

    let stopping: Promise<void> | undefined;
    return {
      ...info,
      sharedWatermark: demo.sharedWatermark,
      discord,
      stateFile,
      reusedDemo: previous !== undefined,
      telemetryPending: () => telemetry.pending() + checkIngest.pending(),
      stop: () => (stopping ??= stopAll()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function readDemo(persistDir: string): Promise<DemoRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(join(persistDir, DEMO_FILE), 'utf8')) as Partial<DemoRecord>;
    const { ownerId, token, projectId, sharedWatermark, demoKey, demoKeyId } = record;
    const strings = typeof ownerId === 'string' && typeof token === 'string' && typeof projectId === 'string';
    // A record written before demo keys (or their ids) were kept has none: seed a new demo then.
    const demoKeyKnown = typeof demoKey === 'string' && typeof demoKeyId === 'string';
    if (strings && typeof sharedWatermark === 'string' && demoKeyKnown) return { ownerId, token, projectId, sharedWatermark, demoKey, demoKeyId };
  } catch {
    // No record from an earlier run: seed a new demo beside the old data.
  }
  return undefined;
}

async function writeDemo(persistDir: string, demo: DemoRecord): Promise<void> {
  const { ownerId, token, projectId, sharedWatermark, demoKey, demoKeyId } = demo;
  const record = { ownerId, token, projectId, sharedWatermark, demoKey, demoKeyId };
  await writeFile(join(persistDir, DEMO_FILE), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}
