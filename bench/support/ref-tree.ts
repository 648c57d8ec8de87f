import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Another version of this repository, checked out from a git ref into a temporary worktree, for a benchmark to
 * measure beside this tree in the same run (`--against REF`).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface RefTree {
  ref: string;
  /** The commit the ref named, abbreviated. */
  commit: string;
  /** The worktree's root (ending in `/`); its `lambdas/` holds its functions. */
  root: string;
  /**
   * The ref's function for this tree's entry (relative to `lambdas/`): the file git says this one was renamed from
   * since the ref, else a Lambda entry of the ref (a file exporting `handler`) of the same name; undefined when the
   * ref has none (the function is newer).
   */
  entryFor(entry: string): string | undefined;
  remove(): void;
}

const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** Check out `ref` (detached) into a temporary folder with this tree's node_modules, so esbuild bundles it as it is. */
export async function checkoutRef(ref: string): Promise<RefTree> {
  const commit = git(['rev-parse', '--short', `${ref}^{commit}`]);
  const root = `${await mkdtemp(join(tmpdir(), `bench-ref-${commit}-`))}/`;
  git(['worktree', 'add', '--detach', '--quiet', root, commit]);
  // The same packages as this tree: only our code differs between the two builds.
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(root, 'node_modules'));
  const renamedFrom = new Map<string, string>();
  for (const line of git(['diff', '-M30%', '--name-status', '--diff-filter=R', commit, 'HEAD', '--', 'lambdas/']).split('\n')) {
    const [, from, to] = line.split('\t');
    if (from && to) renamedFrom.set(to.replace(/^lambdas\//, ''), from.replace(/^lambdas\//, ''));
  }
  const refEntries = git(['ls-tree', '-r', '--name-only', commit, 'lambdas/'])
    .split('\n')
    .filter((path) => path.endsWith('.ts') && /^export const handler\b/m.test(readFileSync(join(root, path), 'utf8')))
    .map((path) => path.replace(/^lambdas\//, ''));
  return {
    ref,
    commit,
    root,
    entryFor: (entry) => {
      const renamed = renamedFrom.get(entry);
      if (renamed && refEntries.includes(renamed)) return renamed;
      const sameName = refEntries.filter((candidate) => basename(candidate) === basename(entry));
      return sameName.length === 1 ? sameName[0] : undefined;
    },
    remove: () => {
      if (existsSync(root)) git(['worktree', 'remove', '--force', root]);
    },
  };
}
