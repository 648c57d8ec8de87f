import type { CheckpointVerifier, Verdict } from '#domain/free-keys/session';
import type { Checkpoint } from '#schemas/free-keys';

/**
 * The checkpoint providers' verification APIs (docs/free-keys.md, "How each return is verified"), server to server.
 * Every call has a time-out: a provider that does not answer is `unavailable`, and the page says so, issuing nothing.
 */

/** Where each provider's API lives; the local stack points these at its stand-ins (local/free-providers.ts). */
export interface ProviderBases {
  workink: string;
  linkvertise: string;
}
export const PROVIDER_BASES: ProviderBases = { workink: 'https://work.ink', linkvertise: 'https://publisher.linkvertise.com' };

/** A Lootlabs postback as recorded by its receiver: the address that completed the link and Lootlabs' unique id. */
export interface LootlabsPostback {
  ip: string;
  uniqueId: string;
}

/** Lootlabs has no verification API: its proof is the postback recorded under the session's nonce (`click_id`). */
export interface PostbackLookup {
  postbackOf(projectId: string, clickId: string): Promise<LootlabsPostback | undefined>;
}

/** Tokens as the providers mint them; anything else is not sent to a provider at all. */
const WORKINK_TOKEN = /^[A-Za-z0-9_-]{1,200}$/;
/** Linkvertise's hash is 64 characters (its anti-bypass documentation). */
const LINKVERTISE_HASH = /^[A-Za-z0-9]{64}$/;

const INVALID: Verdict = { kind: 'invalid' };

interface WorkinkAnswer {
  valid?: unknown;
  info?: { linkId?: unknown; byIp?: unknown; createdAt?: unknown; expiresAfter?: unknown };
}

export function providerVerifier(deps: {
  bases: ProviderBases;
  timeoutMs: number;
  postbacks: PostbackLookup;
  fetch?: typeof fetch;
  now?: () => number;
}): CheckpointVerifier {
  const call = deps.fetch ?? fetch;
  const nowMs = deps.now ?? Date.now;

  /** One provider call with the time-out; a network error, a time-out or a 5xx is the provider being down. */
  async function ask(url: string, method: 'GET' | 'POST'): Promise<Response | { down: string }> {
    try {
      const response = await call(url, { method, signal: AbortSignal.timeout(deps.timeoutMs), redirect: 'error' });
      return response.status >= 500 ? { down: `answered ${response.status}` } : response;
    } catch (error) {
      return { down: error instanceof Error && error.name === 'TimeoutError' ? 'did not answer in time' : 'could not be reached' };
    }
  }

  /**
   * Work.ink (https://blog.work.ink/using-the-key-system-to-make-money-with-your-software): the link's destination
   * holds `{TOKEN}`; `GET /_api/v2/token/isValid/<token>?deleteToken=1` answers `{"valid", "deleted", "info": {"token",
   * "createdAt" (ms), "byIp", "linkId", "expiresAfter" (ms)}}`. `deleteToken=1` spends the token (single use); the
   * link id and the address are compared by the session (#domain/free-keys/session).
   */
  async function workink(token: string): Promise<Verdict> {
    if (!WORKINK_TOKEN.test(token)) return INVALID;
    const answer = await ask(`${deps.bases.workink}/_api/v2/token/isValid/${encodeURIComponent(token)}?deleteToken=1`, 'GET');
    if ('down' in answer) return { kind: 'unavailable', detail: `Work.ink ${answer.down}` };
    const body = (await answer.json().catch(() => ({}))) as WorkinkAnswer;
    if (!answer.ok || body.valid !== true || !body.info) return INVALID;
    const { createdAt, expiresAfter, linkId, byIp } = body.info;
    if (typeof createdAt === 'number' && typeof expiresAfter === 'number' && createdAt + expiresAfter < nowMs()) return INVALID;
    return {
      kind: 'valid',
      tokenId: token,
      // Always compared: an answer without its link id matches no publisher's link.
      linkId: String(linkId ?? ''),
      ...(typeof byIp === 'string' ? { address: byIp } : {}),
    };
  }

  /**
   * Linkvertise anti-bypass: Linkvertise sends the buyer back with `?hash=<64 chars>`; `POST
   * /api/v1/anti_bypassing?token=<API token>&hash=<hash>` (no body) answers `TRUE` or `FALSE`. The hash is valid about
   * 10 s after the redirect and the check consumes it (single use). It names no link and no address.
   */
  async function linkvertise(checkpoint: Checkpoint, hash: string): Promise<Verdict> {
    if (!LINKVERTISE_HASH.test(hash)) return INVALID;
    const query = new URLSearchParams({ token: checkpoint.secret, hash });
    const answer = await ask(`${deps.bases.linkvertise}/api/v1/anti_bypassing?${query}`, 'POST');
    if ('down' in answer) return { kind: 'unavailable', detail: `Linkvertise ${answer.down}` };
    const text = (await answer.text().catch(() => '')).trim();
    return answer.ok && text === 'TRUE' ? { kind: 'valid', tokenId: hash } : INVALID;
  }

  /**
   * Lootlabs (https://help.lootlabs.gg/en/article/postback-api-1ndz3i2): no verification API; on completion it calls the
   * postback `?click_id=<puid>&ip=<IP>&unique_id=<id>`, `puid` being the session's nonce the link carried. The
   * recorded postback is the proof; `unique_id` is its single-use token and `ip` the address that completed it.
   */
  async function lootlabs(projectId: string, nonce: string): Promise<Verdict> {
    const postback = await deps.postbacks.postbackOf(projectId, nonce);
    return postback ? { kind: 'valid', tokenId: postback.uniqueId, address: postback.ip } : INVALID;
  }

  return {
    verify(checkpoint, ret) {
      if (checkpoint.provider === 'workink') return workink(ret.token);
      if (checkpoint.provider === 'linkvertise') return linkvertise(checkpoint, ret.token);
      return lootlabs(ret.projectId, ret.nonce);
    },
  };
}
