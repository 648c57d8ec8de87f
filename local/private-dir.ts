import { chmod, mkdir } from 'node:fs/promises';

/**
 * Make `path` a folder only its owner can enter (0700), tightening one that exists. `npm start -- --persist` keeps
 * the table (webhook URLs with their tokens, token hashes) and the scripts there, which other users of the machine
 * must not read. On Windows the mode is ignored; the folder inherits the user profile's permissions.
 */
export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  await chmod(path, 0o700);
}
