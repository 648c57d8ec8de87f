import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_SENTENCES } from '#domain/scripts';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';

/**
 * README.md's "Worked example" block, run as written with bash on a started local stack, step by step: a fresh
 * owner and project, a script upload, a key sold over the API, the buyer's stub loader printing the script stamped
 * with the key's watermark, `sdapi leak` on that output revoking the key, and the stub's next run refused.
 *
 * The block reads `./.local/stack.json` and runs `npm run`/`npx` in the current folder, so it runs in a copy of
 * the repository made of links whose `.local/stack.json` is this test's stack (a person's running `npm start` is
 * not touched). The dashboard CLI finds its table by the module's own folder, which is the real repository, so it
 * is pointed at this stack by its documented variables instead (DYNAMODB_ENDPOINT, TABLE_NAME, SCRIPT_BUCKET,
 * S3_ENDPOINT).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** The first bash fence under "## Worked example", split at its `# N.` step comments (step 0 is the setup). */
function workedExampleSteps(readme: string): { number: number; text: string }[] {
  const section = readme.split(/^## /m).find((part) => part.startsWith('Worked example\n'));
  const block = section?.match(/^```bash\n([\s\S]*?)^```$/m)?.[1];
  if (!block) throw new Error('README.md has no ```bash block under "## Worked example"');
  const steps = [{ number: 0, text: '' }];
  for (const line of block.split('\n')) {
    const start = line.match(/^# (\d+)\. /);
    if (start) steps.push({ number: Number(start[1]), text: '' });
    steps[steps.length - 1]!.text += `${line}\n`;
  }
  return steps;
}

let stack: LocalStack;
let dir: string;
let output: Map<number, string>;
let stderr: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'worked-example-'));
  const checkout = join(dir, 'checkout');
  mkdirSync(join(checkout, '.local'), { recursive: true });
  for (const entry of readdirSync(ROOT)) if (entry !== '.local') symlinkSync(join(ROOT, entry), join(checkout, entry));
  stack = await startLocalStack({
    port: await freePort(),
    dynamodbEndpoint: dynamodbEndpoint(),
    tableName: `local-example-${Date.now()}`,
    stateFile: join(checkout, '.local', 'stack.json'),
  });

  const steps = workedExampleSteps(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const step5 = steps.find((step) => step.number === 5);
  // A marker after each step cuts the output into steps; step 5 again (as 8) is the README's "run step 5 again".
  const script = [...steps, ...(step5 ? [{ number: 8, text: step5.text }] : [])].map((step) => `${step.text}echo "@@step ${step.number}@@"\n`).join('');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
    DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
    TABLE_NAME: stack.tableName,
    SCRIPT_BUCKET: stack.bucketName,
    S3_ENDPOINT: stack.s3Endpoint,
    // The table is named by the variables above rather than by .local/stack.json, so its URL is named too.
    LOADER_BASE_URL: stack.baseUrl,
    TMPDIR: dir,
  };
  for (const name of ['SDAPI_BASE_URL', 'SDAPI_TOKEN', 'SDAPI_PROJECT', 'STACK_NAME']) delete env[name];
  const result = await run('bash', ['-c', script], { cwd: checkout, env, maxBuffer: 16 * 1024 * 1024 });
  stderr = result.stderr;
  output = new Map();
  let from = 0;
  for (const match of result.stdout.matchAll(/^@@step (\d+)@@\n/gm)) {
    output.set(Number(match[1]), result.stdout.slice(from, match.index));
    from = match.index + match[0].length;
  }
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function step(number: number): string {
  const text = output.get(number);
  if (text === undefined) throw new Error(`step ${number} did not finish; stderr:\n${stderr}`);
  return text;
}

describe("README's worked example, run as written on a started local stack", () => {
  it('has the seven steps from a fresh owner to the refused key and a shop that delivers by itself', () => {
    expect(workedExampleSteps(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((s) => s.number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(step(0)).toBe('');
  });

  it('1-2: creates an owner and a project, and uploads the script as version 1', () => {
    expect(step(1)).toMatch(/^owner own_[0-9a-z_-]+, project prj_[0-9a-z_-]+\n$/i);
    const upload = JSON.parse(step(2)) as { version_number: number; size_bytes: number; sha256: string };
    expect(upload).toMatchObject({ version_number: 1, size_bytes: 'print("Example Script v1, licensed to WM_XXXXXXXXXXXXXXXX")\n'.length });
  });

  it("3-4: sells a key over the API, and the buyer's stub runs the script stamped with that key's watermark", () => {
    const sold = step(3).match(/^sold (key_[0-9a-z_-]+), watermark ([0-9a-f]{16})\n$/i);
    expect(sold).not.toBeNull();
    expect(step(4)).toBe(`Example Script v1, licensed to WM_${sold![2]}\n`);
  });

  it('5: sdapi leak finds that watermark in the dump and revokes its one key', () => {
    const watermark = step(3).match(/watermark ([0-9a-f]{16})/)![1]!;
    expect(step(5)).toMatch(new RegExp(`^  ${watermark} +visible +1 +1 *$`, 'm'));
    expect(step(5)).toContain(`Revoked 1 key carrying ${watermark} (revoked_count 1).`);
  });

  it("6: the stub's next run is refused with the revoked key's sentence and code (HTTP 403)", () => {
    expect(step(6)).toBe(`[Loader] ${REFUSAL_SENTENCES.KEY_REVOKED} (KEY_REVOKED)\n`);
    expect(stderr).toContain('(stub loader: HTTP 403)');
  });

  it('7: a simulated SellAuth order gets its key as the plain text the shop shows its buyer', () => {
    expect(step(7), stderr).not.toBe('');
    const answer = JSON.parse(step(7)) as { order_id: string; status: number; answer: { keys: string[] } };
    expect(answer).toMatchObject({ order_id: 'invoice-1', status: 200 });
    expect(answer.answer.keys).toHaveLength(1);
  });

  it('step 5 again on the same dump says already revoked (1 key) and revokes nothing', () => {
    const watermark = step(3).match(/watermark ([0-9a-f]{16})/)![1]!;
    expect(step(8)).toMatch(new RegExp(`^  ${watermark} +visible +1 +0 +already revoked \\(1 key\\)$`, 'm'));
    expect(step(8)).toContain('nothing to revoke');
    expect(step(8)).not.toContain('Revoked');
  });
});
