import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = new URL('../../', import.meta.url);
const readJson = async <T>(name: string) => JSON.parse(await readFile(new URL(name, REPO_ROOT), 'utf8')) as T;

describe('package.json', () => {
  it('opts out of the install analytics of @scarf/scarf, which swagger-ui-dist (the local docs page) pulls in', async () => {
    const lock = await readJson<{ packages: Record<string, { dependencies?: Record<string, string> }> }>('package-lock.json');
    const pullers = Object.entries(lock.packages)
      .filter(([, entry]) => entry.dependencies?.['@scarf/scarf'] !== undefined)
      .map(([path]) => path);
    expect(pullers).toEqual(['node_modules/swagger-ui-dist']);
    const manifest = await readJson<{ scarfSettings?: { enabled?: boolean } }>('package.json');
    expect(manifest.scarfSettings).toEqual({ enabled: false });
  });
});
