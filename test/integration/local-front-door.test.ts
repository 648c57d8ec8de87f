import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEHAVIOURS, securityHeaders } from '#lib/front-door-rules';
import { type LocalFrontDoor, startLocalFrontDoor } from '#local/front-door';

/**
 * The local front door (local/front-door.ts) in front of four echo origins: it applies the distribution's path
 * patterns, CloudFront functions and response headers policy (lib/front-door-rules.ts) to each request.
 */

const UPLOAD_ORIGIN = 'http://127.0.0.1:9';
const ORIGIN_NAMES = ['consoleApi', 'consoleFiles', 'ownerApi', 'loaderApi'] as const;
const origins: Server[] = [];
let frontDoor: LocalFrontDoor;

/** An origin that answers what it received, with a CSP of its own that the policy must replace. */
function echoOrigin(name: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-security-policy': "connect-src 'self'" });
      res.end(JSON.stringify({ origin: name, method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

interface Echo {
  origin: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

const call = async (path: string, init: RequestInit = {}) => fetch(`${frontDoor.url}${path}`, { redirect: 'manual', ...init });
const echo = async (path: string, init: RequestInit = {}) => (await (await call(path, init)).json()) as Echo;

beforeAll(async () => {
  const started = await Promise.all(ORIGIN_NAMES.map((name) => echoOrigin(name)));
  origins.push(...started.map(({ server }) => server));
  const urls = Object.fromEntries(ORIGIN_NAMES.map((name, i) => [name, started[i]?.url ?? ''])) as Record<(typeof ORIGIN_NAMES)[number], string>;
  frontDoor = await startLocalFrontDoor({ port: 0, origins: urls, uploadOrigin: UPLOAD_ORIGIN });
});

afterAll(async () => {
  await frontDoor?.close();
  for (const server of origins) server.closeAllConnections();
  await Promise.all(origins.map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('the local front door', () => {
  it.each([
    ['/console/api/session', 'consoleApi', BEHAVIOURS.consoleApi],
    ['/console/app.js', 'consoleFiles', BEHAVIOURS.console],
    ['/v1/projects/p1/keys?limit=5', 'ownerApi', BEHAVIOURS.ownerApi],
    ['/v1/loader/stub/p1', 'loaderApi', BEHAVIOURS.stub],
    ['/v1/loader/validate', 'loaderApi', BEHAVIOURS.loader],
    ['/v1/discord/interactions/p1', 'loaderApi', BEHAVIOURS.discord],
    ['/v1/unknown', 'ownerApi', 'the default behaviour'],
  ])('sends %s to the %s origin (%s), query and all', async (path, origin) => {
    const answer = await echo(path);
    expect(answer.origin).toBe(origin);
    expect(answer.url).toBe(path);
  });

  it("runs the console's CloudFront function: /console is moved to /console/, a route without a file name gets the page", async () => {
    const moved = await call('/console');
    expect(moved.status).toBe(301);
    expect(moved.headers.get('location')).toBe('/console/');
    expect((await echo('/console/projects/p1/keys')).url).toBe('/console/index.html');
  });

  it("runs the default behaviour's function: GET / goes to the console", async () => {
    const root = await call('/');
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
  });

  it("sets x-forwarded-host from the viewer's Host on the console API, whatever the client sent, and passes body and cookies", async () => {
    const answer = await echo('/console/api/session', {
      method: 'POST',
      headers: { 'x-forwarded-host': 'attacker.example', cookie: 'session=abc', 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(answer.headers['x-forwarded-host']).toBe(new URL(frontDoor.url).host);
    expect(answer.headers.cookie).toBe('session=abc');
    expect(answer.body).toBe('{"a":1}');
    expect(answer.method).toBe('POST');
  });

  it("writes the response headers policy over every answer, the origin's CSP included", async () => {
    for (const path of ['/console/', '/v1/projects/p1/keys', '/v1/loader/validate', '/console']) {
      const response = await call(path);
      for (const [name, value] of Object.entries(securityHeaders(UPLOAD_ORIGIN))) expect(response.headers.get(name), `${name} on ${path}`).toBe(value);
    }
  });

  it('leaves the local-only /_local/ paths to the local server, without the policy', async () => {
    const response = await call('/_local/inbox');
    expect(((await response.json()) as Echo).origin).toBe('ownerApi');
    expect(response.headers.get('content-security-policy')).toBe("connect-src 'self'");
  });

  it('refuses a Host that is not a loopback name (DNS rebinding), as the local server does', async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${frontDoor.url}/v1/projects`, { headers: { host: 'attacker.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
