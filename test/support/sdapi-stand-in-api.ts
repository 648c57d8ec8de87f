import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as z from 'zod/mini';
import { blacklistEntryId } from '#domain/blacklist';
import { PROJECT_NOT_FOUND } from '#domain/errors';
import { dumpProblem, traceLeak } from '#domain/leak-trace';
import { RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { GATEWAY_RESPONSES } from '#http/gateway-responses';
import { AddBlacklistBody, ListKeysQuery, RevokeBulkBody, RevokeKeyBody, RollbackBody } from '#schemas/requests';
import type { Key, Version, Webhook } from '#schemas/resources';

/**
 * An in-memory stand-in for the API, answering like it (same paths, bodies, statuses and messages; request
 * validation through the API's own zod schemas), for testing sdapi without DynamoDB. It is a fetch function,
 * so unit tests call it with no socket; `listen()` puts it on 127.0.0.1 for tests that run the real binary.
 */
export interface StandInOptions {
  token: string;
  projectId: string;
  keys?: Key[];
  versions?: Version[];
  currentVersionId?: string | null;
  webhooks?: Webhook[];
  /** The machines bound to a key and its Discord id, by key id, as the key detail shows them. */
  buyers?: Record<string, { fingerprints: string[]; discordId: string | null }>;
  /** A bulk revoke changes at most this many keys per call and answers `complete: false` while more remain, as the API does when a call runs short of time. */
  bulkRevokePerCall?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  authorization: string | null;
  body: unknown;
  at: number;
}

export class StandInApi {
  readonly keys: Key[];
  readonly versions: Version[];
  readonly webhooks: Webhook[];
  currentVersionId: string | null;
  readonly requests: RecordedRequest[] = [];
  /** The next requests answered 429 with this `Retry-After` (seconds, or absent when null), one entry each. */
  readonly rateLimitQueue: (number | null)[] = [];
  /** The blacklist requests answered, in order (their bodies). */
  readonly blacklisted: AddBlacklistBody[] = [];

  constructor(private readonly options: StandInOptions) {
    this.keys = options.keys ?? [];
    this.versions = options.versions ?? [];
    this.webhooks = options.webhooks ?? [];
    this.currentVersionId = options.currentVersionId ?? this.versions[0]?.id ?? null;
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const text = await request.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    this.requests.push({
      method: request.method,
      path: url.pathname,
      query: url.search,
      authorization: request.headers.get('authorization'),
      body,
      at: Date.now(),
    });
    return this.answer(request.method, url, request.headers, body, text);
  };

  private async answer(method: string, url: URL, headers: Headers, body: unknown, text: string): Promise<Response> {
    const match =
      /^\/v1\/projects\/([^/]+)\/(keys|keys\/revoke|keys\/revoke-bulk|keys\/key_[0-9a-f]+|versions|versions\/rollback|webhooks|leak\/trace|blacklist)$/.exec(
        url.pathname,
      );
    if (!match) return json(404, { error: GATEWAY_RESPONSES.MISSING_AUTHENTICATION_TOKEN.error });
    if (headers.get('authorization') !== `Bearer ${this.options.token}`) return json(401, { error: GATEWAY_RESPONSES.UNAUTHORIZED.error });
    const retryAfter = this.rateLimitQueue.shift();
    if (retryAfter !== undefined) {
      return json(429, { error: RATE_LIMIT_MESSAGE }, retryAfter === null ? {} : { 'Retry-After': String(retryAfter) });
    }
    if (decodeURIComponent(match[1]!) !== this.options.projectId) return json(404, { error: PROJECT_NOT_FOUND });
    const route = `${method} ${match[2]?.startsWith('keys/key_') ? 'keys/{key_id}' : match[2]}`;
    switch (route) {
      case 'GET keys/{key_id}': {
        const key = this.keys.find((candidate) => `keys/${candidate.id}` === match[2]);
        if (!key) return json(404, { error: `Key ${match[2]?.slice(5)} not found in this project` });
        const buyer = this.options.buyers?.[key.id];
        const fingerprints = (buyer?.fingerprints ?? []).map((fingerprint) => ({ fingerprint, bound_at: key.issued_at }));
        const detail = {
          ...key,
          note: null,
          discord_id: buyer?.discordId ?? null,
          max_fingerprints: buyer ? 10 : null,
          fingerprints,
          last_check_at: null,
          ban: null,
        };
        return json(200, { key: { ...detail, revoked_by: null } });
      }
      case 'POST blacklist': {
        const input = validate(AddBlacklistBody, body);
        if ('error' in input) return json(400, input);
        this.blacklisted.push(input);
        const target =
          input.fingerprint !== undefined
            ? ({ kind: 'fingerprint', value: input.fingerprint } as const)
            : input.discord_id !== undefined
              ? ({ kind: 'discord_id', value: input.discord_id } as const)
              : ({ kind: 'email_sha256', value: input.email_sha256 ?? '' } as const);
        return json(200, { id: blacklistEntryId(target), banned_keys: 0 });
      }
      case 'GET keys': {
        const query = validate(ListKeysQuery, Object.fromEntries(url.searchParams));
        if ('error' in query) return json(400, query);
        const listed = query.watermark === undefined ? this.keys : this.keys.filter((key) => key.watermark === query.watermark);
        return json(200, { keys: listed.slice(query.offset, query.offset + query.limit), total: listed.length });
      }
      case 'POST keys/revoke': {
        const input = validate(RevokeKeyBody, body);
        if ('error' in input) return json(400, input);
        const key = this.keys.find((candidate) => candidate.id === input.key_id);
        if (!key) return json(404, { error: `Key ${input.key_id} not found in this project` });
        key.revoked = 1;
        return json(200, { ok: true });
      }
      case 'POST keys/revoke-bulk': {
        const input = validate(RevokeBulkBody, body);
        if ('error' in input) return json(400, input);
        const matching = this.keys.filter((key) => key.watermark === input.watermark && key.revoked === 0);
        const revoking = matching.slice(0, this.options.bulkRevokePerCall ?? matching.length);
        for (const key of revoking) key.revoked = 1;
        return json(200, { ok: true, revoked_count: revoking.length, complete: revoking.length === matching.length });
      }
      case 'GET versions':
        return json(200, { versions: this.versions, current_version_id: this.currentVersionId, total: this.versions.length });
      case 'POST versions/rollback': {
        const input = validate(RollbackBody, body);
        if ('error' in input) return json(400, input);
        if (!this.versions.some((version) => version.id === input.version_id))
          return json(404, { error: `Version ${input.version_id} not found in this project` });
        this.currentVersionId = input.version_id;
        return json(200, { ok: true, current_version_id: input.version_id });
      }
      case 'GET webhooks':
        return json(200, { webhooks: this.webhooks, total: this.webhooks.length });
      case 'POST leak/trace': {
        // The API's own rule, on the stand-in's keys and versions.
        const problem = dumpProblem(text);
        if (problem) return json(400, { error: problem });
        const store = {
          listVersions: async () => this.versions,
          listKeysWithWatermark: async (_project: string, watermark: string, offset: number, limit: number) => {
            const listed = this.keys.filter((key) => key.watermark === watermark);
            return { keys: listed.slice(offset, offset + limit), total: listed.length };
          },
        };
        return json(200, await traceLeak(store, { id: this.options.projectId }, text));
      }
      default:
        return json(404, { error: GATEWAY_RESPONSES.MISSING_AUTHENTICATION_TOKEN.error });
    }
  }

  /** Serve the stand-in on 127.0.0.1 (random port) for a child process; close() when done. */
  async listen(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
        const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
        void this.fetch(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined }).then(
          async (response) => {
            res.writeHead(response.status, Object.fromEntries(response.headers));
            res.end(Buffer.from(await response.arrayBuffer()));
          },
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }
}

function validate<T>(schema: z.ZodMiniType<T>, input: unknown): T | { error: string } {
  const result = schema.safeParse(input);
  return result.success ? result.data : { error: result.error.issues[0]?.message ?? 'Invalid request' };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

// ---- Fixtures ----

let sequence = 0;
const hex = (n: number, length: number) => n.toString(16).padStart(length, '0').slice(-length);

export function makeKey(fields: Partial<Key> = {}): Key {
  sequence++;
  return {
    id: `key_${hex(sequence, 20)}`,
    user_hash: hex(sequence * 7919, 64),
    tier: 'standard',
    watermark: hex(sequence * 104729, 16),
    issued_at: 1_763_788_800 + sequence,
    expires_at: 1_766_380_800 + sequence,
    max_uses: null,
    current_uses: 0,
    revoked: 0,
    ...fields,
  };
}

export function makeVersion(number: number, fields: Partial<Version> = {}): Version {
  return {
    id: `ver_${hex(number, 20)}`,
    version_number: number,
    uploaded_at: 1_763_700_000 + number * 86_400,
    size_bytes: 40_000 + number * 512,
    notes: `Release ${number}`,
    ...fields,
  };
}

export function makeWebhook(fields: Partial<Webhook> = {}): Webhook {
  return {
    id: 'whk_2d8f4a6c0e1b3795c4e8',
    url: 'https://discord.com/api/webhooks/1311223344556677889/secret-webhook-token-value',
    events: '["version_deployed","key_abuse"]',
    enabled: 1,
    created_at: 1_763_616_000,
    updated_at: 1_763_616_000,
    ...fields,
  };
}
