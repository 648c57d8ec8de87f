import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { expect, vi } from 'vitest';
import type { Caller, Project } from '#domain/model';
import { RATE_LIMIT } from '#domain/rate-limit';
import { createAuthorizer } from '#functions/authorizer';
import type { ApiHandler } from '#http/api-handler';
import { createRouteHandlers } from '#http/routes';
import { memoryKeySecret } from '#local/key-secret';
import { DEFAULT_CALLER, lambdaContext, type RouteEntry } from './fixtures';
import { MemoryStores } from './memory-stores';

/** Handler unit tests: the API's handlers and authorizer built on the in-memory stores, and what checks their replies. */

/** 45 s into the minute that opened at 1_700_000_040: the window resets in 15 s. */
export const NOW = 1_700_000_085;
export const WINDOW_START = 1_700_000_040;
export const SECONDS_TO_NEXT_WINDOW = 15;

export const PROJECT_ID = 'prj_0123456789abcdef0123';
/** A well-formed project id no store holds. */
export const UNKNOWN_PROJECT_ID = 'prj_ffffffffffffffffffff';
export const CALLER: Caller = DEFAULT_CALLER;

export const SECURITY_HEADERS = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

export interface MemoryApi {
  store: MemoryStores;
  handlers: Record<RouteEntry, ApiHandler>;
}

/**
 * Every route's handler on a fresh in-memory store holding the caller's Business plan project PROJECT_ID
 * (`project` overrides its fields), with the clock at NOW unless `now` says otherwise.
 */
export function memoryApi(project: Partial<Project> = {}, now: () => number = () => NOW): MemoryApi {
  const store = new MemoryStores();
  store.addProject({ id: PROJECT_ID, ownerId: CALLER.ownerId, ...project });
  return {
    store,
    handlers: createRouteHandlers({
      stores: { projects: store, rateLimits: store, audit: store, keys: store, blacklist: store },
      keySecret: memoryKeySecret(),
      now,
      logger: new Logger({ serviceName: 'developer-api' }),
    }),
  };
}

export const memoryAuthorizer = (store: MemoryStores) => createAuthorizer({ tokens: store, logger: new Logger({ serviceName: 'developer-api-authorizer' }) });

/** Count `requests` earlier requests of the caller in the current window, as the rate limiter would have. */
export async function countEarlierRequests(store: MemoryStores, requests: number): Promise<void> {
  for (let i = 0; i < requests; i++)
    await store.countRequest(CALLER.tokenHash, { start: WINDOW_START, seconds: RATE_LIMIT.windowSeconds }, RATE_LIMIT.requests);
}

const PORT_METHODS = [
  'countRequest',
  'findToken',
  'record',
  'finish',
  'getProject',
  'listKeysAfter',
  'revokeKey',
  'keyIdsWithWatermark',
  'revokeIfActive',
  'activeAmong',
  'listVersions',
  'setCurrentVersion',
  'listWebhooks',
  'findOrder',
  'issue',
  'completeOrder',
  'getKey',
  'resetFingerprints',
  'setBan',
  'extendExpiry',
  'editKey',
] as const satisfies readonly (keyof MemoryStores)[];

/** Watches every port method of the store; the returned function names those called so far, for "before any other work". */
export function watchStoreCalls(store: MemoryStores): () => string[] {
  const spies = PORT_METHODS.map((method) => ({ method, spy: vi.spyOn(store, method) }));
  return () => spies.filter(({ spy }) => spy.mock.calls.length > 0).map(({ method }) => method);
}

export interface Reply {
  status: number;
  headers: Record<string, string | number | boolean>;
  body: Record<string, unknown>;
  raw: string;
}

/** Calls a handler of either front door (the owner API's REST events, the loader's 2.0 events) and reads its JSON answer. */
export async function invoke<Event = APIGatewayProxyEvent>(
  handler: (event: Event, context: Context) => Promise<APIGatewayProxyResult>,
  event: Event,
  context: Context = lambdaContext(),
): Promise<Reply> {
  const result = await handler(event, context);
  return { status: result.statusCode, headers: result.headers ?? {}, body: JSON.parse(result.body) as Record<string, unknown>, raw: result.body };
}

/** A failure as spec §7 has it: JSON `{"error": string}` with the status, and the headers every response carries. */
export function expectError(reply: Reply, status: number, error: string | RegExp) {
  expect(reply.status).toBe(status);
  expect(reply.headers).toMatchObject(SECURITY_HEADERS);
  expect(typeof reply.body.error).toBe('string');
  if (typeof error === 'string') expect(reply.body).toEqual({ error });
  else expect(reply.body.error).toMatch(error);
}

/** Everything written to stdout and stderr (where the Powertools logger writes) until the test's mocks are restored. */
export function captureOutput() {
  const chunks: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  return { text: () => chunks.join('') };
}
