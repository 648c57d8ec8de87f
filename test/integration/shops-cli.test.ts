import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT, runCli } from '#dashboard/cli';
import { fileKeySecret } from '#local/key-secret';
import { type LocalServer, startLocalServer } from '#local/server';
import { createTestTable, scanTable, type TestTable } from '#test-support/fixtures';
import { MemoryScriptStore } from '#test-support/memory-stores';

/**
 * `shop add|list|map|remove|simulate` (DESIGN.md, "Shops deliver keys by themselves") through the CLI's own entry:
 * the exact answers, bad input exiting non-zero with one line and writing nothing, the secret never shown or stored
 * in plaintext, and a simulated order delivered by the local server's receiver.
 */

const SECRET = 'sellauth-webhook-secret-42';
let table: TestTable;
let server: LocalServer;
let secretDir: string;
const savedKeySecretFile = process.env.KEY_SECRET_FILE;

beforeAll(async () => {
  table = await createTestTable('shops-cli');
  secretDir = await mkdtemp(join(tmpdir(), 'shops-cli-'));
  // The CLI and the server seal and open with the same key secret, as `npm start` and the dashboard do.
  process.env.KEY_SECRET_FILE = join(secretDir, 'key-secret');
  server = await startLocalServer({
    port: 0,
    stores: table.stores,
    telemetry: { report: async () => undefined },
    scripts: new MemoryScriptStore(),
    keySecret: fileKeySecret(process.env.KEY_SECRET_FILE),
  });
});

afterAll(async () => {
  await server?.close();
  await table?.drop();
  if (savedKeySecretFile === undefined) delete process.env.KEY_SECRET_FILE;
  else process.env.KEY_SECRET_FILE = savedKeySecretFile;
  await rm(secretDir, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli({
    argv,
    env: { DYNAMODB_ENDPOINT: table.endpoint, TABLE_NAME: table.tableName, LOADER_BASE_URL: server.url },
    stateFile: '/nonexistent/stack.json',
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
  });
  const out = stdout.join('');
  return { code, json: out ? (JSON.parse(out) as Record<string, unknown>) : undefined, stderr: stderr.join('') };
}

async function newProject(): Promise<string> {
  const owner = await cli('owner', 'create');
  const project = await cli('project', 'create', '--owner', String(owner.json?.ownerId), '--name', 'Shop Script', '--plan', 'business');
  return String(project.json?.projectId);
}

describe('shop commands', () => {
  it('shop add prints exactly {connection_id, receiver_url}; the secret is stored sealed and never listed', async () => {
    const projectId = await newProject();
    const added = await cli(
      'shop',
      'add',
      '--project',
      projectId,
      '--provider',
      'sellauth',
      '--secret',
      SECRET,
      '--product',
      '77=30d,machines=1',
      '--product',
      '78=lifetime',
    );
    expect(added.code).toBe(EXIT.ok);
    expect(Object.keys(added.json ?? {}).sort()).toEqual(['connection_id', 'receiver_url']);
    const connectionId = String(added.json?.connection_id);
    expect(connectionId).toMatch(/^shop_[0-9a-f]{20}$/);
    expect(added.json?.receiver_url).toBe(`${server.url}/v1/shops/${connectionId}`);
    expect(JSON.stringify(await scanTable(table))).not.toContain(SECRET);

    const listed = await cli('shop', 'list', '--project', projectId);
    expect(listed.json).toEqual({
      connections: [
        {
          connection_id: connectionId,
          provider: 'sellauth',
          products: { '77': '30d,machines=1', '78': 'lifetime' },
          created_at: expect.any(Number),
          receiver_url: `${server.url}/v1/shops/${connectionId}`,
        },
      ],
    });
    expect(JSON.stringify(listed)).not.toContain(SECRET);

    const mapped = await cli('shop', 'map', '--connection', connectionId, '--product', '79=7d,keys=2');
    expect(mapped.json).toEqual({
      connection_id: connectionId,
      project_id: projectId,
      products: { '77': '30d,machines=1', '78': 'lifetime', '79': '7d,keys=2' },
    });
    expect((await cli('shop', 'map', '--connection', connectionId, '--product', '80=2w')).code).toBe(EXIT.usage);

    const audit = await cli('audit', 'list', '--project', projectId);
    expect(JSON.stringify(audit.json)).toContain('shop.add');
    expect(JSON.stringify(audit.json)).toContain('shop.map');
    expect(JSON.stringify(audit.json)).not.toContain(SECRET);

    expect((await cli('shop', 'remove', '--connection', connectionId)).json).toEqual({ connection_id: connectionId, project_id: projectId, removed: true });
    expect((await cli('shop', 'list', '--project', projectId)).json).toEqual({ connections: [] });
  });

  it('bad input exits non-zero with one line naming the flag, writes nothing and never echoes the secret', async () => {
    const projectId = await newProject();
    const before = await scanTable(table);
    const cases: [string[], RegExp][] = [
      [['--provider', 'gumroad', '--secret', SECRET, '--product', '1=30d'], /--provider must be one of sellauth, sellapp, sellix, stripe/],
      [['--provider', 'stripe', '--secret', 'short', '--product', 'price_1=30d'], /--secret must be the shop's signing secret/],
      [['--provider', 'stripe', '--secret', SECRET, '--product', 'price_1=2w'], /--product price_1: "2w" is no duration/],
      [['--provider', 'stripe', '--secret', SECRET, '--product', 'price_1'], /--product must be PRODUCT_ID=TERMS/],
      [['--provider', 'stripe', '--secret', SECRET, '--product', 'p=30d', '--product', 'p=7d'], /--product p is given more than once/],
    ];
    for (const [flags, message] of cases) {
      const result = await cli('shop', 'add', '--project', projectId, ...flags);
      expect(result.code).toBe(EXIT.usage);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).not.toContain(SECRET);
    }
    expect((await cli('shop', 'add', '--project', 'prj_missing', '--provider', 'stripe', '--secret', SECRET, '--product', 'p=30d')).code).toBe(EXIT.failed);
    expect(await scanTable(table)).toEqual(before);
  });

  it('shop simulate signs as the shop would: a paid order shows its keys, a retry the same, a Stripe refund bans them', async () => {
    const projectId = await newProject();
    const sellauth = await cli('shop', 'add', '--project', projectId, '--provider', 'sellauth', '--secret', SECRET, '--product', '77=30d,keys=2');
    const connection = String(sellauth.json?.connection_id);
    const paid = await cli('shop', 'simulate', '--connection', connection, '--event', 'paid', '--product', '77', '--quantity', '2', '--order', 'inv-1');
    expect(paid.code).toBe(EXIT.ok);
    const keys = (paid.json?.answer as { keys: string[] } | undefined)?.keys;
    expect(keys).toHaveLength(4);
    const again = await cli('shop', 'simulate', '--connection', connection, '--event', 'paid', '--product', '77', '--quantity', '2', '--order', 'inv-1');
    expect((again.json?.answer as { keys: string[] } | undefined)?.keys).toEqual(keys);

    const unmapped = await cli('shop', 'simulate', '--connection', connection, '--event', 'paid', '--product', '99');
    expect(unmapped.code).toBe(EXIT.failed);
    expect(unmapped.stderr).toMatch(/422.*Product 99 is not mapped/);

    const stripe = await cli('shop', 'add', '--project', projectId, '--provider', 'stripe', '--secret', 'whsec_local_1234', '--product', 'price_1=7d');
    const stripeId = String(stripe.json?.connection_id);
    await cli('shop', 'simulate', '--connection', stripeId, '--event', 'paid', '--product', 'price_1', '--order', 'pi_local');
    const refund = await cli('shop', 'simulate', '--connection', stripeId, '--event', 'refund', '--product', 'price_1', '--order', 'pi_local');
    expect(refund.json?.answer).toEqual({ ok: true, banned: 1 });
  });
});
