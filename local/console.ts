import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Stores } from '#adapters/stores';
import { S3UploadStaging } from '#adapters/upload-staging';
import type { KeySecret, ScriptStore } from '#domain/ports';
import { blacklistOf } from '#domain/shops/receive';
import { CONSOLE_API_PREFIX, CONSOLE_SECURITY_HEADERS, type ConsoleHandler, consoleStoresOf, createConsoleHandler } from '#http/console-api';
import { STAND_IN_PREFIX } from './discord-stand-in';
import { lambdaContext } from './gateway';
import { buildHttpApiEvent } from './proxy-event';

/**
 * The publisher console on the local stack: `/console/api/*` through the same handler the console's Lambda runs
 * (a payload 2.0 event, as its function URL sends), `/console/` the files `buildConsole()` (console/build.ts)
 * writes, built on first request. An upload is PUT to the local S3 by a URL presigned as in AWS (its own origin,
 * CORS and the front door's CSP as in AWS: local/front-door.ts).
 */

export const CONSOLE_PATH = '/console/';

export interface LocalConsoleOptions {
  stores: Stores;
  scripts: ScriptStore;
  /** Signs the upload URLs (made with presigningS3Client), reads and deletes staged uploads. */
  s3: S3Client;
  bucketName: string;
  keySecret: KeySecret;
  /** Where webhook tests post; the stack's own Discord stand-in when absent. */
  discordApiBase?: string;
  /** The local server's origin, known once it listens. */
  origin: () => string;
  /** Where the built pages are; built into a temporary folder on first request when absent. */
  staticDir?: string;
}

export interface LocalConsole {
  /** Serves the request when it is the console's; false to let the server go on. */
  serve(req: IncomingMessage, res: ServerResponse, url: URL, body: () => Promise<Buffer | undefined>): Promise<boolean>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};

export function createLocalConsole(options: LocalConsoleOptions): LocalConsole {
  const staging = new S3UploadStaging(options.s3, options.bucketName);
  // Built on the first request: the server's origin (the loader's base URL here) is known only once it listens.
  let handler: ConsoleHandler | undefined;
  const consoleHandler = (): ConsoleHandler =>
    (handler ??= createConsoleHandler({
      stores: consoleStoresOf(options.stores),
      keySecret: options.keySecret,
      now: () => Math.floor(Date.now() / 1000),
      logger: new Logger({ serviceName: 'console-api' }),
      scripts: options.scripts,
      staging,
      // The local gateway has no usage plan and no authorizer cache (dashboard/context.ts LOCAL_TOKEN_KEYS).
      tokenKeys: { register: async () => undefined, revoke: async () => undefined },
      discordApiBase: options.discordApiBase ?? `${options.origin()}${STAND_IN_PREFIX}`,
      loaderBaseUrl: options.origin(),
      isBuyerBlacklisted: blacklistOf(options.stores.blacklist),
    }));
  let built: Promise<string> | undefined;
  const staticDir = () => (built ??= options.staticDir ? Promise.resolve(options.staticDir) : buildPages());

  return {
    async serve(req, res, url, body) {
      const method = req.method ?? 'GET';
      if (url.pathname === CONSOLE_API_PREFIX || url.pathname.startsWith(`${CONSOLE_API_PREFIX}/`)) {
        const bytes = await body();
        if (bytes === undefined) {
          sendJson(res, 413, { error: 'Request body too large' });
          return true;
        }
        const result = await consoleHandler()(consoleEvent(req, url, bytes), lambdaContext('console-api', randomUUID(), 29_000, Date.now()));
        res.writeHead(result.statusCode, { ...result.headers, ...(result.cookies ? { 'Set-Cookie': result.cookies } : {}) } as Record<
          string,
          string | string[]
        >);
        res.end(result.body);
        return true;
      }
      if (url.pathname === '/console' || url.pathname.startsWith(CONSOLE_PATH)) {
        if (method !== 'GET' && method !== 'HEAD') return false;
        await servePage(res, url, await staticDir());
        return true;
      }
      return false;
    },
  };
}

/** The payload 2.0 event a function URL sends the console's Lambda for this request. */
function consoleEvent(req: IncomingMessage, url: URL, body: Buffer) {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i] ?? '', req.rawHeaders[i + 1] ?? '']);
  return buildHttpApiEvent({
    method: req.method ?? 'GET',
    routePath: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headerPairs: pairs,
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestId: randomUUID(),
    timeEpoch: Date.now(),
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    stage: '$default',
    accountId: '000000000000',
    apiId: 'local',
    domainName: req.headers.host ?? '127.0.0.1',
  });
}

async function buildPages(): Promise<string> {
  const outDir = await mkdtemp(join(tmpdir(), 'sd-console-'));
  let build: { buildConsole(outDir: string): Promise<void> };
  try {
    build = (await import('../console/build')) as typeof build;
  } catch (error) {
    throw new Error(`The console's pages cannot be built (console/build.ts): ${error instanceof Error ? error.message : String(error)}`);
  }
  await build.buildConsole(outDir);
  return outDir;
}

/** A file of the built pages; any other path under /console/ is a page of the app, which index.html routes. */
async function servePage(res: ServerResponse, url: URL, dir: string): Promise<void> {
  if (url.pathname === '/console') {
    res.writeHead(308, { Location: CONSOLE_PATH, ...CONSOLE_SECURITY_HEADERS });
    res.end();
    return;
  }
  const relative = normalize(decodeURIComponent(url.pathname.slice(CONSOLE_PATH.length)) || 'index.html');
  const inside = !relative.startsWith('..') && !relative.includes(`${sep}..`) && !relative.startsWith(sep);
  let file = inside ? join(dir, relative) : join(dir, 'index.html');
  if (!(await isFile(file))) file = extname(relative) ? '' : join(dir, 'index.html');
  if (!file) {
    res.writeHead(404, { ...CONSOLE_SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('Not found');
    return;
  }
  const body = await readFile(file);
  res.writeHead(200, { ...CONSOLE_SECURITY_HEADERS, 'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream' });
  res.end(body);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...CONSOLE_SECURITY_HEADERS, 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
