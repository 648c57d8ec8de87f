import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { type PostbackLookup, PROVIDER_BASES, type ProviderBases, providerVerifier } from '#adapters/free-key-providers';
import { keySecretSealer } from '#adapters/secret-sealer';
import { AddressTally } from '#domain/address-tally';
import type { FreeKeyFlowStore } from '#domain/free-keys/flow';
import { machineBlacklist } from '#domain/free-keys/flow';
import { PROVIDER_TIMEOUT_MS } from '#domain/free-keys/session';
import { FullCopyTally } from '#domain/full-copies';
import { unixSeconds } from '#domain/model';
import type {
  AuditLog,
  BlacklistStore,
  DiscordKeyStore,
  KeyCheckStore,
  KeySecret,
  KeyStore,
  ProjectStore,
  RateLimitStore,
  ScriptStore,
  ScriptVersionStore,
  TelemetrySink,
  TokenStore,
} from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import { ScriptCache } from '#domain/scripts';
import { blacklistOf, type IsBuyerBlacklisted, type ShopStore } from '#domain/shops/receive';
import { RefusalTally } from '#domain/unsigned-refusals';
import { createAuthorizer } from '#functions/authorizer';
import { createInteractionsHandler } from '#http/discord-interactions';
import { createFreeKeyPageHandler } from '#http/free-key-page';
import { createScriptHandler, SCRIPT_CACHE_BYTES } from '#http/loader-script';
import { createStubHandler, type LoaderBaseUrlOf } from '#http/loader-stub';
import { createValidateHandler } from '#http/loader-validate';
import { isLoopbackHostHeader } from '#http/loopback';
import { createRouteHandlers } from '#http/routes';
import { createShopReceiverHandler } from '#http/shop-receiver';
import { CONSOLE_PATH, type LocalConsole } from './console';
import type { LocalExtension } from './extension';
import { type GatewayDeps, gatewayResponse, type HttpResponse, handleGatewayRequest, MAX_REQUEST_BODY_BYTES, splitTarget } from './gateway';
import { memoryKeySecret } from './key-secret';

const LOCAL_PREFIX = '/_local/';

export const NOT_LOOPBACK_HOST = 'The local stack answers only requests for localhost, 127.0.0.1 or [::1]: open it by one of those names';

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  requestId?: string;
  failure?: unknown;
}

export interface LocalServerOptions {
  port: number;
  host?: string;
  /** What the authorizer and the handlers read and write: the same stores the deployed functions use. */
  stores: LocalServerStores;
  /** Where the loader check's telemetry goes (the local stack's ingest queue). */
  telemetry: TelemetrySink;
  /** What order keys derive from; `npm start` keeps it in .local/, a server of a test has one for its life. */
  keySecret?: KeySecret;
  /** Where version scripts are read from (the local stack's S3). */
  scripts: ScriptStore;
  /** The buyer blacklist's check for shop orders (none unless given). */
  isBuyerBlacklisted?: IsBuyerBlacklisted;
  extensions?: readonly LocalExtension[];
  /** Where the key page verifies checkpoints (the providers' own APIs unless given: `npm start` gives its stand-ins'). */
  freeProviderBases?: ProviderBases;
  /** The publisher console (`/console/`, `/console/api/*`); `GET /` from a browser then goes there. */
  console?: LocalConsole;
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface LocalServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

type LocalServerStores = {
  projects: ProjectStore;
  rateLimits: RateLimitStore;
  tokens: TokenStore;
  keyChecks: KeyCheckStore;
  keys: KeyStore;
  scriptVersions: ScriptVersionStore;
  audit: AuditLog;
  discord: DiscordKeyStore;
  blacklist: BlacklistStore;
  shops: ShopStore;
  /** The free keys' store (the table's, in `npm start`); a server without it serves no key page. */
  freeKeys?: FreeKeyFlowStore & PostbackLookup;
};

/** The stub loader the hosted stub route serves; the Lambda bundles the same file as text. */
export const STUB_LOADER_FILE = fileURLToPath(new URL('../examples/roblox-loader.luau', import.meta.url));

/** The key page of a server started without the free keys' store. */
const jsonNotFound = { statusCode: 404, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: 'Free keys are not served here' }) };

/** Locally the front door is this server, over plain HTTP, by the loopback name the client used. */
const localLoaderBaseUrl: LoaderBaseUrlOf = (event) => `http://${event.requestContext.domainName ?? '127.0.0.1'}`;

/** The authorizer and the route handlers the CDK stack deploys, built from the given stores instead of the Lambda runtime's. */
function localGatewayDeps(
  stores: LocalServerStores,
  telemetry: TelemetrySink,
  scripts: ScriptStore,
  keySecret: KeySecret = memoryKeySecret(),
  isBuyerBlacklisted: IsBuyerBlacklisted = blacklistOf(stores.blacklist),
  freeBases: ProviderBases = PROVIDER_BASES,
): GatewayDeps {
  const now = () => unixSeconds();
  const loader = {
    keys: stores.keyChecks,
    rateLimits: stores.rateLimits,
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry,
    now,
    logger: new Logger({ serviceName: 'loader-check' }),
  };
  const freeKeys = stores.freeKeys
    ? createFreeKeyPageHandler({
        store: stores.freeKeys,
        sealer: keySecretSealer(keySecret, 'freeKeys'),
        verifier: providerVerifier({ bases: freeBases, timeoutMs: PROVIDER_TIMEOUT_MS, postbacks: stores.freeKeys }),
        rateLimits: stores.rateLimits,
        keys: stores.keys,
        blacklistProblem: machineBlacklist(stores.blacklist),
        now,
        logger: new Logger({ serviceName: 'free-keys' }),
      })
    : async () => jsonNotFound;
  return {
    authorizer: createAuthorizer({ tokens: stores.tokens, logger: new Logger({ serviceName: 'developer-api-authorizer' }) }),
    handlers: createRouteHandlers({ stores, keySecret, now, logger: new Logger({ serviceName: 'developer-api' }) }),
    loaderHandlers: {
      'loader-validate': createValidateHandler(loader),
      'loader-script': createScriptHandler({
        ...loader,
        versions: stores.scriptVersions,
        scripts,
        cache: new ScriptCache(SCRIPT_CACHE_BYTES),
        fullCopies: new FullCopyTally(),
      }),
      'loader-stub': createStubHandler({
        projects: stores.projects,
        rateLimits: stores.rateLimits,
        refusals: new RefusalTally(),
        stubSource: readFileSync(STUB_LOADER_FILE, 'utf8'),
        loaderBaseUrl: localLoaderBaseUrl,
        now,
        logger: loader.logger,
      }),
      'discord-interactions': createInteractionsHandler({
        store: stores.discord,
        audit: stores.audit,
        rateLimits: stores.rateLimits,
        refusals: new RefusalTally(),
        blacklist: stores.blacklist,
        loaderBaseUrl: localLoaderBaseUrl,
        now,
        logger: new Logger({ serviceName: 'discord' }),
      }),
      'shop-receiver': createShopReceiverHandler({
        shops: stores.shops,
        keys: stores.keys,
        projects: stores.projects,
        audit: stores.audit,
        keySecret,
        sealer: keySecretSealer(keySecret),
        isBuyerBlacklisted,
        now,
        logger: new Logger({ serviceName: 'shop-receiver' }),
      }),
      'free-start': freeKeys,
      'free-return': freeKeys,
      'free-postback': freeKeys,
    },
  };
}

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const host = options.host ?? '127.0.0.1';
  const deps = localGatewayDeps(options.stores, options.telemetry, options.scripts, options.keySecret, options.isBuyerBlacklisted, options.freeProviderBases);
  const extensions = options.extensions ?? [];
  // Known once listening; no request arrives before that.
  let origin = `http://${host}:${options.port}`;

  const server = createServer((req, res) => {
    const startedAt = performance.now();
    const method = req.method ?? 'GET';
    const { path } = splitTarget(req.url ?? '/');
    const log = (status: number, extra: Partial<RequestLogEntry> = {}) =>
      options.onRequest?.({ method, path, status, durationMs: Math.round(performance.now() - startedAt), ...extra });

    // DNS rebinding: a web page whose name now resolves to 127.0.0.1 sends its own name as Host, so it is refused here.
    if (!isLoopbackHostHeader(req.headers.host)) {
      send(res, { status: 403, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: NOT_LOOPBACK_HOST }) });
      log(403);
      return;
    }
    serve(req, res, origin, deps, extensions, options.console)
      .then((extra) => log(res.statusCode, extra))
      .catch((failure: unknown) => {
        if (!res.headersSent) send(res, gatewayResponse('DEFAULT_5XX', randomUUID(), 500));
        else res.destroy();
        log(500, { failure });
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, options.port)));
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://${host}:${port}`;
  return {
    url: origin,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * Fails at once with the same sentence as a failed listen when the port is taken, so `npm start` does not
 * first spend seconds starting DynamoDB Local. The real listen still reports a port taken in between.
 */
export async function assertPortFree(port: number, host = '127.0.0.1'): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, port)));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

function listenError(error: NodeJS.ErrnoException, port: number): Error {
  if (error.code === 'EADDRINUSE') return new Error(`Port ${port} is in use: set PORT=... or stop the other process`);
  if (error.code === 'EACCES') return new Error(`Port ${port} needs privileges this user lacks: set PORT to a number above 1023`);
  return error;
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
  deps: GatewayDeps,
  extensions: readonly LocalExtension[],
  console: LocalConsole | undefined,
): Promise<Partial<RequestLogEntry>> {
  const url = localUrl(req.url ?? '/', origin);
  if (console) {
    // The console is what a newcomer opens first; scripts asking `/` still get the docs' pointer below.
    if (url.pathname === '/' && req.method === 'GET' && (req.headers.accept ?? '').includes('text/html')) {
      send(res, { status: 302, headers: { Location: CONSOLE_PATH }, body: '' });
      return {};
    }
    if (await console.serve(req, res, url, () => readBody(req))) return {};
  }
  // `/` too: API Gateway has no route there, so the local stack may use it to point a newcomer at its docs.
  if (url.pathname.startsWith(LOCAL_PREFIX) || url.pathname === '/') {
    for (const extension of extensions) {
      if (await extension(req, res, url)) return {};
    }
  }
  const body = await readBody(req);
  if (body === undefined) {
    // Past API Gateway's payload limit: answer at once and drop the connection rather than read the rest.
    send(res, gatewayResponse('REQUEST_TOO_LARGE', randomUUID()), { Connection: 'close' });
    req.destroy();
    return {};
  }
  const outcome = await handleGatewayRequest(
    { method: req.method ?? 'GET', target: req.url ?? '/', rawHeaders: req.rawHeaders, body, sourceIp: req.socket.remoteAddress ?? '127.0.0.1' },
    deps,
  );
  send(res, outcome.response, { 'x-amzn-RequestId': outcome.requestId });
  return { requestId: outcome.requestId, failure: outcome.failure };
}

/** The request's URL as extensions see it; the target is read as a path, so `//other-host/...` cannot change the origin. */
function localUrl(target: string, origin: string): URL {
  const { path, query } = splitTarget(target);
  return new URL(`${origin}/${path.replace(/^\/+/, '')}${query ? `?${query}` : ''}`);
}

/** The whole body, or undefined as soon as it is known to pass API Gateway's limit. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_REQUEST_BODY_BYTES) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_REQUEST_BODY_BYTES) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, response: HttpResponse, extraHeaders: Record<string, string> = {}): void {
  res.writeHead(response.status, { ...response.headers, ...extraHeaders });
  res.end(response.body);
}
