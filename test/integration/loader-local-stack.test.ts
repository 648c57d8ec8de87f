import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '#dashboard/commands';
import { type DashboardContext, openContext } from '#dashboard/context';
import { KEY_ABUSE_THRESHOLDS } from '#domain/analytics/detectors';
import { EMBED_COLORS } from '#domain/webhooks/embeds';
import { type LocalStack, startLocalStack } from '#local/stack';
import type { StackInfo } from '#local/state-file';
import type { LoaderCheckRequest } from '#schemas/loader';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';
import { expectEmbeds } from '#test-support/local-stack-inbox';

/**
 * The loader key check end to end over HTTP in the running local stack (`npm start` on the integration run's
 * DynamoDB Local): the demo key from the state file, a revoke through the owner API, and checks alone driving
 * analytics events to embeds at the stack's Discord stand-in. The daily execution_drop needs checks on two past
 * days, which a check (stamped with the server's clock) cannot make: loader-check.test.ts drives it with an
 * injected clock.
 */

const FP = (n: number) => n.toString(16).padStart(64, '0');
const HOUR = 3600;

let stack: LocalStack;
let dashboard: { context: DashboardContext; close(): void };

/** A check's body: the fields a test leaves out get a default fingerprint and executor. */
type Check = Pick<LoaderCheckRequest, 'project_id' | 'key'> & Partial<LoaderCheckRequest>;

/** A JSON POST to the stack; with `token`, as the owner API's bearer. */
async function post(path: string, body: unknown, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** `POST /v1/loader/validate` as a loader sends it: no bearer token unless given. */
const validate = (check: Check, token?: string) => post('/v1/loader/validate', { fingerprint: FP(1), executor: 'Wave', ...check }, token);

/** Fresh keys of the demo project with their raw values, as `keys issue` prints them once. */
async function issueKeys(...flags: string[]): Promise<{ id: string; key: string }[]> {
  const { keys } = (await COMMANDS['keys issue']!.prepare(['--project', stack.projectId, ...flags])(dashboard.context)) as {
    keys: { id: string; key: string }[];
  };
  return keys;
}
const issueKey = async () => (await issueKeys())[0]!;

beforeAll(async () => {
  stack = await startLocalStack({
    port: await freePort(),
    dynamodbEndpoint: dynamodbEndpoint(),
    tableName: `local-loader-${Date.now()}`,
    stateFile: `/tmp/local-loader-${process.pid}.json`,
  });
  dashboard = openContext({ kind: 'local', endpoint: stack.dynamodbEndpoint, tableName: stack.tableName });
  // The demo's seeded uploads are delivered first, so the inbox holds nothing the checks below did not cause.
  await expectEmbeds(stack.discord, EMBED_COLORS.version_deployed, 3);
}, 120_000);

afterAll(async () => {
  dashboard?.close();
  await stack?.stop();
});

describe('the loader key check in the local stack, over HTTP', () => {
  it('the demo key of .local/stack.json answers KEY_VALID, and KEY_REVOKED on the very next check after the owner API revoked its demoKeyId', async () => {
    const info = JSON.parse(await readFile(stack.stateFile, 'utf8')) as StackInfo;
    const check = { project_id: info.projectId, key: info.demoKey };
    const valid = await validate(check);
    expect(valid).toEqual({
      status: 200,
      body: { valid: true, code: 'KEY_VALID', key_id: expect.any(String), expires_at: expect.any(Number), uses_left: null },
    });

    expect(valid.body.key_id).toBe(info.demoKeyId);
    expect(await post(`/v1/projects/${info.projectId}/keys/revoke`, { key_id: info.demoKeyId }, info.token)).toEqual({ status: 200, body: { ok: true } });
    expect(await validate(check)).toEqual({ status: 200, body: { valid: false, code: 'KEY_REVOKED' } });
  });

  it('after a bulk revoke through the owner API answered 200, the next check of every key of the watermark answers KEY_REVOKED, and another key still KEY_VALID', async () => {
    const marked = await issueKeys('--count', '3', '--watermark', '5eed5eed5eed5eed');
    const [other] = await issueKeys();
    for (const { key } of marked) expect((await validate({ project_id: stack.projectId, key })).body.code).toBe('KEY_VALID');
    const revoked = await post(`/v1/projects/${stack.projectId}/keys/revoke-bulk`, { watermark: '5eed5eed5eed5eed' }, stack.token);
    expect(revoked).toEqual({ status: 200, body: { ok: true, revoked_count: 3, complete: true } });
    for (const { key } of marked)
      expect(await validate({ project_id: stack.projectId, key })).toEqual({ status: 200, body: { valid: false, code: 'KEY_REVOKED' } });
    expect((await validate({ project_id: stack.projectId, key: other!.key })).body.code).toBe('KEY_VALID');
  });

  it('counts one use per valid check over HTTP: a key of max_uses 2 answers uses_left 1, then 0, then KEY_OVER_LIMIT, which posts one key_abuse embed', async () => {
    const [issued] = await issueKeys('--max-uses', '2');
    const { id, key } = issued!;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await validate({ project_id: stack.projectId, key })).body);
    expect(answers).toEqual([
      expect.objectContaining({ code: 'KEY_VALID', uses_left: 1 }),
      expect.objectContaining({ code: 'KEY_VALID', uses_left: 0 }),
      { valid: false, code: 'KEY_OVER_LIMIT' },
    ]);
    // A check of a spent key is the over_max_uses pattern.
    const [embed] = await expectEmbeds(stack.discord, EMBED_COLORS.key_abuse, 1, id.replaceAll('_', '\\\\_'));
    expect(embed?.fields?.find((field) => field.name === 'Threshold')?.value).toBe('2');
  });

  it('is public: a bogus bearer token is ignored (200), and malformed input is a 400 naming the field, never a 401', async () => {
    const key = stack.demoKey;
    expect((await validate({ project_id: stack.projectId, key }, 'sdt_not-a-token')).status).toBe(200);
    expect(await validate({ project_id: stack.projectId, key, fingerprint: 'not-hex' }, 'sdt_not-a-token')).toEqual({
      status: 400,
      body: { error: "fingerprint must be 64 lowercase hex characters: the SHA-256 of the machine's id, never the id itself" },
    });
    expect(await post('/v1/loader/validate', { project_id: stack.projectId, fingerprint: FP(1), executor: 'Wave' })).toEqual({
      status: 400,
      body: { error: 'key is required' },
    });
  });

  it('checks of one key from 6 fingerprints within the hour post exactly one key_abuse embed naming the key', async () => {
    const { id, key } = await issueKey();
    // Six checks straddling an hour's end would fall into two windows: start them in a fresh hour then.
    const secondsLeftInHour = HOUR - (Math.floor(Date.now() / 1000) % HOUR);
    if (secondsLeftInHour < 10) await new Promise((resolve) => setTimeout(resolve, (secondsLeftInHour + 1) * 1000));
    const fingerprints = KEY_ABUSE_THRESHOLDS.distinctFingerprintsMoreThan + 1;
    for (let n = 1; n <= fingerprints; n++) expect((await validate({ project_id: stack.projectId, key, fingerprint: FP(n) })).body.code).toBe('KEY_VALID');
    // Markdown-escaped as Discord needs it, so `key_…` does not turn italic.
    const [embed] = await expectEmbeds(stack.discord, EMBED_COLORS.key_abuse, 1, id.replaceAll('_', '\\\\_'));
    expect(embed?.fields?.find((field) => field.name === 'Key')?.value).toBe(id.replaceAll('_', '\\_'));
    expect(embed?.fields?.find((field) => field.name === 'Seen')?.value).toMatch(/^6 distinct devices/);
  });

  it('a valid check by an executor never seen for the project posts one new_executor embed naming it', async () => {
    const { key } = await issueKey();
    expect((await validate({ project_id: stack.projectId, key, executor: 'Loader E2E Executor' })).body.code).toBe('KEY_VALID');
    expect((await validate({ project_id: stack.projectId, key, executor: 'Loader E2E Executor' })).body.code).toBe('KEY_VALID');
    // Every check so far ran as executor Wave, which has its own embed: this one names the new executor.
    await expectEmbeds(stack.discord, EMBED_COLORS.new_executor, 1, 'Loader E2E Executor');
  });

  it("valid checks reporting another hash than the version's upload post one clone_detected embed naming both", async () => {
    const { key } = await issueKey();
    // The demo's current version: its uploaded sha256 is the original a clone is judged against.
    const { scriptVersions } = dashboard.context.stores;
    const versionId = (await scriptVersions.currentVersionId(stack.projectId)) ?? '';
    const original = (await scriptVersions.version(stack.projectId, versionId))?.sha256 ?? '';
    const clone = 'c0ffee'.repeat(10).padEnd(64, '0');
    for (const script_hash of [original, clone, clone]) {
      expect((await validate({ project_id: stack.projectId, key, script_hash, version_id: versionId })).body.code).toBe('KEY_VALID');
    }
    const [embed] = await expectEmbeds(stack.discord, EMBED_COLORS.clone_detected, 1);
    const field = (name: string) => embed?.fields?.find((candidate) => candidate.name === name)?.value;
    expect({ newHash: field('New hash'), originalHash: field('Original hash') }).toEqual({
      newHash: expect.stringContaining(clone.slice(0, 16)),
      originalHash: expect.stringContaining(original.slice(0, 16)),
    });
  });
});
