import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { arch, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * CI's Node 22 comes from the npm registry as a tarball; .ci/node-22.sh pins its sha512 and checks it before
 * unpacking. Here `npm` is a stand-in on PATH that serves other bytes under the pinned version.
 */
const execFileAsync = promisify(execFile);
const SCRIPT = new URL('../../../.ci/node-22.sh', import.meta.url).pathname;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ci-node-pin-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync('bash', args, { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('CI unpacking Node 22 from the npm registry', () => {
  it.runIf(process.platform === 'linux' && ['x64', 'arm64'].includes(arch()))(
    'unpacks nothing of a tarball whose sha512 is not the pinned one, and says so',
    async () => {
      const fakeBin = join(dir, 'bin');
      await mkdir(fakeBin);
      // `npm pack <name>@<version>` writes <name>-<version>.tgz into the current folder: here other bytes under that name.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion in the fake npm, not a template
      await writeFile(join(fakeBin, 'npm'), '#!/usr/bin/env bash\nprintf "not the Node the registry published" > "${2%@*}-22.23.3.tgz"\n');
      await chmod(join(fakeBin, 'npm'), 0o755);
      const target = join(dir, 'node-22');

      const result = await run([SCRIPT, target], { PATH: `${fakeBin}:${process.env.PATH ?? ''}` });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/^node-linux-(x64|arm64)@22\.23\.3 from the registry does not match its pinned sha512 .*nothing was unpacked/);
      await expect(access(target)).rejects.toThrow();
    },
  );

  it("computes a file's integrity in the npm registry's form (sha512-<base64>)", async () => {
    const file = join(dir, 'some.tgz');
    await writeFile(file, 'some bytes');
    const result = await run(['-c', `source "${SCRIPT}" && integrity_of "${file}"`], {});
    expect(result.stdout).toBe(`sha512-${createHash('sha512').update('some bytes').digest('base64')}`);
  });
});
