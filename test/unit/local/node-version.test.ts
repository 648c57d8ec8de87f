import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { oldNodeProblem, REQUIRED_NODE_MAJOR } from '#local/node-version';

const REPO_ROOT = new URL('../../../', import.meta.url);
const repoFile = (name: string) => readFile(new URL(name, REPO_ROOT), 'utf8');

describe('the Node version a newcomer needs', () => {
  it('is named where nvm, fnm, nodenv, asdf and volta look, and in package.json engines, all the same major', async () => {
    expect((await repoFile('.nvmrc')).trim()).toBe(String(REQUIRED_NODE_MAJOR));
    expect((await repoFile('.node-version')).trim()).toBe(String(REQUIRED_NODE_MAJOR));
    const manifest = JSON.parse(await repoFile('package.json')) as { engines: { node: string }; volta: { node: string } };
    expect(manifest.engines.node).toBe(`>=${REQUIRED_NODE_MAJOR}`);
    // Volta wants an exact version: the one CI runs.
    expect(manifest.volta.node).toBe(/NODE_22='([\d.]+)'/.exec(await repoFile('.ci/node-22.sh'))?.[1]);
    expect(manifest.volta.node.split('.')[0]).toBe(String(REQUIRED_NODE_MAJOR));
  });

  it('refuses an older Node with a sentence naming the tool and the fix, and accepts 22 and newer', () => {
    expect(oldNodeProblem('The local stack', '20.20.2')).toBe(
      "The local stack needs Node 22 or newer (the Lambda runtime's version); this is Node 20.20.2: run nvm use (or fnm use; .nvmrc names the version), or install Node 22 from https://nodejs.org.",
    );
    expect(oldNodeProblem('The local stack', '22.0.0')).toBeUndefined();
    expect(oldNodeProblem('The local stack', '24.1.0')).toBeUndefined();
  });
});
