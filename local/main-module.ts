import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Whether the module at `moduleUrl` is the script node was started with. Compared by real path: from a symlinked
 * checkout argv[1] is the link while import.meta.url is the file it points to, and a plain comparison made
 * `npm run dashboard`, `npm run loader` and `npm start` there print nothing and exit 0.
 */
export function isMainModule(moduleUrl: string, argv1: string | undefined = process.argv[1]): boolean {
  if (!argv1) return false;
  try {
    return realpathSync(resolve(argv1)) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    // argv[1] names no file (a REPL, an -e script): this module was imported, not started.
    return false;
  }
}
