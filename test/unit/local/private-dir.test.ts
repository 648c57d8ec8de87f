import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensurePrivateDir } from '#local/private-dir';

/** `npm start -- --persist DIR` keeps webhook tokens and scripts in DIR (issue 33 item 6). */
describe.skipIf(process.platform === 'win32')('the persisted data folder', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'private-dir-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

  it('is created readable by its owner only', async () => {
    const dir = join(root, 'new', 'data');
    await ensurePrivateDir(dir);
    expect(await modeOf(dir)).toBe(0o700);
  });

  it('is tightened when an earlier run left it world-readable', async () => {
    const dir = join(root, 'old');
    await mkdir(dir, { mode: 0o755 });
    await ensurePrivateDir(dir);
    expect(await modeOf(dir)).toBe(0o700);
  });
});
