import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LootlabsPostback, ProviderBases } from '#adapters/free-key-providers';
import type { FreeProvider } from '#schemas/free-keys';
import type { LocalExtension } from './extension';

/**
 * Stand-ins for the checkpoint providers (docs/free-keys.md, "Locally"), so the key page's whole way works with no
 * internet: a link page with a Continue link that redirects back with the provider's proof, and the verification
 * API each provider documents, answering as the real one does (lambdas/adapters/free-key-providers.ts).
 */

const FREE_STAND_IN_PATH = '/_local/free';

/** What a stand-in link is: where it sends the buyer back (Work.ink's `{TOKEN}` replaced), and Lootlabs' puid. */
export function standInLinkUrl(origin: string, provider: FreeProvider, linkId: string, destination: string): string {
  const url = new URL(`${origin}${FREE_STAND_IN_PATH}/${provider}/link`);
  url.searchParams.set('link_id', linkId);
  url.searchParams.set('dest', destination);
  return url.toString();
}

/** The verification APIs' bases for providerVerifier, at `origin` (the origin server, called server to server). */
export const standInBases = (origin: string): ProviderBases => ({
  workink: `${origin}${FREE_STAND_IN_PATH}/workink`,
  linkvertise: `${origin}${FREE_STAND_IN_PATH}/linkvertise`,
});

interface Proof {
  linkId: string;
  ip: string;
  createdAt: number;
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
  res.end(body);
}

/** The address the key page sees for the same client (the local gateway takes the socket's). */
const addressOf = (req: IncomingMessage): string => req.socket.remoteAddress ?? '127.0.0.1';

export function createFreeProviderStandIn(deps: {
  recordPostback(projectId: string, clickId: string, postback: LootlabsPostback, now: number): Promise<void>;
  now?: () => number;
}): LocalExtension {
  const workinkTokens = new Map<string, Proof>();
  const linkvertiseHashes = new Set<string>();
  const nowMs = deps.now ?? Date.now;

  return async (req, res, url) => {
    if (!url.pathname.startsWith(`${FREE_STAND_IN_PATH}/`)) return false;
    const [provider, ...rest] = url.pathname.slice(FREE_STAND_IN_PATH.length + 1).split('/');
    const action = rest.join('/');
    const dest = url.searchParams.get('dest') ?? '';
    if (action === 'link' && dest.startsWith('http')) {
      const next = new URL(url.toString());
      next.pathname = `${FREE_STAND_IN_PATH}/${provider}/continue`;
      send(
        res,
        200,
        'text/html; charset=utf-8',
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(provider ?? '')} (local stand-in)</title></head><body><main><h1>${escapeHtml(provider ?? '')} checkpoint (local stand-in)</h1><p>The real provider shows its ad or task here.</p><p><a href="${escapeHtml(`${next.pathname}${next.search}`)}">Continue</a></p></main></body></html>`,
        { 'Content-Security-Policy': "default-src 'none'" },
      );
      return true;
    }
    if (action === 'continue' && dest.startsWith('http')) {
      const back = new URL(dest);
      const linkId = url.searchParams.get('link_id') ?? '';
      if (provider === 'workink') {
        const token = randomBytes(16).toString('hex');
        workinkTokens.set(token, { linkId, ip: addressOf(req), createdAt: nowMs() });
        back.search = back.search.replace('%7BTOKEN%7D', token).replace('{TOKEN}', token);
      } else if (provider === 'linkvertise') {
        const hash = randomBytes(32).toString('hex');
        linkvertiseHashes.add(hash);
        back.searchParams.set('hash', hash);
      } else if (provider === 'lootlabs') {
        const [, projectId] = /\/v1\/free\/([^/]+)\/return/.exec(back.pathname) ?? [];
        const puid = url.searchParams.get('puid') ?? '';
        if (projectId)
          await deps.recordPostback(projectId, puid, { ip: addressOf(req), uniqueId: randomBytes(12).toString('hex') }, Math.floor(nowMs() / 1000));
      }
      send(res, 302, 'text/plain; charset=utf-8', '', { Location: back.toString() });
      return true;
    }
    const workink = /^_api\/v2\/token\/isValid\/([^/]+)$/.exec(action);
    if (provider === 'workink' && workink?.[1]) {
      const token = decodeURIComponent(workink[1]);
      const proof = workinkTokens.get(token);
      if (proof && url.searchParams.get('deleteToken') === '1') workinkTokens.delete(token);
      const body = proof
        ? {
            valid: true,
            deleted: url.searchParams.get('deleteToken') === '1',
            info: { token, createdAt: proof.createdAt, byIp: proof.ip, linkId: proof.linkId, expiresAfter: 600_000 },
          }
        : { valid: false, deleted: false };
      send(res, 200, 'application/json', JSON.stringify(body));
      return true;
    }
    if (provider === 'linkvertise' && action === 'api/v1/anti_bypassing' && req.method === 'POST') {
      const hash = url.searchParams.get('hash') ?? '';
      // Consumed by the check, as Linkvertise documents.
      const valid = linkvertiseHashes.delete(hash);
      send(res, 200, 'text/plain', valid ? 'TRUE' : 'FALSE');
      return true;
    }
    send(res, 404, 'application/json', JSON.stringify({ error: 'No such stand-in path' }));
    return true;
  };
}
