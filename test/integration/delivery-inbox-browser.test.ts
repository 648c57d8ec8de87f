import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEmbed } from '#domain/webhooks/embeds';
import { launchBrowser, NO_BROWSER_REASON } from '#local/browser';
import type { ProjectEvent } from '#schemas/events';
import { type ServedStandIn, serveStandIn } from '#test-support/delivery-helpers';
import { FIXED_NOW } from '#test-support/event-fixtures';

const SCREENSHOT = 'test-results/inbox.png';
if (NO_BROWSER_REASON) console.warn(`Inbox browser test skipped: ${NO_BROWSER_REASON}`);

/** A name that would break out of the bold, and out of the page, if the inbox did not escape it. */
const NASTY_NAME = 'Aimbot *Deluxe* <img src=x onerror="document.title=\'pwned\'">';

const deployed = (versionNumber: number): ProjectEvent => ({
  name: 'version_deployed',
  projectId: 'prj_0a1b2c3d4e',
  occurredAt: FIXED_NOW,
  data: { versionId: 'ver_1', versionNumber, sizeBytes: 12_595, notes: '' },
});

let served: ServedStandIn;
let browser: Browser;

const post = (event: ProjectEvent) =>
  fetch(`${served.url}/_local/discord/webhooks/123456789012345678/tok?wait=true`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ embeds: [buildEmbed(event, NASTY_NAME)] }),
  });

describe.runIf(!NO_BROWSER_REASON)('inbox page in headless Chromium', () => {
  beforeAll(async () => {
    served = await serveStandIn();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('draws a received embed like Discord: color bar, title, bold name, inline fields, footer', async () => {
    expect((await post(deployed(3))).status).toBe(200);
    const page = await browser.newPage({ viewport: { width: 900, height: 520 } });
    await page.goto(`${served.url}/_local/inbox`);
    const embed = page.locator('.embed').first();
    await embed.waitFor({ timeout: 60_000 });

    expect(await embed.locator('.embed-title').textContent()).toBe('New version deployed');
    expect(await embed.locator('.embed-description strong').textContent()).toBe(NASTY_NAME);
    expect(await embed.locator('.embed-description').textContent()).toBe(`${NASTY_NAME} (prj_0a1b2c3d4e)`);
    expect(await embed.locator('.embed-field-name').allTextContents()).toEqual(['Version', 'Size', 'Notes']);
    expect(await embed.locator('.embed-field-value').allTextContents()).toEqual(['v3', '12.3 KB', 'No notes']);
    expect(await embed.locator('.embed-field-value em').textContent()).toBe('No notes');
    expect(await embed.locator('.embed-footer').textContent()).toMatch(/^Script Distribution • \S/);
    // Which webhook got the message: the id only, never its token.
    expect(await page.locator('.message .webhook').first().textContent()).toBe('via webhook 123456789012345678');
    // Through the element's window: this project compiles without the DOM library's globals.
    expect(await embed.evaluate((node) => node.ownerDocument.defaultView?.getComputedStyle(node).borderLeftColor)).toBe('rgb(34, 194, 228)');
    // The three inline fields share one row.
    const boxes = await Promise.all((await embed.locator('.embed-field').all()).map((field) => field.boundingBox()));
    expect(new Set(boxes.map((box) => box?.y)).size).toBe(1);
    // Nothing in the message became markup.
    expect(await page.locator('.embed img').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');

    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.close();
  });

  it('shows a new message on top without a reload', async () => {
    const page = await browser.newPage();
    await page.goto(`${served.url}/_local/inbox`);
    await page.locator('.embed').first().waitFor({ timeout: 60_000 });
    const before = await page.locator('.message').count();

    expect((await post(deployed(4))).status).toBe(200);
    await expect.poll(() => page.locator('.message').count(), { timeout: 60_000, interval: 100 }).toBeGreaterThan(before);
    expect(await page.locator('.embed').first().locator('.embed-field-value').first().textContent()).toBe('v4');
    await page.close();
  });
});
