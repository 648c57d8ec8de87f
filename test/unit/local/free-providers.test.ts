import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LootlabsPostback, providerVerifier } from '#adapters/free-key-providers';
import { createFreeProviderStandIn, standInBases, standInLinkUrl } from '#local/free-providers';
import { type Checkpoint, FreeKeySettings } from '#schemas/free-keys';

/**
 * The providers' local stand-ins (local/free-providers.ts): a link's Continue sends the buyer back with a proof that
 * the real verification adapter (lambdas/adapters/free-key-providers.ts) accepts once, as each provider documents.
 */

const postbacks = new Map<string, LootlabsPostback>();
let server: Server;
let origin = '';

beforeAll(async () => {
  const standIn = createFreeProviderStandIn({
    recordPostback: async (projectId, clickId, postback) => void postbacks.set(`${projectId}/${clickId}`, postback),
  });
  server = createServer((req, res) => void standIn(req, res, new URL(req.url ?? '/', 'http://stand-in')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const back = 'http://page.test/v1/free/prj_demo/return';
const verifier = () =>
  providerVerifier({ bases: standInBases(origin), timeoutMs: 2000, postbacks: { postbackOf: async (p, c) => postbacks.get(`${p}/${c}`) } });
const checkpoint = (provider: Checkpoint['provider'], destination: string): Checkpoint =>
  FreeKeySettings.parse({ checkpoints: [{ provider, url: standInLinkUrl(origin, provider, '7', destination), link_id: '7', secret: 'local' }] })
    .checkpoints[0] as Checkpoint;

/** Open the link page, follow its Continue, and answer where it sends the buyer back to. */
async function complete(url: string): Promise<URL> {
  const page = await (await fetch(url)).text();
  const href = /href="([^"]+)"/.exec(page)?.[1]?.replace(/&#38;/g, '&') ?? '';
  const redirect = await fetch(`${origin}${href}`, { redirect: 'manual' });
  expect(redirect.status).toBe(302);
  return new URL(redirect.headers.get('location') ?? '');
}

describe('the providers stand-ins', () => {
  it('Work.ink: the token in {TOKEN} is valid once, for its link, from this address', async () => {
    const cp = checkpoint('workink', `${back}?token={TOKEN}`);
    const token = (await complete(cp.url)).searchParams.get('token') ?? '';
    const ret = { token, nonce: 'n', projectId: 'prj_demo' };
    expect(await verifier().verify(cp, ret)).toEqual({ kind: 'valid', tokenId: token, linkId: '7', address: '127.0.0.1' });
    expect(await verifier().verify(cp, ret)).toEqual({ kind: 'invalid' });
  });

  it('Linkvertise: the hash is TRUE once', async () => {
    const cp = checkpoint('linkvertise', back);
    const hash = (await complete(cp.url)).searchParams.get('hash') ?? '';
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const ret = { token: hash, nonce: 'n', projectId: 'prj_demo' };
    expect(await verifier().verify(cp, ret)).toEqual({ kind: 'valid', tokenId: hash });
    expect(await verifier().verify(cp, ret)).toEqual({ kind: 'invalid' });
  });

  it('Lootlabs: Continue records the postback under the puid the link carried', async () => {
    const cp = checkpoint('lootlabs', back);
    const url = new URL(cp.url);
    url.searchParams.set('puid', 'nonce-1');
    expect((await complete(url.toString())).toString()).toBe(back);
    expect(await verifier().verify(cp, { token: '', nonce: 'nonce-1', projectId: 'prj_demo' })).toMatchObject({ kind: 'valid', address: '127.0.0.1' });
  });
});
