import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where a Chromium-family browser usually is, by platform; CHROME_PATH names any other. */
const CANDIDATES: Partial<Record<NodeJS.Platform, string[]>> = {
  linux: ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'],
  darwin: [
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
    '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
  ],
  win32: [
    'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
    'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe',
    'C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe',
  ],
};

/** The browser the page tests and `npm run smoke` drive (playwright-core brings none; `npx playwright install` needs a download). */
export const BROWSER_PATH: string | undefined = [process.env.CHROME_PATH ?? '', ...(CANDIDATES[process.platform] ?? [])].find(
  (path) => path !== '' && existsSync(path),
);

/** Why the page tests (and the smoke test's browser upload) do not run here, for the skip message; undefined when they do. */
export const NO_BROWSER_REASON = BROWSER_PATH
  ? undefined
  : 'no Chromium, Chrome or Edge found: install one (Debian: apt-get install -y chromium) or set CHROME_PATH';

/** Headless, with no background traffic: the machines that run the tests may have no network but loopback. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: BROWSER_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
