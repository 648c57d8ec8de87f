import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_ROUTES as ROUTES } from '#api/routes';
import { docsExtension } from '#local/docs';
import { launchBrowser, NO_BROWSER_REASON } from '#test-support/browser';

const SCREENSHOT = 'test-results/docs.png';

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  // A plain server with only the docs extension mounted, as the local stack mounts it; the rest is 404.
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

    it('shows the six operations with their methods and paths', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
      const failedRequests: string[] = [];
      page.on('requestfailed', (request) => failedRequests.push(request.url()));
      await page.goto(`${baseUrl}/_local/docs`);
      await page.locator('.opblock').nth(ROUTES.length - 1).waitFor({ timeout: 60_000 });

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

      mkdirSync('test-results', { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(existsSync(SCREENSHOT)).toBe(true);
    });
  });
});
