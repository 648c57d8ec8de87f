import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type EntryName,
  type GatewayDeps,
  gatewayResponse,
  handleGatewayRequest,
  type HttpResponse,
  MAX_REQUEST_BODY_BYTES,
  type ProxyHandler,
  splitTarget,
  type TokenAuthorizer,
} from './gateway';

/** Serves a path under `/_local/` and resolves true, or resolves false to let the next one try. */
export type LocalExtension = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

export const LOCAL_PREFIX = '/_local/';

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
  tableName: string;
  /** DynamoDB Local's endpoint; when absent, `DYNAMODB_ENDPOINT` must already be set. */
  dynamodbEndpoint?: string;
  extensions?: readonly LocalExtension[];
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface LocalServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

type HandlerModule = { handler: ProxyHandler };

/** The same modules the CDK stack deploys, one per route; loaded only once the environment points at the table. */
const HANDLER_MODULES: Record<EntryName, () => Promise<HandlerModule>> = {
  'list-keys': () => import('#api/list-keys'),
  'revoke-key': () => import('#api/revoke-key'),
  'revoke-bulk': () => import('#api/revoke-bulk'),
  'list-versions': () => import('#api/list-versions'),
  rollback: () => import('#api/rollback'),
  'list-webhooks': () => import('#api/list-webhooks'),
};

/**
 * The handlers build their table client on first use from TABLE_NAME and DYNAMODB_ENDPOINT, so these are
 * set before anything runs. One process serves one table.
 */
async function loadGatewayDeps(): Promise<GatewayDeps> {
  const { handler: authorizer } = (await import('#api/authorizer')) as { handler: TokenAuthorizer };
  const entries = await Promise.all(
    (Object.keys(HANDLER_MODULES) as EntryName[]).map(async (entry) => [entry, (await HANDLER_MODULES[entry]()).handler] as const),
  );
  return { authorizer, handlers: Object.fromEntries(entries) as Record<EntryName, ProxyHandler> };
}

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const host = options.host ?? '127.0.0.1';
  process.env.TABLE_NAME = options.tableName;
  if (options.dynamodbEndpoint) process.env.DYNAMODB_ENDPOINT = options.dynamodbEndpoint;
  if (!process.env.DYNAMODB_ENDPOINT) throw new Error('DynamoDB endpoint is not set: pass dynamodbEndpoint or set DYNAMODB_ENDPOINT');
  const deps = await loadGatewayDeps();
  const extensions = options.extensions ?? [];
  // Known once listening; no request arrives before that.
  let origin = `http://${host}:${options.port}`;

  const server = createServer((req, res) => {
    const startedAt = performance.now();
    const method = req.method ?? 'GET';
    const { path } = splitTarget(req.url ?? '/');
    const log = (status: number, extra: Partial<RequestLogEntry> = {}) =>
      options.onRequest?.({ method, path, status, durationMs: Math.round(performance.now() - startedAt), ...extra });

    serve(req, res, origin, deps, extensions)
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
): Promise<Partial<RequestLogEntry>> {
  const url = localUrl(req.url ?? '/', origin);
  if (url.pathname.startsWith(LOCAL_PREFIX)) {
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
