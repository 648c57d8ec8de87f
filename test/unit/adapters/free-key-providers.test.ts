import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LootlabsPostback, providerVerifier } from '#adapters/free-key-providers';
import { type Checkpoint, FreeKeySettings } from '#schemas/free-keys';

/**
 * The providers' verification calls (lambdas/adapters/free-key-providers.ts) against a scripted HTTP server that
 * answers as each provider documents, and one that does not answer at all.
 */

type Script = (request: IncomingMessage, response: ServerResponse) => void;
let script: Script = (_request, response) => response.end();
const seen: { method: string; url: string }[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({ method: request.method ?? '', url: request.url ?? '' });
    script(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const NOW_MS = 1_800_000_000_000;
const postbacks = new Map<string, LootlabsPostback>();
const verifier = () =>
  providerVerifier({
    bases: { workink: base, linkvertise: base },
    timeoutMs: 300,
    now: () => NOW_MS,
    postbacks: { postbackOf: async (projectId, clickId) => postbacks.get(`${projectId}/${clickId}`) },
  });

const [workink, linkvertise, lootlabs] = FreeKeySettings.parse({
  checkpoints: [
    { provider: 'workink', url: 'https://work.ink/1a/demo', link_id: '4242', secret: 'none' },
    { provider: 'linkvertise', url: 'https://link-to.net/1/demo', link_id: 'lv', secret: 'lv-api-token' },
    { provider: 'lootlabs', url: 'https://loot-link.com/s?demo', link_id: 'll', secret: 'postback-secret' },
  ],
}).checkpoints as [Checkpoint, Checkpoint, Checkpoint];
const ret = (token: string) => ({ token, nonce: 'n'.repeat(32), projectId: 'prj_demo' });
const json =
  (body: unknown, status = 200): Script =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
const text =
  (body: string, status = 200): Script =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'text/plain' });
    response.end(body);
  };

describe('Work.ink', () => {
  it('asks isValid with deleteToken=1 and answers the link id and the address it names', async () => {
    script = json({
      valid: true,
      deleted: true,
      info: { token: 'tok_1', createdAt: NOW_MS - 20_000, byIp: '203.0.113.7', linkId: 4242, expiresAfter: 600_000 },
    });
    seen.length = 0;
    expect(await verifier().verify(workink, ret('tok_1'))).toEqual({ kind: 'valid', tokenId: 'tok_1', linkId: '4242', address: '203.0.113.7' });
    expect(seen).toEqual([{ method: 'GET', url: '/_api/v2/token/isValid/tok_1?deleteToken=1' }]);
  });

  it('calls an invalid, an expired and a malformed token invalid (the last without asking)', async () => {
    script = json({ valid: false, deleted: false });
    expect(await verifier().verify(workink, ret('tok_2'))).toEqual({ kind: 'invalid' });
    script = json({ valid: true, info: { token: 'tok_3', createdAt: NOW_MS - 700_000, byIp: '203.0.113.7', linkId: 4242, expiresAfter: 600_000 } });
    expect(await verifier().verify(workink, ret('tok_3'))).toEqual({ kind: 'invalid' });
    seen.length = 0;
    expect(await verifier().verify(workink, ret('../admin'))).toEqual({ kind: 'invalid' });
    expect(seen).toEqual([]);
  });

  it('is unavailable when it answers 5xx or not within the time-out', async () => {
    script = json({ error: 'down' }, 503);
    expect(await verifier().verify(workink, ret('tok_4'))).toEqual({ kind: 'unavailable', detail: 'Work.ink answered 503' });
    script = () => undefined; // never answers
    expect(await verifier().verify(workink, ret('tok_5'))).toEqual({ kind: 'unavailable', detail: 'Work.ink did not answer in time' });
  });
});

describe('Linkvertise', () => {
  const hash = 'h'.repeat(64);

  it('POSTs anti_bypassing with the API token and the hash, and takes TRUE only', async () => {
    script = text('TRUE');
    seen.length = 0;
    expect(await verifier().verify(linkvertise, ret(hash))).toEqual({ kind: 'valid', tokenId: hash });
    expect(seen).toEqual([{ method: 'POST', url: `/api/v1/anti_bypassing?token=lv-api-token&hash=${hash}` }]);
    script = text('FALSE');
    expect(await verifier().verify(linkvertise, ret(hash))).toEqual({ kind: 'invalid' });
  });

  it('calls a hash that is not 64 characters invalid without asking', async () => {
    seen.length = 0;
    expect(await verifier().verify(linkvertise, ret('short'))).toEqual({ kind: 'invalid' });
    expect(seen).toEqual([]);
  });

  it('is unavailable when it cannot be reached', async () => {
    const closed = providerVerifier({
      bases: { workink: base, linkvertise: 'http://127.0.0.1:1' },
      timeoutMs: 300,
      postbacks: { postbackOf: async () => undefined },
    });
    expect(await closed.verify(linkvertise, ret(hash))).toEqual({ kind: 'unavailable', detail: 'Linkvertise could not be reached' });
  });
});

describe('Lootlabs', () => {
  it("takes the postback recorded under the session's nonce, with its address and unique id", async () => {
    expect(await verifier().verify(lootlabs, ret(''))).toEqual({ kind: 'invalid' });
    postbacks.set(`prj_demo/${'n'.repeat(32)}`, { ip: '203.0.113.7', uniqueId: 'u-1' });
    expect(await verifier().verify(lootlabs, ret(''))).toEqual({ kind: 'valid', tokenId: 'u-1', address: '203.0.113.7' });
  });
});
