import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileKeySecret } from '#local/key-secret';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'key-secret-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the local stack's key secret file", () => {
  it('is made at first use, 32 random bytes readable by the user only, and read back unchanged by a later start', async () => {
    const path = join(dir, 'nested', 'key-secret');
    const first = await fileKeySecret(path).get();
    expect(first).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(await fileKeySecret(path).get()).equals(Buffer.from(first))).toBe(true);
    expect(Buffer.from(await fileKeySecret(join(dir, 'other')).get()).equals(Buffer.from(first))).toBe(false);
  });

  it('refuses a file that does not hold 64 hex characters, saying how to fix it', async () => {
    const path = join(dir, 'key-secret');
    writeFileSync(path, 'not a secret\n');
    await expect(fileKeySecret(path).get()).rejects.toThrow(`${path} must hold 64 hex characters (the key secret); delete it to make a new one`);
  });
});
