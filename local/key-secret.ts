import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KeySecret } from '#domain/ports';

/** Where `npm start` keeps the secret that order keys derive from (the stack's Secrets Manager secret in AWS). */
const DEFAULT_KEY_SECRET_FILE = fileURLToPath(new URL('../.local/key-secret', import.meta.url));

/**
 * The local stack's key secret: 32 random bytes (hex) in a file readable by the user only, made at the first start
 * and kept, so that an order repeated after a restart on a persisted table still derives its keys.
 */
export function fileKeySecret(path: string = DEFAULT_KEY_SECRET_FILE): KeySecret {
  let secret: Promise<Uint8Array> | undefined;
  const load = async (): Promise<Uint8Array> => {
    await mkdir(dirname(path), { recursive: true });
    // `wx`: only the first start writes it; a second stack started at the same moment reads the first one's.
    await writeFile(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const hex = (await readFile(path, 'utf8')).trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${path} must hold 64 hex characters (the key secret); delete it to make a new one`);
    return Buffer.from(hex, 'hex');
  };
  return { get: () => (secret ??= load()) };
}

/** A secret for one process's life: a server started by a test, whose orders need not outlive it. */
export function memoryKeySecret(): KeySecret {
  const secret = randomBytes(32);
  return { get: async () => secret };
}
