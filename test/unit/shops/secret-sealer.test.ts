import { describe, expect, it } from 'vitest';
import { keySecretSealer } from '#adapters/secret-sealer';
import { memoryKeySecret } from '#local/key-secret';

describe('shop secrets sealed at rest', () => {
  it('opens what it sealed, for the same connection only, and the sealed text holds no trace of the secret', async () => {
    const sealer = keySecretSealer(memoryKeySecret());
    const sealed = await sealer.seal('whsec_plain_signing_secret', 'shop_00000000000000000001');
    expect(sealed).not.toContain('whsec');
    expect(sealed).not.toContain(Buffer.from('whsec_plain_signing_secret').toString('base64url').slice(0, 12));
    expect(await sealer.open(sealed, 'shop_00000000000000000001')).toBe('whsec_plain_signing_secret');
    await expect(sealer.open(sealed, 'shop_00000000000000000002')).rejects.toThrow();
    // Another stack's key secret cannot open it either.
    await expect(keySecretSealer(memoryKeySecret()).open(sealed, 'shop_00000000000000000001')).rejects.toThrow();
  });

  it("keeps each kind of secret apart: a shop's sealed secret does not open as a free keys' provider secret", async () => {
    const keySecret = memoryKeySecret();
    const sealed = await keySecretSealer(keySecret).seal('whsec_plain', 'ctx');
    expect(await keySecretSealer(keySecret, 'shop').open(sealed, 'ctx')).toBe('whsec_plain');
    await expect(keySecretSealer(keySecret, 'freeKeys').open(sealed, 'ctx')).rejects.toThrow();
  });

  it('seals the same secret differently each time (a fresh IV)', async () => {
    const sealer = keySecretSealer(memoryKeySecret());
    expect(await sealer.seal('s3cret-value', 'c')).not.toBe(await sealer.seal('s3cret-value', 'c'));
  });
});
