import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import type { ClaimResult, DeliveryStore } from '#domain/ports';
import { callerOfToken, hashToken } from '#domain/tokens';
import type { DeliveryMessage } from '#domain/webhooks/delivery-message';
import { DEFAULT_DISCORD_API_BASE, executeWebhookUrl, parseDiscordWebhookUrl } from '#domain/webhooks/discord-webhook-url';
import type { InFlightMessages } from '#domain/webhooks/ports';
import { createDeliveryHandler } from '#functions/webhook-delivery';
import { GATEWAY_RESPONSES, type GatewayResponseType } from '#http/gateway-responses';
import type { HttpApiHandler } from '#http/http-api';
import { SECURITY_HEADERS } from '#http/responses';
import { ROUTES } from '#http/routes';
import {
  type EntryName,
  type GatewayDeps,
  gatewayResponse,
  handleGatewayRequest,
  MAX_REQUEST_BODY_BYTES,
  type ProxyHandler,
  type RawRequest,
} from '#local/gateway';
import { countEarlierRequests, type MemoryApi, memoryApi, memoryAuthorizer, PROJECT_ID, UNKNOWN_PROJECT_ID } from '#test-support/api-harness';
import { type ApiEventInput, apiEvent, authorizerEvent, DEFAULT_CALLER, lambdaContext, type RouteEntry } from '#test-support/fixtures';
import { captureAllOutput, leakedSecrets } from '#test-support/output-capture';
import { PROPERTY_RUNS, reportFigure, timeoutFor } from '#test-support/runs';

/**
 * Security rules checked across the code paths that could break them: only Discord's webhook API is ever
 * called, every response the API or its gateway makes carries the no-store and nosniff headers, and no raw
 * token, usage-plan key value or webhook token reaches a log line.
 */

// ---- Only Discord ----

const WEBHOOK_ID = '112233445566778899';
const WEBHOOK_SECRET = 'hooK-t0ken_never_in_logs_or_elsewhere';

/** Configured URLs that must never be fetched, whatever they look like. */
const NEVER_CALLED = [
  `https://example.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `http://discord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://discord.com.evil.test/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://discord.com@evil.test/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://evil.test@discord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://user:pass@discord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://discord.com:8443/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://discord.com./api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://evildiscord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://discord.com%2eevil.test/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://127.0.0.1/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `https://169.254.169.254/latest/meta-data/`,
  `https://discord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}/../../../../evil`,
  `https://discord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}?url=https://evil.test`,
  `https://discord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}#@evil.test`,
  `https://discord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}%2F..%2F..%2Fevil`,
  `https://discord.com/attachments/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
  `javascript:fetch('https://discord.com/api/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}')`,
  `file:///etc/passwd`,
  'not a url at all',
];

/** The delivery store's answers for enabled webhooks (their configured URLs by id) and deliveries never tried before, in memory. */
class MemoryDeliveryStore implements DeliveryStore {
  readonly urls = new Map<string, string>();
  async webhookState(_projectId: string, webhookId: string) {
    return { enabled: 1, url: this.urls.get(webhookId) ?? '' };
  }
  async claimDelivery(): Promise<ClaimResult> {
    return { outcome: 'claimed', token: 'claim-1' };
  }
  async markSent() {
    return true;
  }
  async releaseClaim() {}
  async disableWebhook() {
    return true;
  }
}

const inFlight: InFlightMessages = { changeVisibility: async () => undefined, sendDelayed: async () => undefined, deadLetter: async () => undefined };

const deliveryStore = new MemoryDeliveryStore();

/** A delivery message for a webhook configured with `url`; the message names the webhook, the store holds its URL. */
function sqsRecord(url: string, index: number): SQSRecord {
  const webhookId = `whk_${index}`;
  deliveryStore.urls.set(webhookId, url);
  const message: DeliveryMessage = {
    deliveryId: `evt-${index}:${webhookId}`,
    webhook: { id: webhookId },
    project: { id: 'prj_1', name: 'Script' },
    event: {
      name: 'version_deployed',
      projectId: 'prj_1',
      occurredAt: 1_700_000_000,
      data: { versionId: 'ver_1', versionNumber: 1, sizeBytes: 10, notes: '' },
    },
  };
  return {
    messageId: `m-${index}`,
    receiptHandle: `r-${index}`,
    body: JSON.stringify(message),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:deliveries',
    awsRegion: 'us-east-1',
  };
}

describe('only Discord webhook hosts are ever called', () => {
  let fetchSpy: MockInstance<typeof fetch>;
  beforeEach(() => {
    fetchSpy = vi.spyOn(globalThis, 'fetch').mockImplementation(async () => new Response('{"id":"1"}', { status: 200 }));
  });

  const deliver = () =>
    createDeliveryHandler({
      store: deliveryStore,
      inFlight,
      logger: new Logger({ serviceName: 'security-test' }),
      discordApiBase: DEFAULT_DISCORD_API_BASE,
      claimStaleAfterSeconds: 180,
    });

  it(`never fetches any of ${NEVER_CALLED.length} non-Discord, http, look-alike, userinfo or port URLs, and logs each without its token`, async () => {
    const output = captureAllOutput();
    const result = await deliver()({ Records: NEVER_CALLED.map(sqsRecord) });
    output.restore();

    expect(result.batchItemFailures).toEqual([]);
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(output.lines().filter((line) => line.includes('Rejected webhook config'))).toHaveLength(NEVER_CALLED.length);
    expect(leakedSecrets(output.text(), [WEBHOOK_SECRET])).toEqual([]);
  });

  it("posts a Discord URL on any of Discord's hosts to the fixed API base, never to the configured host", async () => {
    const configured = ['discord.com', 'discordapp.com', 'canary.discord.com', 'ptb.discordapp.com'].map(
      (host) => `https://${host}/api/v9/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}`,
    );
    await deliver()({ Records: configured.map(sqsRecord) });
    const called = fetchSpy.mock.calls.map(([input]) => String(input));
    expect(called).toEqual(configured.map(() => `https://discord.com/api/v10/webhooks/${WEBHOOK_ID}/${WEBHOOK_SECRET}?wait=true`));
  });

  it(
    'only ever builds a post URL on the API base, for arbitrary and adversarial configured URLs',
    () => {
      const discordHosts = new Set(['discord.com', 'discordapp.com', 'canary.discord.com', 'ptb.discord.com', 'canary.discordapp.com', 'ptb.discordapp.com']);
      const part = <T>(...values: T[]) => fc.constantFrom(...values);
      const adversarial = fc
        .tuple(
          part('https://', 'http://', 'HTTPS://', 'https:/', 'https:\\\\', 'ftp://', ' https://'),
          part('', 'discord.com@', 'user:pass@', 'evil.test@'),
          part(
            'discord.com',
            'DISCORD.COM',
            'discord.com.',
            'discord.com.evil.test',
            'evil.test',
            'discordapp.com',
            'canary.discord.com',
            'discord.co',
            '127.0.0.1',
            '[::1]',
            'xn--discrd-2ya.com',
          ),
          part('', ':443', ':8443', ':80'),
          part('/api/webhooks/', '/api/v10/webhooks/', '/webhooks/', '/api/webhooks/../', '/API/webhooks/'),
          fc.stringMatching(/^[0-9]{1,22}$/),
          part('/', '//', '/./', ''),
          fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/), fc.string({ maxLength: 40 })),
          part('', '/', '?wait=false', '#frag', '/..', '%2F..'),
        )
        .map((parts) => parts.join(''));
      const genuine = fc
        .tuple(
          fc.constantFrom(...discordHosts),
          part('', '/v6', '/v9', '/v10'),
          fc.stringMatching(/^[0-9]{17,20}$/),
          fc.stringMatching(/^[A-Za-z0-9_-]{60,70}$/),
        )
        .map(([host, version, id, token]) => `https://${host}/api${version}/webhooks/${id}/${token}`);
      // One change to a genuine URL: each must either keep it a Discord webhook URL or make it refused.
      const mutated = fc
        .tuple(genuine, part('userinfo', 'port', 'query', 'fragment', 'suffix-host', 'http', 'upper', 'trailing-dot', 'path'))
        .map(([url, change]) => {
          const at = url.indexOf('/api');
          switch (change) {
            case 'userinfo':
              return url.replace('https://', 'https://evil.test@');
            case 'port':
              return `${url.slice(0, at)}:444${url.slice(at)}`;
            case 'query':
              return `${url}?x=https://evil.test`;
            case 'fragment':
              return `${url}#@evil.test`;
            case 'suffix-host':
              return `${url.slice(0, at)}.evil.test${url.slice(at)}`;
            case 'http':
              return url.replace('https://', 'http://');
            case 'upper':
              return url.toUpperCase();
            case 'trailing-dot':
              return `${url.slice(0, at)}.${url.slice(at)}`;
            default:
              return `${url}/../../../evil`;
          }
        });
      let accepted = 0;
      let tried = 0;
      fc.assert(
        fc.property(fc.oneof(adversarial, genuine, mutated, fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string()), (raw) => {
          tried += 1;
          const webhook = parseDiscordWebhookUrl(raw);
          if (!webhook) return;
          accepted += 1;
          const configured = new URL(raw);
          expect(configured.protocol).toBe('https:');
          expect(discordHosts.has(configured.hostname)).toBe(true);
          expect([configured.username, configured.password, configured.port]).toEqual(['', '', '']);
          const post = new URL(executeWebhookUrl(DEFAULT_DISCORD_API_BASE, webhook));
          expect(post.origin).toBe('https://discord.com');
          expect(post.pathname).toBe(`/api/v10/webhooks/${webhook.id}/${webhook.token}`);
        }),
        { numRuns: PROPERTY_RUNS },
      );
      reportFigure(
        `webhook URL property: ${tried} configured URLs tried, ${accepted} accepted as Discord webhooks, every post URL on https://discord.com/api/v10`,
      );
    },
    timeoutFor(60),
  );
});

// ---- Response headers ----

function expectSecurityHeaders(headers: Record<string, unknown> | undefined, label: string) {
  expect(headers?.['Cache-Control'], label).toBe('no-store');
  expect(headers?.['X-Content-Type-Options'], label).toBe('nosniff');
  expect(headers?.['Content-Type'], label).toBe('application/json');
}

describe('every API response carries Cache-Control: no-store and X-Content-Type-Options: nosniff', () => {
  it('on the handlers: 200, 400, 401, 403, 404, 429 and 500', async () => {
    const nothing = () => undefined;
    const cases: [string, (api: MemoryApi) => unknown, RouteEntry, APIGatewayProxyEvent][] = [
      ['200', nothing, 'list-keys', apiEvent('list-keys', { projectId: PROJECT_ID })],
      ['400', nothing, 'list-keys', apiEvent('list-keys', { projectId: PROJECT_ID, query: { limit: '0' } })],
      ['401', nothing, 'list-keys', apiEvent('list-keys', { projectId: PROJECT_ID, caller: null })],
      [
        '403',
        ({ store }) => store.addProject({ id: PROJECT_ID, ownerId: DEFAULT_CALLER.ownerId, plan: 'pro' }),
        'list-keys',
        apiEvent('list-keys', { projectId: PROJECT_ID }),
      ],
      ['404', nothing, 'list-keys', apiEvent('list-keys', { projectId: UNKNOWN_PROJECT_ID })],
      ['400', nothing, 'revoke-key', apiEvent('revoke-key', { projectId: PROJECT_ID, body: { key_id: 'k'.repeat(70_000) } })],
      ['400', nothing, 'revoke-key', apiEvent('revoke-key', { projectId: PROJECT_ID, body: { key_id: 'k' }, headers: { 'Content-Type': 'text/plain' } })],
      ['429', ({ store }) => countEarlierRequests(store, 100), 'list-keys', apiEvent('list-keys', { projectId: PROJECT_ID })],
      [
        '500',
        ({ store }) => vi.spyOn(store, 'listKeysAfter').mockRejectedValue(new Error('table unavailable')),
        'list-keys',
        apiEvent('list-keys', { projectId: PROJECT_ID }),
      ],
    ];
    const output = captureAllOutput();
    try {
      for (const [status, given, entry, event] of cases) {
        // Each case on a fresh store holding the caller's Business project, then the case's own setup.
        const api = memoryApi();
        await given(api);
        const result = await api.handlers[entry](event, lambdaContext());
        expect(String(result.statusCode)).toBe(status);
        expectSecurityHeaders(result.headers, `handler ${status}`);
      }
    } finally {
      output.restore();
    }
  });

  it('on every response the gateway makes itself', async () => {
    for (const type of Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[]) {
      expectSecurityHeaders(gatewayResponse(type, 'req-1').headers, `gateway ${type}`);
    }
    const hang: ProxyHandler = () => new Promise(() => undefined);
    const policy = (Effect: 'Allow' | 'Deny'): APIGatewayAuthorizerResult => ({
      principalId: 'own_1',
      policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect, Resource: '*' }] },
      context: { ownerId: 'own_1', tokenHash: 'a'.repeat(64) },
    });
    const allow = async () => policy('Allow');
    const deny = async () => policy('Deny');
    // The owner API's routes only: the loader's are never reached by these requests.
    const unreached: HttpApiHandler = async () => Promise.reject(new Error('not routed here'));
    const handlers = (handler: ProxyHandler) => Object.fromEntries(ROUTES.map((route) => [route.entry, handler])) as Record<EntryName, ProxyHandler>;
    const loaderHandlers = {
      'loader-validate': unreached,
      'loader-script': unreached,
      'loader-stub': unreached,
      'discord-interactions': unreached,
      'shop-receiver': unreached,
      'free-start': unreached,
      'free-return': unreached,
      'free-postback': unreached,
    };
    const request = (overrides: Partial<RawRequest> = {}): RawRequest => ({
      method: 'GET',
      target: '/v1/projects/prj_1/keys',
      rawHeaders: ['Authorization', 'Bearer sdt_x'],
      body: Buffer.alloc(0),
      sourceIp: '127.0.0.1',
      ...overrides,
    });
    const flows: [number, RawRequest, GatewayDeps][] = [
      [401, request({ rawHeaders: [] }), { authorizer: allow, handlers: handlers(hang), loaderHandlers }],
      [401, request(), { authorizer: async () => Promise.reject(new Error('Unauthorized')), handlers: handlers(hang), loaderHandlers }],
      [403, request(), { authorizer: deny, handlers: handlers(hang), loaderHandlers }],
      [404, request({ target: '/v1/nothing' }), { authorizer: allow, handlers: handlers(hang), loaderHandlers }],
      [
        413,
        request({ method: 'POST', target: '/v1/projects/prj_1/keys/revoke', body: Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1) }),
        { authorizer: allow, handlers: handlers(hang), loaderHandlers },
      ],
      [500, request(), { authorizer: async () => Promise.reject(new Error('table down')), handlers: handlers(hang), loaderHandlers }],
      [500, request(), { authorizer: allow, handlers: handlers(async () => Promise.reject(new Error('crash'))), loaderHandlers }],
      [500, request(), { authorizer: allow, handlers: handlers(async () => ({ statusCode: 'two hundred' })), loaderHandlers }],
      [500, request(), { authorizer: allow, handlers: handlers(hang), loaderHandlers, handlerTimeoutMs: 20 }],
    ];
    for (const [status, raw, deps] of flows) {
      const { response } = await handleGatewayRequest(raw, deps);
      expect(response.status).toBe(status);
      expectSecurityHeaders(response.headers, `gateway flow ${status}`);
    }
    expect(SECURITY_HEADERS).toMatchObject({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  });
});

// ---- Logs ----

describe('no raw token, usage-plan key value or webhook token in any log line', () => {
  const GOOD_TOKEN = 'sdt_good-token-that-must-never-be-logged-0123456789abcdef';
  const BAD_TOKENS = [
    'sdt_unknown-token-that-must-never-be-logged-0123456789',
    `sdt_${'x'.repeat(600)}`,
    'sdt_with\u0000control-chars-never-logged',
    'sdt_with space never-logged',
  ];

  it('holds through the authorizer with good and bad tokens and handlers answering 200, 4xx and 500', async () => {
    const { store, handlers } = memoryApi();
    store.addToken(DEFAULT_CALLER.ownerId, GOOD_TOKEN);
    const authorizer = memoryAuthorizer(store);
    const output = captureAllOutput();
    try {
      await authorizer(authorizerEvent(`Bearer ${GOOD_TOKEN}`));
      for (const token of BAD_TOKENS) {
        for (const header of [`Bearer ${token}`, token, `Basic ${token}`, `bearer  ${token}`]) await authorizer(authorizerEvent(header)).catch(() => undefined);
      }
      const caller = callerOfToken(DEFAULT_CALLER.ownerId, hashToken(GOOD_TOKEN), 'write');
      const statuses: number[] = [];
      const call = async (entry: RouteEntry, input: ApiEventInput = {}) =>
        statuses.push((await handlers[entry](apiEvent(entry, { projectId: PROJECT_ID, caller, ...input }), lambdaContext())).statusCode);
      await call('list-keys');
      await call('list-keys', { query: { limit: GOOD_TOKEN } });
      await call('revoke-key', { body: { key_id: GOOD_TOKEN } });
      vi.spyOn(store, 'listKeysAfter').mockRejectedValue(
        Object.assign(new Error('ProvisionedThroughputExceededException'), { name: 'ProvisionedThroughputExceededException' }),
      );
      await call('list-keys');
      expect(statuses).toEqual([200, 400, 404, 500]);
    } finally {
      output.restore();
    }
    const secrets = [GOOD_TOKEN, hashToken(GOOD_TOKEN), ...BAD_TOKENS, ...BAD_TOKENS.map(hashToken)];
    expect(output.lines().length).toBeGreaterThan(0);
    expect(leakedSecrets(output.text(), secrets)).toEqual([]);
    reportFigure(`log scan (unit): ${output.lines().length} log lines, ${secrets.length} secrets searched, 0 found`);
  });
});
