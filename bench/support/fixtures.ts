import { createHash, randomBytes } from 'node:crypto';
import { BatchWriteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { keyOf } from '#adapters/layout';
import type { Stores } from '#adapters/stores';
import { newId } from '#domain/ids';
import type { Caller } from '#domain/model';
import { callerOfToken, hashToken, issueToken, newApiToken } from '#domain/tokens';
import { authorizerContextFor, buildProxyEvent } from '#local/proxy-event';
import type { BenchTable } from './dynamodb';
import { mapBounded } from './stats';

export interface BenchProject {
  ownerId: string;
  projectId: string;
  /** A real token saved for the owner, for the authorizer and the local server. */
  token: string;
  tokenHash: string;
}

export async function createBusinessProject(stores: Stores, name: string): Promise<BenchProject> {
  const now = nowSeconds();
  const ownerId = await stores.dashboard.createOwner(now);
  const token = newApiToken();
  const tokenHash = hashToken(token);
  await issueToken(stores.tokens, { ownerId, tokenHash, now });
  const projectId = await stores.dashboard.createProject({ ownerId, name, plan: 'business', now });
  return { ownerId, projectId, token, tokenHash };
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Callers for in-process handler calls, a fresh token hash every `perToken` requests: the exact 100/min
 * limit is part of the measured path, but must not be what stops the measurement.
 */
export class CallerPool {
  private used = 0;
  private current: Caller;

  constructor(
    private readonly ownerId: string,
    private readonly perToken = 90,
  ) {
    this.current = this.fresh();
  }

  next(): Caller {
    if (this.used++ >= this.perToken) {
      this.current = this.fresh();
      this.used = 1;
    }
    return this.current;
  }

  private fresh(): Caller {
    return callerOfToken(this.ownerId, randomBytes(32).toString('hex'), 'write');
  }
}

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Resource path with `{id}`, as in routes.ts. */
  resource: string;
  projectId: string;
  /** `{key_id}` of the routes that name a key. */
  keyId?: string;
  /** `{entry_id}` of the route that names a blacklist entry. */
  entryId?: string;
  caller: Caller;
  query?: Record<string, string>;
  body?: unknown;
}

/** The REST proxy event API Gateway hands a handler after the authorizer let the request through. */
export function apiGatewayEvent(request: ApiRequest): APIGatewayProxyEvent {
  return buildProxyEvent({
    method: request.method,
    resource: request.resource,
    path: request.resource
      .replace('{id}', request.projectId)
      .replace('{key_id}', request.keyId ?? '')
      .replace('{entry_id}', request.entryId ?? ''),
    pathParameters: {
      id: request.projectId,
      ...(request.keyId === undefined ? {} : { key_id: request.keyId }),
      ...(request.entryId === undefined ? {} : { entry_id: request.entryId }),
    },
    headers: {
      Accept: 'application/json',
      Authorization: 'Bearer <redacted>',
      Host: 'api.example.com',
      'User-Agent': 'bench',
      ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    queryStringParameters: request.query && Object.keys(request.query).length > 0 ? request.query : null,
    body: request.body === undefined ? null : JSON.stringify(request.body),
    authorizer: authorizerContextFor(request.caller),
    requestId: randomBytes(8).toString('hex'),
    requestTimeEpoch: Date.now(),
    sourceIp: '127.0.0.1',
    stage: 'v1',
    accountId: '123456789012',
    apiId: 'benchapi',
  });
}

export function lambdaContext(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomBytes(16).toString('hex'),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export function expectStatus(response: APIGatewayProxyResult, status: number, what: string): void {
  if (response.statusCode !== status) throw new Error(`${what}: expected ${status}, got ${response.statusCode} ${response.body}`);
}

// ---- key seeding ----

export interface SeedReport {
  keys: number;
  ms: number;
  method: string;
}

/** Keys through the repository's own issue path (dense sequence, one transaction per 99 keys). */
export async function issueKeys(stores: Stores, projectId: string, count: number, watermark?: string): Promise<SeedReport> {
  const start = performance.now();
  await stores.dashboard.issueKeys({ projectId, count, tier: 'standard', maxUses: null, now: nowSeconds(), ...(watermark ? { watermark } : {}) });
  return { keys: count, ms: performance.now() - start, method: 'DashboardStore.issueKeys' };
}

type Item = Record<string, unknown>;

/** Attributes that differ from key to key; everything else is copied from a key the repository wrote. */
const PER_KEY_ATTRIBUTES = ['pk', 'id', 'user_hash', 'watermark', 'watermarkKey', 'issueSeq'] as const;

/**
 * `count` keys written in exactly the layout DashboardStore.issueKeys writes: the first is issued by the store,
 * the rest are copies of it written with BatchWriteItem with only the per-key attributes replaced, and the
 * project's counter is moved to match. Far faster than transactions when a benchmark needs 100,000 keys.
 */
export async function batchWriteKeys(
  table: BenchTable,
  projectId: string,
  count: number,
  options: { watermark?: string; concurrency?: number } = {},
): Promise<SeedReport> {
  const start = performance.now();
  const template = await layoutTemplate(table, projectId, options.watermark);
  const firstSeq = (await keyCount(table, projectId)) + 1;
  const items: Item[] = Array.from({ length: count - 1 }, (_, i) => {
    const id = newId('key');
    const watermark = options.watermark ?? randomBytes(8).toString('hex');
    const perKey: Record<(typeof PER_KEY_ATTRIBUTES)[number], unknown> = {
      pk: keyOf.key(id).pk,
      id,
      user_hash: createHash('sha256').update(newId('own')).digest('hex'),
      watermark,
      watermarkKey: `${projectId}#${watermark}`,
      issueSeq: firstSeq + i,
    };
    return { ...template, ...perKey };
  });
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25));
  await mapBounded(batches, options.concurrency ?? 8, (batch) => writeBatch(table, batch));
  await table.db.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: keyOf.project(projectId),
      UpdateExpression: 'SET keyCount = :next',
      ConditionExpression: 'keyCount = :current',
      ExpressionAttributeValues: { ':current': firstSeq - 1, ':next': firstSeq - 1 + items.length },
    }),
  );
  return { keys: count, ms: performance.now() - start, method: 'BatchWriteItem (DashboardStore.issueKeys layout)' };
}

async function writeBatch(table: BenchTable, batch: Item[]): Promise<void> {
  let pending = batch.map((Item) => ({ PutRequest: { Item } }));
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > 10) throw new Error('BatchWriteItem kept leaving items unprocessed');
    const { UnprocessedItems } = await table.db.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: pending } }));
    pending = (UnprocessedItems?.[table.tableName] ?? []).flatMap((request) =>
      request.PutRequest?.Item ? [{ PutRequest: { Item: request.PutRequest.Item } }] : [],
    );
  }
}

/** One key issued by the store itself (the first of the `count`), read back as the pattern for the rest. */
async function layoutTemplate(table: BenchTable, projectId: string, watermark: string | undefined): Promise<Item> {
  const [issued] = await table.stores.dashboard.issueKeys({
    projectId,
    count: 1,
    tier: 'standard',
    maxUses: null,
    now: nowSeconds(),
    ...(watermark ? { watermark } : {}),
  });
  if (!issued) throw new Error('issueKeys returned no key');
  const { Item } = await table.db.send(new GetCommand({ TableName: table.tableName, Key: keyOf.key(issued.id), ConsistentRead: true }));
  if (!Item) throw new Error('The issued key cannot be read back');
  for (const name of PER_KEY_ATTRIBUTES) if (!(name in Item)) throw new Error(`Key layout changed: no "${name}" attribute; update bench/support/fixtures.ts`);
  return Item;
}

async function keyCount(table: BenchTable, projectId: string): Promise<number> {
  const project = await table.stores.projects.getProject(projectId);
  if (!project) throw new Error(`Project ${projectId} does not exist`);
  return project.keyCount;
}
