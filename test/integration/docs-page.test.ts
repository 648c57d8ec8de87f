import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE } from '#http/openapi/examples';
import { PUBLIC_DOCS } from '#http/openapi/public-docs';
import { PUBLIC_ROUTES } from '#http/public-routes';
import { ROUTES as OWNER_ROUTES } from '#http/routes';
import { launchBrowser, NO_BROWSER_REASON } from '#local/browser';
import { createDocsExtension } from '#local/docs';

/**
 * Every route the document describes: the owner routes and the public routes with an operation (Discord's
 * interactions endpoint and the shops' receiver are Discord's and the shops' contracts, in docs/discord.md and
 * docs/selling-keys.md).
 */
const ROUTES = [...OWNER_ROUTES, ...PUBLIC_ROUTES.filter((route) => PUBLIC_DOCS[route.entry] !== undefined)];

const SCREENSHOT = 'test-results/docs.png';
const DEMO_PROJECT_ID = 'prj_0123456789abcdef0123';

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  // A plain server with only the docs extension mounted, as the local stack mounts it; the rest is 404.
  const docsExtension = createDocsExtension({ exampleProjectId: DEMO_PROJECT_ID });
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    docsExtension(req, res, url)
      .then((served) => {
        if (!served) res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"Not found"}');
      })
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('local docs extension', () => {
  it('serves the OpenAPI document with this server as its server', async () => {
    const response = await fetch(`${baseUrl}/_local/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const document = (await response.json()) as { openapi: string; servers: { url: string }[]; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.servers).toEqual([{ url: baseUrl, description: 'This local stack' }]);
    expect(Object.keys(document.paths).sort()).toEqual([...new Set(ROUTES.map((route) => route.path))].sort());
  });

  it("uses the local demo project's id in its examples, so a copied example works against this stack", async () => {
    const text = await (await fetch(`${baseUrl}/_local/openapi.json`)).text();
    expect(text).not.toContain(EXAMPLE.projectId);
    const document = JSON.parse(text) as { components: { parameters: { ProjectId: { example: string } } } };
    expect(document.components.parameters.ProjectId.example).toBe(DEMO_PROJECT_ID);
  });

  it('names the branches of the loader check answer, so the page does not show it as `(any | any)`', async () => {
    const document = (await (await fetch(`${baseUrl}/_local/openapi.json`)).json()) as {
      components: { schemas: Record<string, { anyOf?: { title?: string }[] }> };
    };
    expect(document.components.schemas.LoaderCheckResponse?.anyOf?.map((branch) => branch.title)).toEqual([
      'LoaderCheckValid',
      'LoaderCheckRefused',
      'LoaderCheckBanned',
    ]);
  });

  it('points / at the docs: a browser is redirected there, anything else gets the links as JSON', async () => {
    const browser = await fetch(`${baseUrl}/`, { headers: { Accept: 'text/html,application/xhtml+xml' }, redirect: 'manual' });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/_local/docs');
    const curl = await fetch(`${baseUrl}/`);
    expect(curl.status).toBe(200);
    expect(await curl.json()).toMatchObject({ docs: `${baseUrl}/_local/docs`, openapi: `${baseUrl}/_local/openapi.json` });
  });

  it('serves only the swagger-ui files the page loads and leaves every other path to the server', async () => {
    const css = await fetch(`${baseUrl}/_local/docs/swagger-ui.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toContain('text/css');
    for (const path of ['/_local/docs/package.json', '/_local/docs/../package.json', '/_local/docs/index.html', '/_local/other']) {
      expect((await fetch(`${baseUrl}${path}`)).status, path).toBe(404);
    }
    expect((await fetch(`${baseUrl}/_local/docs`, { method: 'POST' })).status).toBe(404);
  });

  describe.runIf(!NO_BROWSER_REASON)(`rendered in headless Chromium (skipped when ${NO_BROWSER_REASON ?? 'there is no browser'})`, () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('shows every operation with its method and path', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
      const failedRequests: string[] = [];
      page.on('requestfailed', (request) => failedRequests.push(request.url()));
      await page.goto(`${baseUrl}/_local/docs`);
      await page
        .locator('.opblock')
        .nth(ROUTES.length - 1)
        .waitFor({ timeout: 60_000 });

      const operations = await page.locator('.opblock-summary').evaluateAll((blocks) =>
        blocks.map((block) => ({
          method: block.querySelector('.opblock-summary-method')?.textContent?.trim(),
          path: block.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
        })),
      );
      expect(operations).toHaveLength(ROUTES.length);
      expect(operations).toEqual(expect.arrayContaining(ROUTES.map((route) => ({ method: route.method, path: route.path }))));
      await expect(page.locator('.info .title').textContent()).resolves.toContain('Script Distribution Developer API');
      expect(failedRequests).toEqual([]);
      const schemas = await page.locator('section.models').textContent();
      expect(schemas).toContain('LoaderCheckResponse');
      expect(schemas).not.toContain('any | any');

      mkdirSync('test-results', { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(existsSync(SCREENSHOT)).toBe(true);
    });
  });
});
