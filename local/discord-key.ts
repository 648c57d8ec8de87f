import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The local stack's stand-in for a Discord application's key pair: Discord signs interactions with the private key
 * and the publisher links the public key; locally `discord simulate` signs with this one, and the demo project is
 * linked to its public key (DESIGN.md, "Buyers help themselves in Discord").
 */
const DEFAULT_DISCORD_KEY_FILE = fileURLToPath(new URL('../.local/discord-key.pem', import.meta.url));

export interface DiscordKeyPair {
  /** 64 hex: what `discord link --public-key` takes, as Discord's developer portal shows it. */
  publicKeyHex: string;
  /** Discord's signature of a request: Ed25519 over the timestamp followed by the body, hex. */
  signRequest(timestamp: string, body: string): string;
}

function keyPairOf(privateKey: KeyObject): DiscordKeyPair {
  // An Ed25519 SubjectPublicKeyInfo ends with the 32 bytes of the key itself.
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return {
    publicKeyHex: spki.subarray(spki.length - 32).toString('hex'),
    signRequest: (timestamp, body) => sign(null, Buffer.from(timestamp + body, 'utf8'), privateKey).toString('hex'),
  };
}

/** The key pair in `path` (PKCS#8 PEM, readable by the user only), made at the first start and kept. */
export async function fileDiscordKeyPair(path: string = DEFAULT_DISCORD_KEY_FILE): Promise<DiscordKeyPair> {
  await mkdir(dirname(path), { recursive: true });
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' });
  // `wx`: only the first start writes it; a second stack started at the same moment reads the first one's.
  await writeFile(path, pem, { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  let key: KeyObject;
  try {
    key = createPrivateKey(await readFile(path, 'utf8'));
  } catch {
    throw new Error(`${path} must hold an Ed25519 private key (PEM); delete it to make a new one`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${path} holds a ${key.asymmetricKeyType} key, not Ed25519; delete it to make a new one`);
  return keyPairOf(key);
}

/** A key pair for one process's life (a test's own application). */
export function memoryDiscordKeyPair(): DiscordKeyPair {
  return keyPairOf(generateKeyPairSync('ed25519').privateKey);
}
