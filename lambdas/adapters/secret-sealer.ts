import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { KeySecret, SecretSealer } from '#domain/ports';

/**
 * Secrets at rest: shops' signing secrets (DESIGN.md, "Shops deliver keys by themselves") and free keys' provider
 * secrets ("Free keys behind checkpoints"). AES-256-GCM under a data key derived (HKDF-SHA256, an `info` per kind of
 * secret, so one kind's sealed text never opens as another's) from the stack's key secret, which Secrets Manager keeps
 * encrypted under KMS and only the functions granted it can read (locally `.local/key-secret`, local/key-secret.ts).
 * The context (a shop's connection id, a free keys' project id) is the GCM additional data, so a sealed secret moved
 * to another connection or project does not open. `@aws-sdk/client-kms` is not a dependency; a KMS
 * `Encrypt`/`Decrypt` sealer would implement the same port.
 */
const INFO = { shop: 'script-distribution/shop-signing-secret/v1', freeKeys: 'free-keys/provider-secrets/v1' } as const;
const VERSION = 'v1';

export function keySecretSealer(keySecret: KeySecret, kind: keyof typeof INFO = 'shop'): SecretSealer {
  let key: Promise<Buffer> | undefined;
  const dataKey = () => (key ??= keySecret.get().then((secret) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), INFO[kind], 32))));
  return {
    async seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', await dataKey(), iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), sealed.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    async open(sealed, context) {
      const [version, iv, text, tag] = sealed.split('.');
      if (version !== VERSION || !iv || text === undefined || !tag) throw new Error('A sealed secret of an unknown form');
      const decipher = createDecipheriv('aes-256-gcm', await dataKey(), Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(text, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
