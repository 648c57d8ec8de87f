import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import type { Caller, Plan } from '#domain/model';
import { keyOf } from '#store/layout';
import { DEFAULT_CALLER, lambdaContext } from '#test-support/fixtures';

/** 45 s into the minute that opened at 1_700_000_040: the window resets in 15 s. */
export const NOW = 1_700_000_085;
export const WINDOW_START = 1_700_000_040;
export const SECONDS_TO_NEXT_WINDOW = 15;

export const PROJECT_ID = 'prj_0123456789abcdef0123';
export const CALLER: Caller = DEFAULT_CALLER;

export const SECURITY_HEADERS = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

export type Item = Record<string, unknown>;

export function projectItem(overrides: { ownerId?: string; plan?: Plan; keyCount?: number; currentVersionId?: string | null } = {}): Item {
  return {
    ...keyOf.project(PROJECT_ID),
    entity: 'PROJECT',
    id: PROJECT_ID,
    ownerId: overrides.ownerId ?? CALLER.ownerId,
    name: 'Test Script',
    plan: overrides.plan ?? 'business',
    currentVersionId: overrides.currentVersionId ?? null,
    keyCount: overrides.keyCount ?? 0,
    versionCount: 0,
    createdAt: 1_699_000_000,
  };
}

/** A key item as the repository stores it, internal attributes included. */
export function keyItem(seq: number, overrides: Item = {}): Item {
  const id = `key_${String(seq).padStart(20, '0')}`;
  return {
    ...keyOf.key(id),
    entity: 'KEY',
    projectId: PROJECT_ID,
    id,
    user_hash: 'b'.repeat(64),
    tier: 'standard',
    watermark: '0123456789abcdef',
    issued_at: 1_699_500_000,
    expires_at: 1_702_092_000,
    max_uses: null,
    current_uses: 3,
    revoked: 0,
    issueSeq: seq,
    issueOrderKey: PROJECT_ID,
    watermarkKey: `${PROJECT_ID}#0123456789abcdef`,
    ...overrides,
  };
}

export const conditionFailed = (item?: Item) =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {}, ...(item ? { Item: marshallFlat(item) } : {}) });

export const transactionCanceled = (...codes: string[]) =>
  new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, CancellationReasons: codes.map((Code) => ({ Code })) });

/** What DynamoDB returns with a failed condition: attribute values in wire form (strings and numbers suffice here). */
function marshallFlat(item: Item) {
  return Object.fromEntries(
    Object.entries(item).map(([name, value]) => [name, typeof value === 'number' ? { N: String(value) } : { S: String(value) }]),
  );
}

/**
 * The document client mocked for every test of a file, reset before each, with the clock fixed at NOW and
 * the rate window allowing the request and the caller's project present unless a test says otherwise.
 */
export function useMockTable() {
  const ddb = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    process.env.TABLE_NAME = 'developer-api-test';
    ddb.reset();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW * 1000);
    givenRequestCount(1);
    ddb.on(GetCommand).resolves({});
    givenProject(projectItem());
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  function givenRequestCount(countAfterThisRequest: number) {
    ddb.on(UpdateCommand, { Key: keyOf.rateWindow(CALLER.tokenHash, WINDOW_START) }).resolves({ Attributes: { requests: countAfterThisRequest } });
  }

  function givenRateLimitReached() {
    ddb.on(UpdateCommand, { Key: keyOf.rateWindow(CALLER.tokenHash, WINDOW_START) }).rejects(conditionFailed());
  }

  function givenProject(item: Item | undefined) {
    ddb.on(GetCommand, { Key: keyOf.project(PROJECT_ID) }).resolves(item ? { Item: item } : {});
  }

  return { ddb, givenRequestCount, givenRateLimitReached, givenProject };
}

export interface Reply {
  status: number;
  headers: Record<string, string | number | boolean>;
  body: Record<string, unknown>;
  raw: string;
}

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export async function invoke(handler: Handler, event: APIGatewayProxyEvent, context: Context = lambdaContext()): Promise<Reply> {
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

/** Everything written to stdout and stderr (where the Powertools logger writes) until `restore`. */
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
