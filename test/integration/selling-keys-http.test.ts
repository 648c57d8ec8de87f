import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unixSeconds } from '#domain/model';
import { hashToken, issueToken, newApiToken, revokeToken } from '#domain/tokens';
import { type DemoSeed, seedDemo } from '#local/seed';
import { type LocalServer, startLocalServer } from '#local/server';
import { startTelemetryPipeline, type TelemetryPipeline } from '#local/telemetry-pipeline';
import { createTestTable, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';
import { runCli } from '#test-support/sdapi-run-cli';
import { EXIT } from '../../sdapi/errors';

/**
 * Selling keys over HTTP through the local stack's server (the real authorizer, handlers and gateway on DynamoDB
 * Local), as a shop's delivery hook, a buyer's loader and the owner's sdapi drive it: DESIGN.md's "Done when".
 */

let table: TestTable;
let server: LocalServer;
let telemetry: TelemetryPipeline;
let demo: DemoSeed;

const MACHINE_A = 'a'.repeat(64);
const MACHINE_B = 'b'.repeat(64);

beforeAll(async () => {
  table = await createTestTable('selling-keys-http');
  demo = await seedDemo(table.stores, new MemoryScriptStore(), unixSeconds());
  telemetry = startTelemetryPipeline({ store: table.stores.telemetry });
  server = await startLocalServer({ port: 0, stores: table.stores, telemetry: telemetry.sink, scripts: new MemoryScriptStore() });
});

afterAll(async () => {
  await server?.close();
  await telemetry?.stop();
  await table?.drop();
});

/** What `curl` would send: the owner API with the bearer token (the demo owner's, unless another is named). */
async function owner(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  token = demo.token,
): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const response = await fetch(`${server.url}/v1/projects/${demo.projectId}/${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

/** The buyer's loader: no token. */
async function loaderCheck(key: string, fingerprint: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}/v1/loader/validate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ project_id: demo.projectId, key, fingerprint, executor: 'Wave' }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

const sdapi = (argv: string[]) =>
  runCli(argv, { api: { fetch: globalThis.fetch }, env: { SDAPI_BASE_URL: server.url, SDAPI_TOKEN: demo.token, SDAPI_PROJECT: demo.projectId } });

describe('selling keys through the local stack', () => {
  it('a shop POSTs an order, retries it and gets the same bytes; the key runs on one machine, locks out a second, and runs there after one reset', async () => {
    const order = { count: 1, duration: '30d', max_fingerprints: 1, order_id: 'sellauth-90001', discord_id: '123456789012345678' };
    const issued = await owner('POST', 'keys', order);
    expect(issued.status, issued.text).toBe(200);
    const retried = await owner('POST', 'keys', order);
    expect(retried.json).toEqual({ ...issued.json, repeated: true });
    const [key] = issued.json.keys as { id: string; key: string }[];

    expect(await loaderCheck(key!.key, MACHINE_A)).toMatchObject({ valid: true, code: 'KEY_VALID', key_id: key!.id });
    expect(await loaderCheck(key!.key, MACHINE_B)).toEqual({ valid: false, code: 'KEY_HWID_LOCKED' });

    const detail = await owner('GET', `keys/${key!.id}`);
    expect(detail.json.key).toMatchObject({
      id: key!.id,
      max_fingerprints: 1,
      current_uses: 1,
      discord_id: '123456789012345678',
      fingerprints: [{ fingerprint: MACHINE_A }],
    });

    expect((await owner('POST', 'keys/reset-hwid', { key_id: key!.id })).json).toEqual({ ok: true, cleared: 1 });
    expect(await loaderCheck(key!.key, MACHINE_B)).toMatchObject({ valid: true, code: 'KEY_VALID' });
    expect(await loaderCheck(key!.key, MACHINE_A)).toEqual({ valid: false, code: 'KEY_HWID_LOCKED' });
    expect(
      ((await owner('GET', `keys/${key!.id}`)).json.key as { fingerprints: { fingerprint: string }[] }).fingerprints.map((bound) => bound.fingerprint),
    ).toEqual([MACHINE_B]);
  });

  it('the same order id with another body is a 400 naming order_id; the key list keeps exactly the spec fields', async () => {
    await owner('POST', 'keys', { count: 1, order_id: 'bot-1' });
    const conflict = await owner('POST', 'keys', { count: 2, order_id: 'bot-1' });
    expect(conflict.status).toBe(400);
    expect(conflict.json.error).toContain('order_id');
    const listed = await owner('GET', 'keys?limit=100');
    for (const key of listed.json.keys as Record<string, unknown>[]) {
      expect(Object.keys(key).sort()).toEqual(['current_uses', 'expires_at', 'id', 'issued_at', 'max_uses', 'revoked', 'tier', 'user_hash', 'watermark']);
    }
  });

  it('sdapi issues keys printing each raw value once, shows a key with its machines, and resets it', async () => {
    const issued = await sdapi(['keys', 'issue', '--count', '2', '--max-fingerprints', '1', '--note', 'discord giveaway', '--json']);
    expect(issued.code, issued.stderr).toBe(EXIT.ok);
    const { keys } = JSON.parse(issued.stdout) as { keys: { id: string; key: string }[] };
    expect(keys).toHaveLength(2);
    const printed = await sdapi(['keys', 'issue', '--duration', 'lifetime']);
    expect(printed.stdout).toMatch(
      /^ID\s+KEY\s+WATERMARK\s+EXPIRES\nkey_\w+\s+sdk_\S+\s+[0-9a-f]{16}\s+2100-01-01 00:00Z\n1 key issued\. The KEY column is shown this once/,
    );

    await loaderCheck(keys[0]!.key, MACHINE_A);
    const shown = await sdapi(['keys', 'show', keys[0]!.id]);
    expect(shown.stdout).toContain('Machines:    1/1 bound');
    expect(shown.stdout).toContain('Note:        discord giveaway');
    expect(shown.stdout).toMatch(new RegExp(`^${MACHINE_A}\\s+\\d{4}-`, 'm'));
    expect(await sdapi(['keys', 'reset-hwid', keys[0]!.id])).toMatchObject({ code: EXIT.ok, stdout: `Unbound 1 machine from key ${keys[0]!.id}.\n` });

    expect(await sdapi(['keys', 'issue', '--count', '101'])).toMatchObject({ code: EXIT.usage, stderr: 'sdapi: --count must be at most 100\n' });
  });

  it('a leaked second token that pre-claimed an order, then was revoked, hands the shop none of its keys (issue 33)', async () => {
    const leaked = newApiToken();
    const leakedId = await issueToken(table.stores.tokens, { ownerId: demo.ownerId, tokenHash: hashToken(leaked), now: unixSeconds(), scope: 'write' });
    const order = { count: 1, max_fingerprints: 1, order_id: 'sellauth-5001' };
    const preClaim = await owner('POST', 'keys', order, leaked);
    expect(preClaim.status, preClaim.text).toBe(200);
    const token = await table.stores.tokens.tokenById(leakedId);
    if (!token || token.revokedAt !== undefined) throw new Error('the second token should be active');
    expect(await revokeToken(table.stores.tokens, token, unixSeconds())).toBe(true);

    const shop = await owner('POST', 'keys', order);
    expect(shop.status).toBe(400);
    expect(shop.json.error).toMatch(/order_id "sellauth-5001" cannot be used with this token and body/);
    const [attackerKey] = preClaim.json.keys as { key: string }[];
    expect(shop.text).not.toContain(attackerKey?.key);
  });

  it("a shop hook's token limited to its project and issue-keys issues keys there and nothing else (issue 33)", async () => {
    const hook = newApiToken();
    await issueToken(table.stores.tokens, {
      ownerId: demo.ownerId,
      tokenHash: hashToken(hook),
      now: unixSeconds(),
      scope: 'write',
      limits: { projectId: demo.projectId, routes: ['issue-keys'] },
    });
    const issued = await owner('POST', 'keys', { count: 1 }, hook);
    expect(issued.status, issued.text).toBe(200);
    const listed = await owner('GET', 'keys', undefined, hook);
    expect(listed.status).toBe(403);
    expect(listed.json.error).toBe(
      'This token may call only issue-keys; listing keys is not one of them. Use a token created without --routes, or with this route.',
    );
    const [key] = issued.json.keys as { id: string }[];
    expect((await owner('POST', 'keys/revoke', { key_id: key?.id }, hook)).status).toBe(403);

    const otherProject = await table.stores.dashboard.createProject({ ownerId: demo.ownerId, name: 'Other', plan: 'business', now: unixSeconds() });
    const elsewhere = await fetch(`${server.url}/v1/projects/${otherProject}/keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${hook}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ count: 1 }),
    });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ error: 'Project not found' });
  });
});
