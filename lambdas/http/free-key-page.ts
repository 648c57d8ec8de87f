import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyResult } from 'aws-lambda';
import { type FreeKeyFlowDeps, type FreePage, recordLootlabsPostback, returnPage, startPage } from '#domain/free-keys/flow';
import type { Bypass } from '#domain/free-keys/session';
import type { OriginSecrets } from '#http/origin-verify';
import { clientAddressOf, type HttpApiHandler } from './http-api';

/**
 * The key page (DESIGN.md, "Free keys behind checkpoints"; docs/free-keys.md): `GET /v1/free/{project_id}?m=…` and
 * `GET /v1/free/{project_id}/return?s=…`, server-rendered HTML that needs no script and reads on a phone. Every
 * value a buyer or a publisher controls is escaped; the page loads nothing else.
 */

export interface FreeKeyPageDeps extends FreeKeyFlowDeps {
  now: () => number;
  logger: Logger;
  originSecrets?: OriginSecrets | undefined;
}

/**
 * Stricter than the console's: the page loads nothing at all (no script, no style, no frame, no form). It has no
 * stylesheet because the front door sets the console's policy over every answer (lib/constructs/front-door.ts), which
 * allows no inline style; plain semantic HTML with a viewport reads on a phone.
 */
export const FREE_PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const PROVIDER_NAMES = { workink: 'Work.ink', linkvertise: 'Linkvertise', lootlabs: 'Lootlabs' } as const;

const BYPASS_SENTENCES: Record<Bypass, string> = {
  no_token: 'The checkpoint sent you back without its proof.',
  reused_token: 'That checkpoint proof was already used.',
  too_fast: 'You came back sooner than the checkpoint can be done.',
  other_address: 'The checkpoint was done from another network than the one that started.',
  other_machine: 'The checkpoint came back for another machine.',
  invalid_token: 'The provider did not confirm the checkpoint.',
  other_link: "The checkpoint was done on another link than this script's.",
};

function html(status: number, title: string, body: string, extraHeaders: Record<string, string> = {}): APIGatewayProxyResult {
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
  return {
    statusCode: status,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': FREE_PAGE_CSP,
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      ...extraHeaders,
    },
    body: page,
  };
}

const SESSION_COOKIE = 'sd_free_session';

/** The page of an outcome; a started session also sets its cookie, for providers whose return URL is fixed. */
function renderFreePage(page: FreePage, projectId: string): APIGatewayProxyResult {
  switch (page.kind) {
    case 'off':
      return html(404, 'No free keys here', '<p>This script does not hand out free keys.</p>');
    case 'bad_machine':
      return html(
        400,
        'Run the script again',
        '<p>This link does not name your machine (<code>m</code> must be 64 hex characters). Run the script without a key to get your link.</p>',
      );
    case 'too_many':
      return html(429, 'Too many tries', `<p>Too many key pages were opened from here. Try again in ${Math.ceil(page.retryAfterSeconds / 60)} minutes.</p>`, {
        'Retry-After': String(page.retryAfterSeconds),
      });
    case 'expired':
      return html(410, 'This link has expired', '<p>Run the script again without a key to start over.</p>');
    case 'finished':
      return html(
        200,
        'Key already shown',
        '<p>Your key was shown when you finished the checkpoints and is not shown again. Run the script again without a key to start over.</p>',
      );
    case 'daily_limit':
      return html(429, 'Come back tomorrow', "<p>This machine already got today's free keys.</p>");
    case 'blacklisted':
      return html(403, 'No key for this machine', `<p>${escapeHtml(page.reason)}</p>`);
    case 'provider_down':
      return html(
        503,
        `${PROVIDER_NAMES[page.step.provider]} is not answering`,
        `<p>We could not confirm checkpoint ${page.step.index} with ${PROVIDER_NAMES[page.step.provider]}. Nothing was issued. Reload this page in a minute to try again.</p>`,
        { 'Retry-After': '60' },
      );
    case 'key':
      return html(
        200,
        'Your key',
        `<p><label for="key">Copy this key now: it is shown only once.</label></p><input id="key" readonly value="${escapeHtml(page.key)}" autofocus><p>It works on this machine until <time datetime="${new Date(page.expiresAt * 1000).toISOString()}">${new Date(page.expiresAt * 1000).toUTCString()}</time>. Put it in your script as <code>script_key = "…"</code>.</p>`,
      );
    case 'checkpoint': {
      const refused = page.refused
        ? `<p role="alert"><strong>Checkpoint ${page.step.index} was not completed. ${BYPASS_SENTENCES[page.refused]} Please do it again.</p>`
        : '';
      return html(
        page.refused ? 403 : 200,
        `Checkpoint ${page.step.index} of ${page.step.of}`,
        `${refused}<p>Complete the ${escapeHtml(PROVIDER_NAMES[page.step.provider])} page; it brings you back here.</p><p><a href="${escapeHtml(page.step.href)}" rel="noreferrer">Continue to checkpoint ${page.step.index}</a></p>`,
        { 'Set-Cookie': `${SESSION_COOKIE}=${page.session.id}; Path=/v1/free/${encodeURIComponent(projectId)}; Max-Age=7200; HttpOnly; Secure; SameSite=Lax` },
      );
    }
  }
}

const cookieOf = (event: APIGatewayProxyEventV2, name: string): string | undefined =>
  (event.cookies ?? event.headers.cookie?.split(/;\s*/) ?? []).map((c) => c.split('=')).find(([n]) => n === name)?.[1];

/** The provider's proof on a return: Work.ink's `{TOKEN}` (as `token`), Linkvertise's `hash`. */
const tokenOf = (query: Record<string, string | undefined>): string | undefined => query.token ?? query.hash;

export function createFreeKeyPageHandler(deps: FreeKeyPageDeps): HttpApiHandler {
  return async (event) => {
    const projectId = event.pathParameters?.project_id ?? '';
    const query = event.queryStringParameters ?? {};
    const address = clientAddressOf(event, deps.originSecrets);
    const now = deps.now();
    try {
      if (event.routeKey.endsWith('/postback')) {
        const outcome = await recordLootlabsPostback(deps, {
          projectId,
          secret: query.secret ?? '',
          clickId: query.click_id ?? '',
          ip: query.ip ?? '',
          uniqueId: query.unique_id ?? '',
          now,
        });
        const status = { recorded: 200, unauthorized: 401, malformed: 400 }[outcome];
        const body =
          outcome === 'recorded'
            ? { ok: true }
            : { error: outcome === 'unauthorized' ? 'Unknown project or postback secret' : 'click_id, ip and unique_id are required' };
        return {
          statusCode: status,
          headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' },
          body: JSON.stringify(body),
        };
      }
      const page = event.routeKey.endsWith('/return')
        ? await returnPage(deps, {
            projectId,
            sessionId: query.s ?? cookieOf(event, SESSION_COOKIE) ?? '',
            token: tokenOf(query),
            fingerprint: query.m,
            address,
            now,
          })
        : await startPage(deps, { projectId, fingerprint: query.m ?? '', address, now });
      return renderFreePage(page, projectId);
    } catch (error) {
      deps.logger.error('The key page failed', { error: error instanceof Error ? error.message : String(error) });
      return html(500, 'Something went wrong', '<p>Nothing was issued. Reload the page to try again.</p>');
    }
  };
}
