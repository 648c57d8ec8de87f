import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { localS3Config } from '#adapters/script-store';
import { COMMANDS } from '#dashboard/commands';
import { type DashboardContext, openContext } from '#dashboard/context';
import { REFUSAL_SENTENCES, sha256Hex } from '#domain/scripts';
import { EMBED_COLORS } from '#domain/webhooks/embeds';
import { SCRIPT_ROUTE } from '#http/public-routes';
import type { RequestLogEntry } from '#local/server';
import { type LocalStack, startLocalStack } from '#local/stack';
import type { StackInfo } from '#local/state-file';
import { dynamodbEndpoint, freePort } from '#test-support/fixtures';
import { expectEmbeds } from '#test-support/local-stack-inbox';
import { runCli } from '#test-support/sdapi-run-cli';
import { EXIT } from '../../sdapi/errors';

/**
 * Script delivery end to end on a started local stack (`npm start` on the integration run's DynamoDB Local, with
 * its own s3rver): the demo key's fetch, 304 on a repeat, read-after-write of rollback, upload and revoke, the
 * uses counted, uploads refused whole, the leak loop with `sdapi leak`, and the script kept out of every log,
 * table item, embed and owner API answer.
 */

const FINGERPRINT = 'a'.repeat(64);

let stack: LocalStack;
let dashboard: { context: DashboardContext; close(): void };
let dir: string;
const requestLog: RequestLogEntry[] = [];

interface Fetched {
  status: number;
  headers: Headers;
  text: string;
}

async function fetchScript(projectId: string, key: string, headers: Record<string, string> = {}): Promise<Fetched> {
  const response = await fetch(`${stack.baseUrl}${SCRIPT_ROUTE.path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ project_id: projectId, key, fingerprint: FINGERPRINT, executor: 'Wave' }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function ownerPost(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${stack.token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function ownerGet(path: string): Promise<string> {
  return (await fetch(`${stack.baseUrl}${path}`, { headers: { Authorization: `Bearer ${stack.token}` } })).text();
}

async function dashboardRun(argv: string[]): Promise<Record<string, unknown>> {
  const [first, second, ...rest] = argv;
  return (await COMMANDS[`${first} ${second}`]!.prepare(rest)(dashboard.context)) as Record<string, unknown>;
}

async function issueKey(projectId: string, ...flags: string[]): Promise<{ id: string; watermark: string; key: string }> {
  const { keys } = (await dashboardRun(['keys', 'issue', '--project', projectId, ...flags])) as { keys: { id: string; watermark: string; key: string }[] };
  return keys[0]!;
}

/** Uses left of a key with a cap, read by a validate check (which itself counts one). */
async function usesLeftAfterValidate(projectId: string, key: string): Promise<number> {
  const response = await fetch(`${stack.baseUrl}/v1/loader/validate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ project_id: projectId, key, fingerprint: FINGERPRINT, executor: 'Wave' }),
  });
  return ((await response.json()) as { uses_left: number }).uses_left;
}

function scriptFile(name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function objectCount(): Promise<number> {
  const s3 = new S3Client(localS3Config(stack.s3Endpoint));
  try {
    return (await s3.send(new ListObjectsV2Command({ Bucket: stack.bucketName }))).KeyCount ?? 0;
  } finally {
    s3.destroy();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'script-delivery-'));
  stack = await startLocalStack({
    port: await freePort(),
    dynamodbEndpoint: dynamodbEndpoint(),
    tableName: `local-scripts-${Date.now()}`,
    stateFile: join(dir, 'stack.json'),
    onRequest: (entry) => requestLog.push(entry),
  });
  dashboard = openContext({
    kind: 'local',
    endpoint: stack.dynamodbEndpoint,
    tableName: stack.tableName,
    scripts: { bucketName: stack.bucketName, endpoint: stack.s3Endpoint },
  });
  await expectEmbeds(stack.discord, EMBED_COLORS.version_deployed, 3);
}, 120_000);

afterAll(async () => {
  dashboard?.close();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /v1/loader/script on the local stack', () => {
  it('serves the demo key the current demo script stamped with its watermark, and 304 without a body for a repeat with If-None-Match', async () => {
    const info = JSON.parse(await readFile(stack.stateFile, 'utf8')) as StackInfo;
    expect(info).toMatchObject({ s3Endpoint: stack.s3Endpoint, bucketName: stack.bucketName });
    const first = await fetchScript(info.projectId, info.demoKey);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(first.headers.get('cache-control')).toBe('private, no-store');
    expect(first.headers.get('x-version-number')).toBe('3');
    expect(first.text).toContain('Demo Script v3 running');
    expect(first.text).not.toContain('WM_XXXXXXXXXXXXXXXX');
    expect(first.text).toMatch(/WM_[0-9a-f]{16}/);

    const etag = first.headers.get('etag')!;
    const repeat = await fetchScript(info.projectId, info.demoKey, { 'If-None-Match': etag });
    expect(repeat.status).toBe(304);
    expect(repeat.text).toBe('');
    expect(repeat.headers.get('etag')).toBe(etag);
  });

  it('stamps each key with its own watermark and tags each with its own ETag', async () => {
    const one = await issueKey(stack.projectId);
    const two = await issueKey(stack.projectId);
    const [a, b] = [await fetchScript(stack.projectId, one.key), await fetchScript(stack.projectId, two.key)];
    expect(a.text).toContain(`WM_${one.watermark}`);
    expect(b.text).toContain(`WM_${two.watermark}`);
    expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
  });

  it('after a rollback answered 200, the next fetch serves the version rolled back to; after an upload exited, the upload', async () => {
    const key = await issueKey(stack.projectId);
    const { versions } = JSON.parse(await ownerGet(`/v1/projects/${stack.projectId}/versions`)) as { versions: { id: string; version_number: number }[] };
    const v1 = versions.find((version) => version.version_number === 1)!;
    expect((await ownerPost(`/v1/projects/${stack.projectId}/versions/rollback`, { version_id: v1.id })).status).toBe(200);
    const rolledBack = await fetchScript(stack.projectId, key.key);
    expect(rolledBack.headers.get('x-version-id')).toBe(v1.id);
    expect(rolledBack.text).toContain('Demo Script v1 running');

    const uploaded = await dashboardRun([
      'versions',
      'upload',
      '--project',
      stack.projectId,
      '--file',
      scriptFile('plain.luau', 'print("no placeholder here")\n'),
      '--notes',
      'plain upload',
    ]);
    // Its event delivered, so later tests count only their own.
    await expectEmbeds(stack.discord, EMBED_COLORS.version_deployed, 1, 'plain upload');
    const plain = 'print("no placeholder here")\n';
    // Five tokens: no place for the hidden mark (a place needs sixteen tokens around it), so the upload calls it weak.
    expect(uploaded).toEqual({
      id: expect.any(String),
      version_number: 4,
      size_bytes: Buffer.byteLength(plain),
      sha256: sha256Hex(plain),
      hidden_mark: { positions: 0, weak: true },
    });
    const served = await fetchScript(stack.projectId, key.key);
    expect(served.headers.get('x-version-id')).toBe(uploaded.id);
    expect(served.text).toBe(`--WM_${key.watermark}\nprint("no placeholder here")\n`);
    // The owner API's version resource keeps exactly the spec's fields: no sha256 there.
    const listed = JSON.parse(await ownerGet(`/v1/projects/${stack.projectId}/versions`)) as { versions: Record<string, unknown>[] };
    expect(listed.versions.find((version) => version.id === uploaded.id)).toEqual({
      id: uploaded.id,
      version_number: 4,
      uploaded_at: expect.any(Number),
      size_bytes: Buffer.byteLength(plain),
      notes: 'plain upload',
    });
  });

  it('refuses a key revoked through the owner API on the very next fetch with 403 and a sentence for the buyer, and serves no byte of the script', async () => {
    const key = await issueKey(stack.projectId);
    expect((await fetchScript(stack.projectId, key.key)).status).toBe(200);
    expect((await ownerPost(`/v1/projects/${stack.projectId}/keys/revoke`, { key_id: key.id })).status).toBe(200);
    const refused = await fetchScript(stack.projectId, key.key);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text)).toEqual({ error: REFUSAL_SENTENCES.KEY_REVOKED, valid: false, code: 'KEY_REVOKED' });
  });

  it('counts one use per 200 and per 304, and none for a project without a version (404) or a refusal', async () => {
    const key = await issueKey(stack.projectId, '--max-uses', '10');
    const first = await fetchScript(stack.projectId, key.key);
    await fetchScript(stack.projectId, key.key, { 'If-None-Match': first.headers.get('etag')! });
    expect(await usesLeftAfterValidate(stack.projectId, key.key)).toBe(10 - 3);

    const { projectId: empty } = (await dashboardRun(['project', 'create', '--owner', stack.ownerId, '--name', 'Nothing uploaded'])) as { projectId: string };
    const fresh = await issueKey(empty, '--max-uses', '10');
    expect(await fetchScript(empty, fresh.key)).toMatchObject({
      status: 404,
      text: JSON.stringify({ error: 'This script has no version yet: the publisher has not uploaded one' }),
    });
    expect(await usesLeftAfterValidate(empty, fresh.key)).toBe(10 - 1);
    expect(JSON.parse((await fetchScript(empty, 'sdk_not-a-key')).text)).toMatchObject({ code: 'KEY_INVALID' });
    expect(JSON.parse((await fetchScript('prj_unknown', fresh.key)).text)).toMatchObject({ code: 'KEY_INVALID' });
  });

  it('answers 400 naming the field for a malformed fetch', async () => {
    const response = await fetch(`${stack.baseUrl}${SCRIPT_ROUTE.path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: stack.projectId }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'key is required' });
  });
});

describe('versions upload', () => {
  it.each([
    ['an empty file', () => scriptFile('empty.luau', ''), /is empty/],
    ['a file that is not UTF-8', () => scriptFile('latin1.luau', Uint8Array.from([0x70, 0x72, 0x69, 0x6e, 0x74, 0xe9])), /is not valid UTF-8/],
    ['a file over 5 MiB', () => scriptFile('big.luau', 'x'.repeat(5 * 1024 * 1024 + 1)), /is 5242881 bytes: a script is at most 5242880 bytes/],
    ['a missing file', () => join(dir, 'missing.luau'), /cannot be read: no such file/],
  ])('refuses %s with one line and writes nothing: no version, no object, no event', async (_name, file, message) => {
    const versionsBefore = await ownerGet(`/v1/projects/${stack.projectId}/versions`);
    const objectsBefore = await objectCount();
    const embedsBefore = stack.discord.received().length;
    await expect(dashboardRun(['versions', 'upload', '--project', stack.projectId, '--file', file()])).rejects.toThrow(message);
    expect(await ownerGet(`/v1/projects/${stack.projectId}/versions`)).toBe(versionsBefore);
    expect(await objectCount()).toBe(objectsBefore);
    expect(stack.discord.received()).toHaveLength(embedsBefore);
  });
});

describe('the leak loop', () => {
  it('a dump fetched with key K, given to sdapi leak, gets K refused KEY_REVOKED on its next fetch while a key of another watermark is still served', async () => {
    const leaker = await issueKey(stack.projectId);
    const honest = await issueKey(stack.projectId);
    const dump = scriptFile('leaked-dump.lua', (await fetchScript(stack.projectId, leaker.key)).text);

    const leak = await runCli(['leak', dump, '--yes'], {
      api: { fetch: globalThis.fetch },
      env: { SDAPI_BASE_URL: stack.baseUrl, SDAPI_TOKEN: stack.token, SDAPI_PROJECT: stack.projectId },
    });
    expect(leak.code).toBe(EXIT.ok);
    expect(leak.stdout).toContain(leaker.watermark);

    const refused = await fetchScript(stack.projectId, leaker.key);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text)).toMatchObject({ code: 'KEY_REVOKED' });
    const served = await fetchScript(stack.projectId, honest.key);
    expect(served.status).toBe(200);
    expect(served.text).toContain(`WM_${honest.watermark}`);
  });
});

describe('the script never leaves through anything but its 200', () => {
  it('a marker in the script appears in no log line, request log entry, table item, embed or owner API answer after fetches, refusals and a 304', async () => {
    const marker = `SECRET_MARKER_${Date.now()}`;
    const written: string[] = [];
    const capture = (stream: NodeJS.WriteStream) => {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
        written.push(String(chunk));
        return original(chunk, ...rest);
      }) as typeof stream.write;
      return () => {
        stream.write = original;
      };
    };
    const restore = [capture(process.stdout), capture(process.stderr)];
    try {
      await dashboardRun([
        'versions',
        'upload',
        '--project',
        stack.projectId,
        '--file',
        scriptFile('marked.luau', `print("${marker} WM_XXXXXXXXXXXXXXXX")\n`),
        '--notes',
        'marked',
      ]);
      const key = await issueKey(stack.projectId);
      const served = await fetchScript(stack.projectId, key.key);
      expect(served.text).toContain(marker);
      await fetchScript(stack.projectId, key.key, { 'If-None-Match': served.headers.get('etag')! });
      await fetchScript(stack.projectId, 'sdk_wrong');
      await ownerPost(`/v1/projects/${stack.projectId}/keys/revoke`, { key_id: key.id });
      await fetchScript(stack.projectId, key.key);
      await expectEmbeds(stack.discord, EMBED_COLORS.version_deployed, 1, 'marked');
    } finally {
      for (const undo of restore) undo();
    }
    const answers = await Promise.all(['versions', 'keys?limit=100', 'webhooks'].map((path) => ownerGet(`/v1/projects/${stack.projectId}/${path}`)));
    const db = createDocumentClient(localDynamoConfig(stack.dynamodbEndpoint));
    try {
      const items = (await db.send(new ScanCommand({ TableName: stack.tableName }))).Items ?? [];
      const everything = [written.join(''), JSON.stringify(requestLog), JSON.stringify(items), JSON.stringify(stack.discord.received()), ...answers].join('\n');
      expect(everything).not.toContain(marker);
    } finally {
      db.destroy();
    }
  });
});
