import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { KeySecret } from '#domain/ports';
import { FreeKeySettings } from '#schemas/free-keys';

/**
 * Provider secrets are stored sealed (docs/security.md, "Free keys"): AES-256-GCM under a key derived (HKDF-SHA256)
 * from the stack's key secret (Secrets Manager in AWS, .local/key-secret locally), with the project id as associated
 * data, so a sealed secret copied to another project's item does not open. No sealing existed in main when this was
 * written; shop secrets may share it.
 */

const VERSION = 'v1';
const INFO = 'free-keys/provider-secrets/v1';

export interface Sealer {
  seal(projectId: string, plain: string): Promise<string>;
  open(projectId: string, sealed: string): Promise<string>;
}

export function sealerOf(secret: KeySecret): Sealer {
  let key: Promise<Buffer> | undefined;
  const keyOf = () => (key ??= secret.get().then((bytes) => Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), INFO, 32))));
  return {
    async seal(projectId, plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', await keyOf(), iv);
      cipher.setAAD(Buffer.from(projectId, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv, body, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    },
    async open(projectId, sealed) {
      const [version, iv, body, tag] = sealed.split('.');
      if (version !== VERSION || iv === undefined || body === undefined || tag === undefined) throw new Error('A sealed secret is malformed');
      const decipher = createDecipheriv('aes-256-gcm', await keyOf(), Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(projectId, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** The settings with every checkpoint's secret sealed (what the table holds), and back. */
export async function sealSettings(sealer: Sealer, projectId: string, settings: FreeKeySettings): Promise<FreeKeySettings> {
  const checkpoints = await Promise.all(settings.checkpoints.map(async (c) => ({ ...c, secret: await sealer.seal(projectId, c.secret) })));
  return { ...settings, checkpoints };
}
export async function openSettings(sealer: Sealer, projectId: string, stored: FreeKeySettings): Promise<FreeKeySettings> {
  const checkpoints = await Promise.all(stored.checkpoints.map(async (c) => ({ ...c, secret: await sealer.open(projectId, c.secret) })));
  // Parsed again once open: what the table held is read as input, never trusted as already valid.
  return FreeKeySettings.parse({ ...stored, checkpoints });
}
