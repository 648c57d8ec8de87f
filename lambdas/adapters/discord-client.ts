import type { PostOutcome } from '#domain/webhooks/delivery-decision';
import type { EmbedMessage } from '#domain/webhooks/embeds';

export const REQUEST_TIMEOUT_MS = 10_000;
/** Response bodies are logged at most this long. */
const LOGGED_BODY_MAX = 500;

/** Discord's codes for a webhook that is gone: Unknown Webhook (404) and Invalid Webhook Token (401). */
const DEAD_WEBHOOK_CODES = new Set([10015, 50027]);

/** POST `{"embeds": [...]}` to a webhook execute URL and classify the answer; never throws. */
export async function postEmbeds(url: string, message: EmbedMessage, timeoutMs: number = REQUEST_TIMEOUT_MS): Promise<PostOutcome> {
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'ScriptDistribution-Webhooks (1.0)' },
      body: JSON.stringify(message),
      // A redirect would carry the post (and the token in its path) to an address no check has approved.
      redirect: 'manual',
      signal,
    });
  } catch (error) {
    return { kind: 'failed', reason: failureReason(error) };
  }
  // A body that cannot be read in time changes nothing about a status that arrived.
  const body = await response.text().catch(() => '');
  const status = response.status;
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  const json = parseJsonObject(body);
  if (status === 429) return { kind: 'rate_limited', retryAfterSeconds: retryAfterSeconds(json, response.headers.get('retry-after')) };
  const code = typeof json?.code === 'number' ? json.code : undefined;
  if (status === 404 || (code !== undefined && DEAD_WEBHOOK_CODES.has(code))) return { kind: 'gone', status, code };
  if (status >= 300 && status < 400) return { kind: 'refused', status, body: 'a redirect, not followed' };
  if (status >= 400 && status < 500) return { kind: 'refused', status, body: truncateForLog(body) };
  return { kind: 'failed', reason: `HTTP ${status}: ${truncateForLog(body)}` };
}

/** `retry_after` from the JSON body (seconds, may be fractional), else the `Retry-After` header. */
function retryAfterSeconds(json: Record<string, unknown> | undefined, header: string | null): number | undefined {
  const fromBody = json?.retry_after;
  if (typeof fromBody === 'number' && Number.isFinite(fromBody) && fromBody >= 0) return fromBody;
  const fromHeader = header === null ? Number.NaN : Number(header);
  return Number.isFinite(fromHeader) && fromHeader >= 0 ? fromHeader : undefined;
}

function parseJsonObject(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a request got no answer, in words that hold no part of the URL (the token is in its path). */
function failureReason(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'timed out';
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return `network error ${cause.code}`;
  return error instanceof Error ? `network error ${error.name}` : 'network error';
}

const truncateForLog = (text: string) => (text.length <= LOGGED_BODY_MAX ? text : `${text.slice(0, LOGGED_BODY_MAX)}…`);
