import * as z from 'zod/mini';
import { type AddBlacklistBody, type BanKeyBody, type IssueKeysBody, KEYS_PAGE, type UpdateKeyBody } from '#schemas/requests';
import {
  AddBlacklistResponse,
  ExtendKeyResponse,
  IssueKeysResponse,
  KeyDetailResponse,
  ListBlacklistResponse,
  ListKeysResponse,
  ListVersionsResponse,
  ListWebhooksResponse,
  OkResponse,
  ResetHwidResponse,
  RevokeBulkResponse,
  RollbackResponse,
  StatsResponse,
  TraceLeakResponse,
} from '#schemas/responses';
import type { ApiConfig } from './config';
import { ApiFailure } from './errors';

export interface ClientDeps {
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  /** One line per request and retry, for --verbose; never given the token. */
  trace?: (line: string) => void;
  /** Told before each wait on a 429, so a person knows why nothing moves. */
  onRateLimited?: (waitSeconds: number, attempt: number, maxAttempts: number) => void;
}

/** Attempts per request when the API answers 429; each waits what `Retry-After` says. */
const MAX_ATTEMPTS = 5;
/** A `Retry-After` longer than this is not waited out: the command fails and says when to retry. */
const MAX_WAIT_SECONDS = 120;
const REQUEST_TIMEOUT_MS = 30_000;
/** Bulk revoke calls one command makes at most: each revokes ~20 s worth of keys, far more than any project has. */
const MAX_BULK_REVOKE_CALLS = 50;

/** A stack deployed before bulk revokes could stop early answers without `complete`: it revoked every key or failed. */
const RevokeBulkAnswer = z.extend(RevokeBulkResponse, { complete: z.optional(z.boolean()) });

/** The six endpoints, with the 429 backoff and the response checks every command needs. */
export class ApiClient {
  constructor(
    private readonly config: ApiConfig,
    private readonly deps: ClientDeps,
  ) {}

  listKeys(page: { limit: number; offset: number }): Promise<ListKeysResponse> {
    return this.call('GET', `keys?limit=${page.limit}&offset=${page.offset}`, ListKeysResponse);
  }

  /** Every key of the project, a full page at a time; `onPage` hears how far it got. */
  async allKeys(onPage?: (fetched: number, total: number) => void): Promise<ListKeysResponse> {
    const keys: ListKeysResponse['keys'] = [];
    let total = 0;
    for (;;) {
      const page = await this.listKeys({ limit: KEYS_PAGE.maxLimit, offset: keys.length });
      keys.push(...page.keys);
      total = page.total;
      onPage?.(keys.length, total);
      if (page.keys.length === 0 || keys.length >= total) return { keys, total };
    }
  }

  /**
   * Every key carrying `watermark`, revoked ones too, through the list's `watermark` filter: the requests grow with
   * those keys (one per 100), never with the project's size.
   */
  async keysWithWatermark(watermark: string): Promise<ListKeysResponse['keys']> {
    const keys: ListKeysResponse['keys'] = [];
    for (;;) {
      const page = await this.call(
        'GET',
        `keys?watermark=${encodeURIComponent(watermark)}&limit=${KEYS_PAGE.maxLimit}&offset=${keys.length}`,
        ListKeysResponse,
      );
      keys.push(...page.keys);
      if (page.keys.length === 0 || keys.length >= page.total) return keys;
    }
  }

  /** Raw key values come back in this answer only: the caller shows them once. */
  issueKeys(body: z.input<typeof IssueKeysBody>): Promise<IssueKeysResponse> {
    return this.call('POST', 'keys', IssueKeysResponse, body);
  }

  getKey(keyId: string): Promise<KeyDetailResponse> {
    return this.call('GET', `keys/${encodeURIComponent(keyId)}`, KeyDetailResponse);
  }

  resetHwid(keyId: string): Promise<ResetHwidResponse> {
    return this.call('POST', 'keys/reset-hwid', ResetHwidResponse, { key_id: keyId });
  }

  banKey(body: BanKeyBody): Promise<OkResponse> {
    return this.call('POST', 'keys/ban', OkResponse, body);
  }

  unbanKey(keyId: string): Promise<OkResponse> {
    return this.call('POST', 'keys/unban', OkResponse, { key_id: keyId });
  }

  /** `duration` as the API takes it: a preset name, `lifetime`, or whole seconds. */
  extendKey(keyId: string, duration: string | number): Promise<ExtendKeyResponse> {
    return this.call('POST', 'keys/extend', ExtendKeyResponse, { key_id: keyId, duration });
  }

  editKey(keyId: string, body: UpdateKeyBody): Promise<KeyDetailResponse> {
    return this.call('PATCH', `keys/${encodeURIComponent(keyId)}`, KeyDetailResponse, body);
  }

  revokeKey(keyId: string): Promise<OkResponse> {
    return this.call('POST', 'keys/revoke', OkResponse, { key_id: keyId });
  }

  async revokeBulk(watermark: string): Promise<RevokeBulkResponse> {
    const answer = await this.call('POST', 'keys/revoke-bulk', RevokeBulkAnswer, { watermark });
    return { ...answer, complete: answer.complete ?? true };
  }

  /**
   * Bulk revoke until the API says `complete`: a call that ran short of time revoked part of the keys, and
   * repeating it revokes the rest, counting only what it changes, so the counts add up. `onCall` hears each
   * answer, so a person sees progress on a large revoke.
   */
  async revokeBulkAll(watermark: string, onCall?: (answer: RevokeBulkResponse, call: number) => void): Promise<{ revoked_count: number; calls: number }> {
    let revoked = 0;
    for (let call = 1; call <= MAX_BULK_REVOKE_CALLS; call++) {
      const answer = await this.revokeBulk(watermark);
      revoked += answer.revoked_count;
      onCall?.(answer, call);
      if (answer.complete) return { revoked_count: revoked, calls: call };
    }
    throw new ApiFailure(
      `Revoked ${revoked} keys carrying ${watermark} in ${MAX_BULK_REVOKE_CALLS} calls and the API still says there are more; run the command again`,
      undefined,
      'POST keys/revoke-bulk',
    );
  }

  addToBlacklist(body: AddBlacklistBody): Promise<AddBlacklistResponse> {
    return this.call('POST', 'blacklist', AddBlacklistResponse, body);
  }

  listBlacklist(limit: number, offset: number): Promise<ListBlacklistResponse> {
    return this.call('GET', `blacklist?limit=${limit}&offset=${offset}`, ListBlacklistResponse);
  }

  removeFromBlacklist(entryId: string): Promise<OkResponse> {
    return this.call('DELETE', `blacklist/${encodeURIComponent(entryId)}`, OkResponse);
  }

  listVersions(): Promise<ListVersionsResponse> {
    return this.call('GET', 'versions', ListVersionsResponse);
  }

  rollback(versionId: string): Promise<RollbackResponse> {
    return this.call('POST', 'versions/rollback', RollbackResponse, { version_id: versionId });
  }

  listWebhooks(): Promise<ListWebhooksResponse> {
    return this.call('GET', 'webhooks', ListWebhooksResponse);
  }

  /** POST …/leak/trace: the watermarks a dump names, visible markers and hidden mark, with their keys. */
  traceLeak(dump: string): Promise<TraceLeakResponse> {
    return this.call('POST', 'leak/trace', TraceLeakResponse, new TextBody(dump));
  }

  /** GET …/stats with the parameters given (the API fills in the others). */
  stats(query: Record<string, string>): Promise<StatsResponse> {
    return this.call('GET', `stats?${new URLSearchParams(query)}`, StatsResponse);
  }

  private async call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', resource: string, schema: z.ZodMiniType<T>, body?: unknown): Promise<T> {
    const path = `/v1/projects/${encodeURIComponent(this.config.projectId)}/${resource}`;
    const request = `${method} ${path.split('?')[0]}`;
    for (let attempt = 1; ; attempt++) {
      const response = await this.send(method, path, request, body);
      const payload = await readJson(response);
      if (response.status === 429 && attempt < MAX_ATTEMPTS) {
        const wait = retryAfterSeconds(response.headers.get('retry-after')) ?? 2 ** (attempt - 1);
        if (wait > MAX_WAIT_SECONDS) throw new ApiFailure(`${errorText(payload, response)}; retry in ${wait} s`, 429, request);
        this.deps.onRateLimited?.(wait, attempt, MAX_ATTEMPTS);
        await this.deps.sleep(wait * 1000);
        continue;
      }
      if (!response.ok) throw new ApiFailure(errorText(payload, response), response.status, request);
      const parsed = schema.safeParse(payload);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ApiFailure(`Unexpected answer from the API: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`, response.status, request);
      }
      return parsed.data;
    }
  }

  private async send(method: string, path: string, request: string, body: unknown): Promise<Response> {
    const startedAt = Date.now();
    const text = body instanceof TextBody ? body.text : undefined;
    // A dump is never echoed: megabytes of someone's script have no place in a trace line.
    const shown = text !== undefined ? ` <${Buffer.byteLength(text)} bytes of text>` : body === undefined ? '' : ` ${JSON.stringify(body)}`;
    this.deps.trace?.(`-> ${method} ${this.config.baseUrl}${path}${shown}`);
    let response: Response;
    try {
      response = await this.deps.fetch(`${this.config.baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.config.token}`,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': text !== undefined ? 'text/plain; charset=utf-8' : 'application/json' }),
        },
        body: text ?? (body === undefined ? undefined : JSON.stringify(body)),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new ApiFailure(`Cannot reach ${this.config.baseUrl}: ${networkReason(error)}`, undefined, request);
    }
    this.deps.trace?.(`<- ${response.status} ${method} ${path} (${Date.now() - startedAt} ms)`);
    return response;
  }
}

/** A body sent as `text/plain` rather than JSON (a leaked dump). */
class TextBody {
  constructor(readonly text: string) {}
}

/** `Retry-After` as seconds: either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Math.max(1, Number(header.trim()));
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(1, Math.ceil((date - now) / 1000));
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The API's own words when it sent them (`{"error": "..."}`), else the status line. */
function errorText(payload: unknown, response: Response): string {
  const error = (payload as { error?: unknown } | undefined)?.error;
  if (typeof error === 'string' && error) return error;
  return `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
}

/** Why fetch failed, from its cause (ECONNREFUSED, a timeout, ...), without the request it was making. */
function networkReason(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
