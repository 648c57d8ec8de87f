import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildOpenApiDocument } from '#http/openapi/document';
import { EXAMPLE } from '#http/openapi/examples';
import type { LocalExtension } from './extension';

/**
 * The API reference on the local stack: `/_local/openapi.json` is the OpenAPI document (built from the same
 * schemas as openapi.json, with the local server as its server, so "Try it out" calls this stack) and
 * `/_local/docs` renders it with Swagger UI's own files from node_modules. `/` points there.
 */
const DOCS_PATH = '/_local/docs';
const OPENAPI_JSON_PATH = '/_local/openapi.json';

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files of swagger-ui-dist the page loads; nothing else under its folder is served. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** Swagger UI needs a page to mount on and one call to start; this is that and nothing more. */
const LOADER_PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Script Distribution Developer API — reference</title>
    <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png" sizes="32x32">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
    <script>
      window.ui = SwaggerUIBundle({ url: '${OPENAPI_JSON_PATH}', dom_id: '#swagger-ui', deepLinking: true, docExpansion: 'list', tryItOutEnabled: false });
    </script>
  </body>
</html>
`;

export interface DocsOptions {
  /** The local demo project: its id replaces the document's example project id, so a copied example works here. */
  exampleProjectId?: string;
}

export function createDocsExtension(options: DocsOptions = {}): LocalExtension {
  let documentJson: string | undefined;
  const localDocument = (origin: string): string => {
    documentJson ??= JSON.stringify(buildOpenApiDocument(), null, 2);
    const document = JSON.parse(options.exampleProjectId ? documentJson.replaceAll(EXAMPLE.projectId, options.exampleProjectId) : documentJson) as object;
    return JSON.stringify({ ...document, servers: [{ url: origin, description: 'This local stack' }] }, null, 2);
  };

  return async (req, res, url) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const origin = req.headers.host ? `http://${req.headers.host}` : url.origin;
    if (url.pathname === '/') {
      pointAtDocs(req, res, origin);
      return true;
    }
    if (url.pathname === OPENAPI_JSON_PATH) {
      send(req, res, 200, 'application/json; charset=utf-8', localDocument(origin));
      return true;
    }
    return serveDocsPage(req, res, url);
  };
}

/** A browser goes to the docs page; curl and scripts get the same pointer as JSON. */
function pointAtDocs(req: IncomingMessage, res: ServerResponse, origin: string): void {
  if ((req.headers.accept ?? '').includes('text/html')) {
    res.writeHead(302, { Location: DOCS_PATH, 'Content-Length': 0, 'Cache-Control': 'no-cache' }).end();
    return;
  }
  const pointer = {
    message: 'Script Distribution Developer API, local stack: the API paths start with /v1; the reference is at docs.',
    docs: `${origin}${DOCS_PATH}`,
    openapi: `${origin}${OPENAPI_JSON_PATH}`,
  };
  send(req, res, 200, 'application/json; charset=utf-8', `${JSON.stringify(pointer, null, 2)}\n`);
}

async function serveDocsPage(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  if (url.pathname === DOCS_PATH || url.pathname === `${DOCS_PATH}/`) {
    send(req, res, 200, 'text/html; charset=utf-8', LOADER_PAGE);
    return true;
  }
  const asset = url.pathname.startsWith(`${DOCS_PATH}/`) ? url.pathname.slice(DOCS_PATH.length + 1) : undefined;
  const contentType = asset === undefined ? undefined : ASSETS[asset];
  if (asset === undefined || contentType === undefined) return false;
  send(req, res, 200, contentType, await readFile(join(SWAGGER_UI_DIR, asset)), 'public, max-age=3600');
  return true;
}

function send(req: IncomingMessage, res: ServerResponse, status: number, contentType: string, body: string | Buffer, cacheControl = 'no-cache'): void {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': cacheControl,
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
