import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_CHECKPOINT_SECONDS } from '#domain/free-keys/session';
import { launchBrowser, NO_BROWSER_REASON } from '#local/browser';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';

/**
 * The key page's whole way in headless Chromium against `npm start`'s stack: the demo project's three checkpoints on
 * the providers' local stand-ins, then the key, with axe-core on each page. Each checkpoint waits its minimum time.
 */
if (NO_BROWSER_REASON) console.warn(`Free keys browser test skipped: ${NO_BROWSER_REASON}`);

const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const MACHINE = 'e'.repeat(64);

let stack: LocalStack;
let browser: Browser;
let page: Page;

async function axeViolations(target: Page): Promise<string[]> {
  await target.evaluate(await AXE_SOURCE);
  return (await target.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_21_AA)} } }).then((r) => r.violations.map((v) => v.id + ': ' + v.help))`,
  )) as string[];
}

describe.runIf(!NO_BROWSER_REASON)('the key page in headless Chromium', () => {
  beforeAll(async () => {
    stack = await startLocalStack({
      port: await freePort(),
      dynamodbEndpoint: dynamodbEndpoint(),
      tableName: `free-browser-${Date.now()}`,
      stateFile: `/tmp/free-browser-${process.pid}.json`,
    });
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('walks the three checkpoints on a phone-sized screen and shows the key, axe-clean on every page', async () => {
    await page.goto(`${stack.baseUrl}/v1/free/${stack.projectId}?m=${MACHINE}`);
    for (const index of [1, 2, 3]) {
      await page.getByRole('heading', { level: 1, name: `Checkpoint ${index} of 3` }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('link', { name: `Continue to checkpoint ${index}` }).click();
      await page.getByRole('link', { name: 'Continue' }).waitFor();
      await page.waitForTimeout(MIN_CHECKPOINT_SECONDS.workink * 1000);
      await page.getByRole('link', { name: 'Continue' }).click();
    }
    await page.getByRole('heading', { level: 1, name: 'Your key' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.getByLabel('Copy this key now: it is shown only once.').inputValue()).toMatch(/^sdk_/);
  }, 120_000);
});
