import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Script } from 'node:vm';
import { isLoopbackHostHeader } from '#http/loopback';
import { behaviourOf, FUNCTION_OF, ORIGIN_OF, securityHeaders, VIEWER_REQUEST_FUNCTIONS } from '#lib/front-door-rules';
import { splitTarget } from './gateway';
import { NOT_LOOPBACK_HOST } from './server';

/**
 * The local stack's CloudFront: one listener that does to each request what the distribution does
 * (lib/constructs/front-door.ts, from lib/front-door-rules.ts): picks the behaviour by path pattern, runs that
 * behaviour's CloudFront function (the very source CloudFront is given, in a `node:vm` context) on the viewer request,
 * sends what is left to the behaviour's origin and writes the response headers policy over the answer. Paths under
 * `/_local/` (the Discord stand-in, the inbox, the docs) exist only here: they go to the local server untouched.
 * What it does not reproduce is listed in docs/local-stack.md.
 */

type LocalOrigins = Readonly<Record<(typeof ORIGIN_OF)[keyof typeof ORIGIN_OF], string>>;

export interface LocalFrontDoorOptions {
  port: number;
  host?: string;
  /** Each origin's base URL (`http://127.0.0.1:PORT`). */
  origins: LocalOrigins;
  /** The local S3's origin, which the console's CSP lets the page PUT an upload to, as the bucket's in AWS. */
  uploadOrigin: string;
}

export interface LocalFrontDoor {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** CloudFront's event for a viewer-request function (JavaScript runtime 2.0): lower-case header names, `{ value }` each. */
interface ViewerRequestEvent {
  version: '1.0';
  context: { eventType: 'viewer-request' };
  viewer: { ip: string };
  request: {
    method: string;
    uri: string;
    querystring: Record<string, { value: string }>;
    headers: Record<string, { value: string }>;
    cookies: Record<string, { value: string }>;
  };
}

interface FunctionResponse {
  statusCode: number;
  statusDescription?: string;
  headers?: Record<string, { value: string }>;
}

type ViewerRequestHandler = (event: ViewerRequestEvent) => ViewerRequestEvent['request'] | FunctionResponse;

/** Each function's `handler`, compiled once in its own context (no Node globals, as in CloudFront's runtime). */
const HANDLERS = Object.fromEntries(
  Object.entries(VIEWER_REQUEST_FUNCTIONS).map(([name, { code }]) => [name, new Script(`${code}\nhandler;`).runInNewContext({}) as ViewerRequestHandler]),
) as Record<keyof typeof VIEWER_REQUEST_FUNCTIONS, ViewerRequestHandler>;

/** Hop-by-hop headers a proxy does not pass on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export async function startLocalFrontDoor(options: LocalFrontDoorOptions): Promise<LocalFrontDoor> {
  const host = options.host ?? '127.0.0.1';
  const headersPolicy = securityHeaders(options.uploadOrigin);
  const server = createServer((req, res) => {
    if (!isLoopbackHostHeader(req.headers.host)) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: NOT_LOOPBACK_HOST }));
      return;
    }
    handle(req, res, options.origins, headersPolicy).catch(() => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json', ...headersPolicy });
        res.end(JSON.stringify({ error: 'The local origin did not answer' }));
      } else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, origins: LocalOrigins, headersPolicy: Readonly<Record<string, string>>): Promise<void> {
  const { path, query } = splitTarget(req.url ?? '/');
  if (path.startsWith('/_local/')) {
    await forward(req, res, origins.ownerApi, req.url ?? '/', rawPairs(req), {});
    return;
  }
  const behaviour = behaviourOf(path);
  const functionName = FUNCTION_OF[behaviour];
  let uri = path;
  // As sent, repeated headers included (a second Authorization, a second Content-Type): the origin judges them.
  let headers = rawPairs(req);
  if (functionName) {
    const event = viewerRequestEvent(req, path, query);
    const result = HANDLERS[functionName](event);
    if ('statusCode' in result) {
      const answer: Record<string, string> = {};
      for (const [name, { value }] of Object.entries(result.headers ?? {})) answer[name] = value;
      res.writeHead(result.statusCode, result.statusDescription, { ...answer, ...headersPolicy });
      res.end();
      return;
    }
    uri = result.uri;
    // The function's headers are the request's now (it may add, change or drop one); cookies are not among them.
    headers = rawPairs(req).filter(([name]) => name.toLowerCase() === 'cookie');
    for (const [name, { value }] of Object.entries(result.headers)) headers.push([name, value]);
  }
  await forward(req, res, origins[ORIGIN_OF[behaviour]], `${uri}${query ? `?${query}` : ''}`, headers, headersPolicy);
}

function viewerRequestEvent(req: IncomingMessage, uri: string, query: string): ViewerRequestEvent {
  const headers: Record<string, { value: string }> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && name !== 'cookie') headers[name] = { value: [value].flat().join(',') };
  const querystring: Record<string, { value: string }> = {};
  for (const [name, value] of new URLSearchParams(query)) querystring[name] = { value };
  return {
    version: '1.0',
    context: { eventType: 'viewer-request' },
    viewer: { ip: req.socket.remoteAddress ?? '127.0.0.1' },
    request: { method: req.method ?? 'GET', uri, querystring, headers, cookies: {} },
  };
}

type HeaderPairs = [name: string, value: string][];

/** The request's headers as sent, each repeat kept (Node's `req.headers` keeps only the first Authorization). */
function rawPairs(req: IncomingMessage): HeaderPairs {
  const pairs: HeaderPairs = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
  return pairs;
}

/** The request to the origin, streamed both ways; `override` headers replace the origin's (the policy's `override: true`). */
function forward(
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
  target: string,
  headers: HeaderPairs,
  override: Readonly<Record<string, string>>,
): Promise<void> {
  const { hostname, port } = new URL(origin);
  // Node takes an array in rawHeaders' form, which keeps repeated headers.
  const outgoing = headers.filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())).flat();
  return new Promise<void>((resolve, reject) => {
    const upstream = request({ hostname, port, method: req.method, path: target, headers: outgoing }, (answer) => {
      const answerHeaders: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) answerHeaders[name] = value;
      answered = true;
      res.writeHead(answer.statusCode ?? 502, { ...answerHeaders, ...override });
      answer.pipe(res);
      answer.on('end', resolve);
      answer.on('error', reject);
    });
    // An origin may answer before reading the whole body (a body past the gateway's limit) and drop the connection.
    let answered = false;
    upstream.on('error', (error) => {
      if (!answered) reject(error);
    });
    res.on('finish', () => {
      if (!req.readableEnded) req.destroy();
    });
    req.pipe(upstream);
  });
}
