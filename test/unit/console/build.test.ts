import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, CONSOLE_FILES } from '../../../console/build';

const REPO_ROOT = new URL('../../../', import.meta.url).pathname;
let outDir: string;

describe('console build', () => {
  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'console-build-'));
    await buildConsole(outDir);
  });
  afterAll(() => rm(outDir, { recursive: true, force: true }));

  it('writes a page that loads one script file and one stylesheet, with no inline script or style', async () => {
    const page = await readFile(join(outDir, CONSOLE_FILES.page), 'utf8');
    expect(page).toMatch(new RegExp(`<script type="module" src="${CONSOLE_FILES.script}\\?v=[0-9a-f]{12}"></script>`));
    expect(page).toMatch(new RegExp(`<link rel="stylesheet" href="${CONSOLE_FILES.styles}\\?v=[0-9a-f]{12}" />`));
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect((await readFile(join(outDir, CONSOLE_FILES.script), 'utf8')).length).toBeGreaterThan(0);
    expect((await readFile(join(outDir, CONSOLE_FILES.icon), 'utf8')).startsWith('<svg')).toBe(true);
  });

  it('never renders markup from a string: no dangerouslySetInnerHTML or innerHTML in the pages', async () => {
    const script = await readFile(join(outDir, CONSOLE_FILES.script), 'utf8');
    // Preact's own diff names the prop to support it; the pages' sources must never set it.
    const { stdout } = await promisify(execFile)(
      'grep',
      ['-rlE', 'dangerouslySetInnerHTML|innerHTML|insertAdjacentHTML|eval\\(', join(REPO_ROOT, 'console/src')],
      {},
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    expect(stdout).toBe('');
    expect(script).not.toMatch(/localStorage|sessionStorage/);
  });

  it('typechecks the pages against the DOM library (the root tsconfig has none)', async () => {
    await expect(promisify(execFile)(join(REPO_ROOT, 'node_modules/.bin/tsc'), ['-p', join(REPO_ROOT, 'console/tsconfig.json')])).resolves.toBeDefined();
  });
});
