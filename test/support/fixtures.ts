import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { inject } from 'vitest';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { createStores, type Stores } from '#adapters/stores';
import { createTableInput } from '#adapters/table-definition';
import { newId } from '#domain/ids';
import type { Caller, Plan } from '#domain/model';
import { sha256Hex } from '#domain/scripts';
import { callerOfToken, hashToken, issueToken, newApiToken, type TokenScope } from '#domain/tokens';
import { ROUTES, type Route } from '#http/routes';
import { authorizerContextFor, buildProxyEvent } from '#local/proxy-event';
import type { EventName } from '#schemas/resources';

/** A fixed clock for seeded data: Tue, 14 Nov 2023 22:13:20 UTC. */
export const FIXED_NOW = 1_700_000_000;

/** A bulk revoke's time budget when the test is not about it: never runs out. */
export const NO_DEADLINE = (): number => Number.POSITIVE_INFINITY;

export const TEST_API_ID = 'a1b2c3d4e5';
export const TEST_STAGE = 'v1';

export type RouteEntry = Route['entry'];

function routeOf(entry: RouteEntry): Route {
  const route = ROUTES.find((candidate) => candidate.entry === entry);
  if (!route) throw new Error(`No route with entry ${entry}`);
  return route;
}

export interface ApiEventInput {
  /** Path parameter `id`; omitted means the event has no path parameters at all. */
  projectId?: string;
  /** Path parameter `key_id`, for the routes that name a key in their path. */
  keyId?: string;
  /** Path parameter `entry_id`, for the route that names a blacklist entry. */
  entryId?: string;
  /** The authorizer context API Gateway passes on; null builds an event that never went through the authorizer. */
  caller?: Caller | null;
  query?: Record<string, string>;
  /** Only set when a parameter is repeated; API Gateway fills both maps. */
  multiValueQuery?: Record<string, string[]>;
  /** An object is sent as JSON; a string is sent as is (for malformed bodies); null is no body. */
  body?: unknown;
  headers?: Record<string, string>;
  isBase64Encoded?: boolean;
  requestId?: string;
}

export const DEFAULT_CALLER: Caller = callerOfToken('own_test', hashToken('sdt_test-token'), 'write');

/**
 * An API Gateway REST proxy event for one of the API's routes, as API Gateway builds it after a Lambda
 * authorizer allowed the request: `requestContext.authorizer` carries the authorizer's context.
 */
export function apiEvent(entry: RouteEntry, input: ApiEventInput = {}): APIGatewayProxyEvent {
  const route = routeOf(entry);
  const projectId = input.projectId;
  const caller = input.caller === undefined ? DEFAULT_CALLER : input.caller;
  const hasBody = route.method !== 'GET' && input.body !== undefined && input.body !== null;
  const path = route.path
    .replace('{id}', projectId ?? '')
    .replace('{key_id}', input.keyId ?? '')
    .replace('{entry_id}', input.entryId ?? '');
  return buildProxyEvent({
    method: route.method,
    resource: route.path,
    path,
    pathParameters:
      projectId === undefined
        ? null
        : {
            id: projectId,
            ...(input.keyId !== undefined && route.path.includes('{key_id}') ? { key_id: input.keyId } : {}),
            ...(input.entryId !== undefined && route.path.includes('{entry_id}') ? { entry_id: input.entryId } : {}),
          },
    headers: {
      Accept: 'application/json',
      Host: `${TEST_API_ID}.execute-api.us-east-1.amazonaws.com`,
      'User-Agent': 'vitest',
      ...(hasBody ? { 'Content-Type': 'textBody' in route ? 'text/plain; charset=utf-8' : 'application/json' } : {}),
      ...input.headers,
    },
    queryStringParameters: input.query ?? null,
    ...(input.multiValueQuery ? { multiValueQueryStringParameters: input.multiValueQuery } : {}),
    body: !hasBody ? null : typeof input.body === 'string' ? input.body : JSON.stringify(input.body),
    isBase64Encoded: input.isBase64Encoded ?? false,
    authorizer: caller ? authorizerContextFor(caller) : null,
    requestId: input.requestId ?? randomUUID(),
    requestTimeEpoch: FIXED_NOW * 1000,
    sourceIp: '203.0.113.7',
    stage: TEST_STAGE,
    accountId: '123456789012',
    apiId: TEST_API_ID,
  });
}

/** A Lambda context; `awsRequestId` is what a 500 reports as `request_id`. */
export function lambdaContext(awsRequestId: string = randomUUID()): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'developer-api-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:developer-api-test',
    memoryLimitInMB: '512',
    awsRequestId,
    logGroupName: '/aws/lambda/developer-api-test',
    logStreamName: '2023/11/14/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export function methodArn(method = 'GET', path = '/v1/projects/prj_1/keys'): string {
  return `arn:aws:execute-api:us-east-1:123456789012:${TEST_API_ID}/${TEST_STAGE}/${method}${path}`;
}

/** What API Gateway hands a TOKEN authorizer: the raw `Authorization` header value. */
export function authorizerEvent(authorizationToken: string, arn: string = methodArn()): APIGatewayTokenAuthorizerEvent {
  return { type: 'TOKEN', authorizationToken, methodArn: arn };
}

// ---- DynamoDB Local ----

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/** The DynamoDB Local the integration run's global setup started. */
export function dynamodbEndpoint(): string {
  const endpoint = process.env.DYNAMODB_ENDPOINT ?? inject('dynamodbEndpoint');
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: run integration tests through vitest --project integration');
  return endpoint;
}

export interface TestTable {
  tableName: string;
  endpoint: string;
  db: DynamoDBDocumentClient;
  stores: Stores;
  drop: () => Promise<void>;
}

export interface TestTableOptions {
  /** Keep the real table's stream: only for tests that poll it (the delivery pipeline). */
  stream?: boolean;
}

/**
 * A fresh table of the real definition, so test files never see each other's items; without its stream unless
 * asked. DynamoDB Local looks up a stream on every write to a stream-enabled table, and that lookup slows with
 * every stream record the run has written so far (measured: a put 1.3 ms on a new table without a stream, 7–17 ms
 * on a new one with it, once 6,000 records were on another table's stream), so streams everywhere made the
 * suite's later files several times slower than the same files run first.
 */
export async function createTestTable(prefix: string, options: TestTableOptions = {}): Promise<TestTable> {
  const endpoint = dynamodbEndpoint();
  const tableName = `${prefix}-${randomUUID().slice(0, 8)}`;
  const db = createDocumentClient(localDynamoConfig(endpoint));
  const { StreamSpecification, ...withoutStream } = createTableInput(tableName);
  await db.send(new CreateTableCommand(options.stream ? { ...withoutStream, StreamSpecification } : withoutStream));
  return {
    tableName,
    endpoint,
    db,
    stores: createStores(db, tableName),
    drop: async () => {
      await db.send(new DeleteTableCommand({ TableName: tableName }));
      db.destroy();
    },
  };
}

/** Every item of the table, all pages read, strongly consistent: what a test compares to show nothing was written. */
export async function scanTable({ db, tableName }: Pick<TestTable, 'db' | 'tableName'>): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

export interface SeededOwner extends Caller {
  /** The raw bearer token; only its hash is in the table. */
  token: string;
}

/** A new owner with one token of `scope` (write unless said). */
export async function seedOwner(stores: Pick<Stores, 'dashboard' | 'tokens'>, now: number = FIXED_NOW, scope: TokenScope = 'write'): Promise<SeededOwner> {
  const ownerId = await stores.dashboard.createOwner(now);
  const token = newApiToken();
  const tokenHash = hashToken(token);
  await issueToken(stores.tokens, { ownerId, tokenHash, now, scope });
  return { ...callerOfToken(ownerId, tokenHash, scope), token };
}

export interface ProjectSeed {
  ownerId: string;
  plan?: Plan;
  name?: string;
  /** Keys to issue, each with its own random watermark unless `watermark` is given. */
  keys?: number;
  watermark?: string;
  /** Notes of the versions to upload, in upload order; the last becomes current. */
  versions?: string[];
  webhooks?: { url: string; events: EventName[]; enabled?: boolean }[];
  now?: number;
}

export interface SeededProject {
  projectId: string;
  keys: { id: string; watermark: string }[];
  versions: { id: string; version_number: number }[];
  webhookIds: string[];
}

/** A project as the dashboard would leave it, written through the same stores the dashboard writes with. */
export async function seedProject({ dashboard }: Pick<Stores, 'dashboard'>, seed: ProjectSeed): Promise<SeededProject> {
  const now = seed.now ?? FIXED_NOW;
  const projectId = await dashboard.createProject({ ownerId: seed.ownerId, name: seed.name ?? 'Test Script', plan: seed.plan ?? 'business', now });
  const keys = seed.keys ? await dashboard.issueKeys({ projectId, count: seed.keys, watermark: seed.watermark, tier: 'standard', maxUses: null, now }) : [];
  const versions: SeededProject['versions'] = [];
  for (const [i, notes] of (seed.versions ?? []).entries()) {
    versions.push(await dashboard.uploadVersion({ id: newId('ver'), projectId, sizeBytes: 1024 * (i + 1), sha256: sha256Hex(notes), notes, now: now + i }));
  }
  const webhookIds: string[] = [];
  for (const webhook of seed.webhooks ?? []) {
    webhookIds.push(await dashboard.addWebhook({ projectId, url: webhook.url, events: webhook.events, enabled: webhook.enabled ?? true, now }));
  }
  return { projectId, keys, versions, webhookIds };
}

/** A port nothing listens on right now, for a server that must know its port before it starts. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no free port');
  return address.port;
}

/**
 * A script file of exactly `bytes` bytes (a print, then a Luau comment), for `versions upload --file`. The content
 * depends on the size alone, so one file per size serves every test and run.
 */
export function scriptFileOf(bytes: number): string {
  const path = join(tmpdir(), `sdapi-test-script-${bytes}.luau`);
  const head = 'print("test script")\n--';
  writeFileSync(path, (head + '-'.repeat(Math.max(0, bytes - head.length))).slice(0, bytes));
  return path;
}
