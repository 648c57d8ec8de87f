import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isMainModule } from '#local/main-module';

const dir = mkdtempSync(join(tmpdir(), 'main-module-'));
const script = join(dir, 'cli.ts');
writeFileSync(script, '');
symlinkSync(dir, join(dir, 'linked'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('isMainModule: the entry points of npm run dashboard, loader and start', () => {
  it('is true for the script node started, also when started through a symlinked folder', () => {
    expect(isMainModule(pathToFileURL(script).href, script)).toBe(true);
    expect(isMainModule(pathToFileURL(script).href, join(dir, 'linked', 'cli.ts'))).toBe(true);
  });

  it('is false for another script, no script, or a path that names no file', () => {
    expect(isMainModule(pathToFileURL(script).href, join(dir, 'other.ts'))).toBe(false);
    expect(isMainModule(pathToFileURL(script).href, undefined)).toBe(false);
    writeFileSync(join(dir, 'other.ts'), '');
    expect(isMainModule(pathToFileURL(script).href, join(dir, 'other.ts'))).toBe(false);
  });
});
