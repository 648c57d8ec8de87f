import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { shopSignatureHeaders } from '#domain/shops/signatures';
import { contentSecurityPolicy } from '#lib/front-door-rules';
import { launchBrowser, NO_BROWSER_REASON } from '#local/browser';
import { DEMO_PROJECT_NAME } from '#local/seed';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';

/**
 * The console's pages in headless Chromium against `npm start`'s stack (the same handlers, the built pages), driven
 * by role and accessible name as DESIGN.md "Publisher console" names them, with axe-core on every page.
 */
if (NO_BROWSER_REASON) console.warn(`Console browser tests skipped: ${NO_BROWSER_REASON}`);

const MARKUP_NOTE = 'alice <img src=x onerror=alert(1)>';
const WEBHOOK_URL = 'https://discord.com/api/webhooks/223456789012345678/console-test-token';
const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let stack: LocalStack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let consoleUrl: string;
/** The raw values the Issue keys form showed, which no later answer may hold. */
let issuedRawKeys: string[] = [];
/** Dialogs the page opened by itself (alert(), confirm()): markup that ran would open one. */
const scriptDialogs: string[] = [];

interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's WCAG 2.1 A and AA rules on the page as it is; evaluate() runs outside the page's CSP, as a test tool does. */
async function axeViolations(target: Page): Promise<string[]> {
  await target.evaluate(await AXE_SOURCE);
  const violations = (await target.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_21_AA)} } }).then((result) => result.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  )) as AxeViolation[];
  return violations.map((violation) => `${violation.id}: ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

const projectUrl = (rest: string) => `${consoleUrl}#/projects/${stack.projectId}/${rest}`;
const heading = (name: string) => page.getByRole('heading', { level: 1, name });

async function openProjectPage(rest: string, title: string): Promise<void> {
  await page.goto(projectUrl(rest));
  await heading(title).waitFor();
}

async function signIn(target: Page, token: string): Promise<void> {
  await target.getByLabel('API token').fill(token);
  await target.getByRole('button', { name: 'Sign in' }).click();
}

describe.runIf(!NO_BROWSER_REASON)('publisher console in headless Chromium', () => {
  beforeAll(async () => {
    stack = await startLocalStack({
      port: await freePort(),
      dynamodbEndpoint: dynamodbEndpoint(),
      tableName: `console-browser-${Date.now()}`,
      stateFile: `/tmp/console-browser-${process.pid}.json`,
    });
    consoleUrl = `${stack.baseUrl}/console/`;
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    page.on('dialog', (dialog) => {
      scriptDialogs.push(dialog.message());
      void dialog.dismiss();
    });
  }, 180_000);

  // A failed step leaves a picture of the page behind, for whoever reads the failure.
  afterEach(async (test) => {
    if (test.task.result?.state !== 'fail' || !page) return;
    mkdirSync('test-results', { recursive: true });
    await page
      .screenshot({ path: `test-results/console-${test.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.png`, fullPage: true })
      .catch(() => undefined);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('serves the console with a CSP that allows no inline script and no framing', async () => {
    const response = await fetch(consoleUrl);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    // The front door's response headers policy, as the distribution's (lib/front-door-rules.ts), naming the local S3.
    expect(csp).toBe(contentSecurityPolicy(stack.s3Endpoint));
    expect(new URL(stack.s3Endpoint).origin).not.toBe(new URL(consoleUrl).origin);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  });

  it('signs in with the keyboard only; a bad token shows an alert and stays signed out', async () => {
    await page.goto(consoleUrl);
    await page.getByLabel('API token').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('api-token');
    await page.keyboard.type('sdt_not-a-token');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: /\w/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);

    await page.getByLabel('API token').focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type(stack.token);
    await page.keyboard.press('Enter');
    await heading('Projects').waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
  });

  it('keeps no token in the page: storage empty, the session cookie out of script reach', async () => {
    expect(await page.evaluate('localStorage.length + sessionStorage.length')).toBe(0);
    expect(await page.evaluate('document.cookie')).not.toMatch(/sd_session/);
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'sd_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
  });

  it('lists the owner projects as links to their pages', async () => {
    const link = page.getByRole('link', { name: DEMO_PROJECT_NAME });
    await link.click();
    await heading('Keys').waitFor();
    for (const name of ['Key', 'Watermark', 'Status', 'Uses', 'Expires', 'Machines', 'Note'])
      expect(await page.getByRole('columnheader', { name, exact: true }).count()).toBe(1);
    await page.getByRole('row').nth(1).waitFor();
  });

  it('issues keys with a note holding markup, shows the raw values once, and the note renders as text', async () => {
    await page.getByRole('button', { name: 'Issue keys' }).click();
    await page.getByLabel('Count').fill('2');
    await page.getByLabel('Note', { exact: true }).fill(MARKUP_NOTE);
    await page.getByRole('button', { name: 'Issue keys' }).click();
    const raw = page.getByLabel('New keys');
    await raw.waitFor();
    issuedRawKeys = (await raw.inputValue()).split('\n');
    expect(issuedRawKeys).toHaveLength(2);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download' }).click();
    const saved = await (await download).path();
    expect((await readFile(saved, 'utf8')).split('\r\n')[0]).toBe('id,key,watermark,expires_at');
    await page.getByRole('button', { name: 'Copy' }).waitFor();

    await page.getByLabel('Search keys').fill('alice');
    await page.getByRole('status').filter({ hasText: 'matching the note' }).waitFor();
    const rows = page.getByRole('row').filter({ hasText: MARKUP_NOTE });
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(2);
    expect(await page.locator('td.note').first().textContent()).toBe(MARKUP_NOTE);
    expect(await page.locator('main img').count()).toBe(0);
    expect(scriptDialogs).toEqual([]);
  });

  it('revokes the selected keys after a confirmation dialog, and their rows show Revoked', async () => {
    const rows = page.getByRole('row').filter({ hasText: MARKUP_NOTE });
    for (const row of await rows.all()) await row.getByRole('checkbox').check();
    // Escape cancels the confirmation and changes nothing.
    await page.getByRole('button', { name: 'Revoke selected' }).click();
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // Focus goes back to the button that opened the dialog once it has closed (a task after the close event).
    // Read from the button, not by a string evaluated in the page: the console's CSP (the local front door's, as
    // CloudFront's) forbids eval.
    const opener = page.getByRole('button', { name: 'Revoke selected' });
    await expect.poll(() => opener.evaluate((button) => button === button.ownerDocument.activeElement), { timeout: 30_000 }).toBe(true);
    expect(await rows.getByRole('cell', { name: 'Revoked', exact: true }).count()).toBe(0);

    await page.getByRole('button', { name: 'Revoke selected' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked 2 of the 2' }).waitFor();
    // The rows are read again after the status says so: wait for that render rather than the status's.
    await expect.poll(() => rows.getByRole('cell', { name: 'Revoked', exact: true }).count(), { timeout: 30_000 }).toBe(2);
  });

  it('exports every key as CSV without a raw value', async () => {
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Export CSV' }).click();
    const csv = await readFile(await (await download).path(), 'utf8');
    const lines = csv.trim().split(/\r?\n/);
    expect(lines.length).toBeGreaterThan(2);
    expect(csv).toContain(stack.demoKeyId);
    for (const value of [...issuedRawKeys, stack.demoKey]) expect(csv).not.toContain(value);
  });

  it('finds a key by its watermark and pages through the list', async () => {
    await page.getByLabel('Search keys').fill(stack.sharedWatermark);
    await page.getByRole('status').filter({ hasText: 'matching the watermark' }).waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: stack.sharedWatermark }).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await page.getByLabel('Search keys').fill('');
    await page.getByLabel('Status').selectOption({ label: 'Revoked' });
    await page.getByRole('status').filter({ hasText: 'revoked only' }).waitFor();
    expect(await page.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
  });

  it('shows a key in detail and resets its machines after a confirmation', async () => {
    await openProjectPage('keys', 'Keys');
    await page.getByLabel('Status').selectOption({ label: 'All' });
    await page.getByLabel('Search keys').fill(stack.demoKeyId);
    await page.getByLabel('Search keys').press('Enter');
    await page.getByRole('link', { name: stack.demoKeyId }).click();
    await page.getByRole('heading', { level: 1, name: stack.demoKeyId }).waitFor();
    await page.getByText('Last check').waitFor();
    await page.getByRole('button', { name: 'Reset machines' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reset machines' }).click();
    await page.getByRole('status').filter({ hasText: 'Machines reset' }).waitFor();
  });

  it('uploads a script through the upload and commit routes, refuses an empty file, and rolls back', async () => {
    await openProjectPage('versions', 'Versions');
    await page.getByLabel('Script file').setInputFiles({ name: 'empty.lua', mimeType: 'text/plain', buffer: Buffer.alloc(0) });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('alert').filter({ hasText: 'empty' }).first().waitFor();

    await page
      .getByLabel('Script file')
      .setInputFiles({ name: 'fix.lua', mimeType: 'text/plain', buffer: Buffer.from('print("fixed") -- WM_XXXXXXXXXXXXXXXX\n') });
    await page.getByLabel('Notes').fill('Hotfix <b>bold</b>');
    await page.getByRole('button', { name: 'Upload' }).click();
    // The PUT goes to the local S3, another origin (as the bucket's endpoint in AWS): a CSP or CORS rule that refuses
    // it shows the page's alert, which the failure then quotes.
    const uploaded = page.getByRole('status').filter({ hasText: 'Uploaded version 4' });
    await uploaded
      .or(page.getByRole('alert').filter({ hasText: 'storage' }))
      .first()
      .waitFor();
    expect(await page.getByRole('alert').filter({ hasText: 'storage' }).allTextContents()).toEqual([]);
    expect(await uploaded.count()).toBe(1);
    const newest = page.getByRole('row').nth(1);
    // The list reloads after the answer: the new version tops it once it has.
    await expect.poll(() => newest.getByRole('cell').first().textContent()).toBe('v4');
    expect(await newest.getByText('Current').count()).toBe(1);
    expect(await newest.getByRole('cell', { name: 'Hotfix <b>bold</b>' }).count()).toBe(1);

    await page.getByRole('row').filter({ hasText: 'v3' }).getByRole('button', { name: 'Roll back' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await page.getByRole('status').filter({ hasText: 'Version 3 is current' }).waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'v3' }).getByText('Current').count()).toBe(1);
  });

  it('adds a webhook, sends its test embed to the inbox, disables it and deletes it', async () => {
    await openProjectPage('webhooks', 'Webhooks');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByLabel('Webhook URL').fill(WEBHOOK_URL);
    await page.getByRole('checkbox', { name: 'key_abuse' }).uncheck();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const row = page.getByRole('row').filter({ hasText: '223456789012345678' });
    await row.waitFor();
    expect(await row.textContent()).not.toContain('console-test-token');

    const before = stack.discord.received().length;
    await row.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: 'Test embed sent' }).waitFor();
    await expect.poll(() => stack.discord.received().filter((message) => message.webhook_id === '223456789012345678').length).toBeGreaterThan(0);
    expect(stack.discord.received().length).toBeGreaterThan(before);

    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByRole('cell', { name: 'Disabled', exact: true }).waitFor();
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').filter({ hasText: 'Webhook deleted' }).waitFor();
    await expect.poll(() => row.count()).toBe(0);
  });

  it('finds the watermarks of a pasted dump and revokes their keys', async () => {
    await openProjectPage('leak', 'Leak');
    await page.getByLabel('Leaked dump').fill(`local x = 1\n-- WM_${stack.sharedWatermark}\n-- WM_XXXXXXXXXXXXXXXX`);
    await page.getByRole('button', { name: 'Find keys' }).click();
    const row = page.getByRole('row').filter({ hasText: stack.sharedWatermark });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('WM_ marker');
    expect(Number(await row.getByRole('cell').nth(2).textContent())).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Revoked [1-9]\d* key/ })
      .waitFor();
    // Then it offers to blacklist the buyers of those keys, confirmed in a dialog.
    await page.getByRole('button', { name: 'Blacklist buyers' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Blacklist' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Blacklisted \d+ buyer|nobody to blacklist/ })
      .waitFor();
  });

  it('adds a buyer to the blacklist, lists the entry, and removes it after a confirmation', async () => {
    await openProjectPage('blacklist', 'Blacklist');
    await page.getByLabel('Kind').selectOption('discord_id');
    await page.getByLabel('Buyer').fill('323456789012345678');
    await page.getByLabel('Reason').fill('<img src=x onerror=alert(1)> chargeback');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Blacklisted as bld_323456789012345678' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Discord 323456789012345678' });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('<img src=x onerror=alert(1)> chargeback');
    await row.getByRole('button', { name: 'Remove bld_323456789012345678' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('status').filter({ hasText: 'Removed bld_323456789012345678' }).waitFor();
    await expect.poll(() => row.count()).toBe(0);
  });

  it('creates a token shown once and revokes it after a confirmation', async () => {
    await page.goto(`${consoleUrl}#/tokens`);
    await heading('Tokens').waitFor();
    await page.getByLabel('Scope').selectOption('read');
    await page.getByRole('button', { name: 'Create token' }).click();
    const raw = await page.getByLabel('New token').inputValue();
    expect(raw).toMatch(/^sdt_/);
    const rows = page.getByRole('row').filter({ hasText: 'read' });
    await expect.poll(() => rows.count()).toBe(1);
    await rows.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').filter({ hasText: 'revoked' }).waitFor();
    await expect.poll(() => rows.count()).toBe(0);
  });

  it('shows the audit trail newest first, with the console as the source of its changes', async () => {
    await openProjectPage('audit', 'Audit');
    const first = page.getByRole('row').nth(1);
    await first.waitFor();
    expect(await first.getByRole('cell').nth(2).textContent()).toBe('console');
  });

  it('shows the line buyers run, with a Copy button', async () => {
    await openProjectPage('loader', 'Loader');
    const line = page.locator('pre.code');
    await line.waitFor();
    const [keyLine, runLine, ...more] = (await line.textContent())?.split('\n') ?? [];
    expect(keyLine).toBe('script_key = "KEY"');
    expect(runLine?.startsWith('loadstring(game:HttpGet("http://')).toBe(true);
    expect(runLine?.endsWith(`/v1/loader/stub/${stack.projectId}"))()`)).toBe(true);
    expect(more).toEqual([]);
    expect(await page.getByRole('button', { name: 'Copy', exact: true }).count()).toBe(1);
  });

  it("shows the Discord application's interactions URL and saves a new reset cooldown", async () => {
    await openProjectPage('loader', 'Loader');
    await page.getByRole('heading', { name: 'Buyers in Discord' }).waitFor();
    await page.locator('code', { hasText: `/v1/discord/interactions/${stack.projectId}` }).waitFor();
    expect(await page.getByLabel('Public key').inputValue()).toBe(stack.discordPublicKey);
    await page.getByLabel('Reset cooldown (seconds)').fill('7200');
    await page.getByRole('button', { name: 'Save Discord link' }).click();
    await page.getByText('Discord link saved').waitFor();
    expect(await page.getByLabel('Reset cooldown (seconds)').inputValue()).toBe('7200');
  });

  it('connects a shop, shows its delivery log with a failed order to replay, and removes the shop, confirmed', async () => {
    await openProjectPage('shops', 'Shops');
    await page.getByLabel('Provider').selectOption('sellix');
    await page.getByLabel('Signing secret').fill('sellix-browser-secret');
    await page.getByLabel('Products').fill('prod_a=30d,machines=1');
    await page.getByRole('button', { name: 'Connect shop' }).click();
    await page.getByRole('status').filter({ hasText: 'Shop connected' }).waitFor();
    const url = (await page.locator('code', { hasText: '/v1/shops/shop_' }).first().textContent()) ?? '';
    expect(await page.content()).not.toContain('sellix-browser-secret');

    // The shop sends an order of a product with no mapping: refused, logged, replayable.
    const body = JSON.stringify({ event: 'order:paid', data: { uniqid: 'ord-browser', product_id: 'prod_b', quantity: 1, customer_email: 'b@example.com' } });
    const refused = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...shopSignatureHeaders('sellix', 'sellix-browser-secret', body, 0) },
      body,
    });
    expect(refused.status).toBe(422);
    await page.reload();
    await page.getByRole('button', { name: 'Replay order ord-browser' }).click();
    await page.getByRole('status').filter({ hasText: 'Replayed: unmapped' }).waitFor();

    await page.getByRole('button', { name: 'Remove sellix shop' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('status').filter({ hasText: 'Shop removed' }).waitFor();
    await page.getByText('No shop is connected yet.').waitFor();
  });

  it('draws stats charts with text alternatives and data tables, or says stats are not available yet', async () => {
    await openProjectPage('stats', 'Stats');
    const unavailable = page.getByText('Stats are not available yet');
    const chart = page.getByRole('img', { name: /Key checks by result/ }).first();
    await Promise.race([unavailable.waitFor(), chart.waitFor()]);
    if ((await chart.count()) > 0) expect(await page.getByRole('table').count()).toBe(6);
  });

  it('has no WCAG 2.1 A or AA violation on any page', async () => {
    const pages: [string, string][] = [
      ['#/projects', 'Projects'],
      ['#/tokens', 'Tokens'],
      ...(['keys', 'versions', 'webhooks', 'stats', 'leak', 'blacklist', 'audit', 'loader', 'shops'] as const).map((name): [string, string] => [
        `#/projects/${stack.projectId}/${name}`,
        name[0]?.toUpperCase() + name.slice(1),
      ]),
      [`#/projects/${stack.projectId}/keys/${stack.demoKeyId}`, stack.demoKeyId],
    ];
    const found: string[] = [];
    for (const [hash, title] of pages) {
      await page.goto(`${consoleUrl}${hash}`);
      await heading(title).waitFor();
      await page.waitForLoadState('networkidle');
      found.push(...(await axeViolations(page)).map((violation) => `${hash}: ${violation}`));
    }
    // The forms that open in place, and a confirmation dialog.
    await page.goto(`${consoleUrl}#/projects/${stack.projectId}/keys`);
    await page.getByRole('button', { name: 'Issue keys' }).click();
    await page.getByLabel('Count').waitFor();
    found.push(...(await axeViolations(page)).map((violation) => `Issue keys form: ${violation}`));
    await page.goto(`${consoleUrl}#/projects/${stack.projectId}/webhooks`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByLabel('Webhook URL').waitFor();
    found.push(...(await axeViolations(page)).map((violation) => `Add webhook form: ${violation}`));
    await page.goto(`${consoleUrl}#/projects/${stack.projectId}/versions`);
    await page.getByRole('button', { name: 'Roll back' }).first().click();
    await page.getByRole('dialog').waitFor();
    found.push(...(await axeViolations(page)).map((violation) => `Roll back dialog: ${violation}`));
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    // The signed-out page too, in a context of its own.
    const signedOut = await browser.newPage();
    await signedOut.goto(consoleUrl);
    await signedOut.getByLabel('API token').waitFor();
    found.push(...(await axeViolations(signedOut)).map((violation) => `sign-in: ${violation}`));
    await signedOut.close();
    expect(found).toEqual([]);
  });

  it('signs out: the page asks for a token again and the old cookie no longer opens a session', async () => {
    const cookie = (await context.cookies()).find((item) => item.name === 'sd_session');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    const answer = await fetch(`${stack.baseUrl}/console/api/session`, { headers: { Cookie: `sd_session=${cookie?.value}` } });
    expect(answer.status).toBe(401);
  });

  it('lets a read-scope session look and refuses its changes with a message naming the scope', async () => {
    await page.goto(`${consoleUrl}#/tokens`);
    await signIn(page, stack.token);
    await heading('Tokens').waitFor();
    await page.getByLabel('Scope').selectOption('read');
    await page.getByRole('button', { name: 'Create token' }).click();
    const readToken = await page.getByLabel('New token').inputValue();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, readToken);
    await page.getByText('read-scope token').waitFor();
    await openProjectPage('webhooks', 'Webhooks');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByLabel('Webhook URL').fill(WEBHOOK_URL);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByRole('alert').filter({ hasText: /scope/i }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: '223456789012345678' }).count()).toBe(0);
  });
});
