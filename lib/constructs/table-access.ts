import type { ITable, ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { FINGERPRINT_RESET_RETURN_VALUES, KEY_EXTEND_FAILURE_READ, KEY_EXTEND_RETURN_VALUES } from '#adapters/key-store';
import { INDEX_PARTITION, PARTITION, type Partition, UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import { KEY_ATTRIBUTE_TYPES, TABLE } from '#adapters/table-definition';
import type { Route } from '#http/routes';

type IndexName = keyof typeof TABLE.indexes;

/**
 * One line of what a function may do to the table. Every line is scoped by `dynamodb:LeadingKeys` to partitions
 * that begin as layout.ts says, so no line allows `Scan` (it names no partition) or reaches another kind of item.
 */
export type TableGrant =
  /**
   * `actions` on the table's items whose partition keys begin as `partitions` do. With `attributes`, the request may
   * name no other attribute besides the keys: an update can write or test only those; and a request that sets
   * ReturnValues may set only `returnValues` (NONE when not given).
   */
  | ({ actions: readonly string[]; partitions: readonly Partition[] } & ItemLimits)
  /** `Query` of this one index, in partitions that begin as INDEX_PARTITION says (a project's). */
  | { queryIndex: IndexName };

/**
 * ReturnValues a grant that lists attributes may allow: ALL_OLD and ALL_NEW return every attribute of the item, and
 * AWS counts what a request returns among the attributes it accesses (`dynamodb:Attributes`, "Using IAM policy
 * conditions for fine-grained access control", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
 */
export type LimitedReturnValues = 'NONE' | 'UPDATED_OLD' | 'UPDATED_NEW';

/** What an item grant may further limit: the attributes a request names, and the ReturnValues it asks for. */
export interface ItemLimits {
  attributes?: readonly string[];
  returnValues?: readonly LimitedReturnValues[];
}

/** Every route reads its project (owner and plan) and counts the request in the caller's rate window. */
const EVERY_ROUTE = [
  { actions: ['dynamodb:GetItem'], partitions: ['project'] },
  { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'], attributes: UPDATED_ATTRIBUTES.rateWindow, returnValues: RATE_WINDOW_RETURN_VALUES },
] as const satisfies readonly TableGrant[];

/** A change through the API puts its project's audit entry, and no other item. */
const RECORD_AUDIT = { actions: ['dynamodb:PutItem'], partitions: ['projectAudit'] } as const satisfies TableGrant;

/**
 * What each owner API route's function may do to the table: the calls its store makes (project-store.ts), nothing
 * more. Giving a route a new kind of item is one line here; a new route without a line fails to compile.
 */
export const ROUTE_TABLE_ACCESS = {
  // Both indexes hold keys only (the watermark one serves the `watermark` filter): the page's keys themselves come
  // from one consistent BatchGetItem.
  'list-keys': [...EVERY_ROUTE, { queryIndex: 'byIssueOrder' }, { queryIndex: 'byWatermark' }, { actions: ['dynamodb:BatchGetItem'], partitions: ['key'] }],
  // One transaction: the key's revoke and its audit entry.
  'revoke-key': [...EVERY_ROUTE, { actions: ['dynamodb:UpdateItem'], partitions: ['key'] }, RECORD_AUDIT],
  // The watermark index keeps revoked keys, so the keys it lists are read (BatchGetItem) before any is revoked.
  // The audit entry is put before the revokes and completed with their count after them.
  'revoke-bulk': [
    ...EVERY_ROUTE,
    { queryIndex: 'byWatermark' },
    { actions: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'], partitions: ['key'] },
    RECORD_AUDIT,
    { actions: ['dynamodb:UpdateItem'], partitions: ['projectAudit'], attributes: UPDATED_ATTRIBUTES.auditOutcome },
  ],
  'list-versions': [...EVERY_ROUTE, { actions: ['dynamodb:Query'], partitions: ['project'] }],
  rollback: [
    ...EVERY_ROUTE,
    // One transaction: check the version item exists, move the project's pointer (nothing else of it), put the audit entry.
    { actions: ['dynamodb:ConditionCheckItem'], partitions: ['project'] },
    { actions: ['dynamodb:UpdateItem'], partitions: ['project'], attributes: UPDATED_ATTRIBUTES.currentVersion },
    RECORD_AUDIT,
  ],
  'list-webhooks': [...EVERY_ROUTE, { actions: ['dynamodb:Query'], partitions: ['project'] }],
  // One Query of the project's stats counters (stats-store.ts).
  'get-stats': [...EVERY_ROUTE, { actions: ['dynamodb:Query'], partitions: ['stats'] }],
  // key-store.ts: the project's lease taken and given back, the counter moved (nothing else of the project) with
  // the order put in one transaction, the keys put in batches of 25; a repeat reads the order and its keys
  // (BatchGetItem) and puts any key the first call did not write.
  'issue-keys': [
    ...EVERY_ROUTE,
    { actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], partitions: ['sequenceLease'] },
    { actions: ['dynamodb:UpdateItem'], partitions: ['project'], attributes: UPDATED_ATTRIBUTES.keyCount },
    { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], partitions: ['order'] },
    { actions: ['dynamodb:BatchWriteItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem'], partitions: ['key'] },
    RECORD_AUDIT,
  ],
  'get-key': [...EVERY_ROUTE, { actions: ['dynamodb:GetItem'], partitions: ['key'] }],
  // One conditional write of the key's fingerprints (returning the old ones only), then the audit entry; when the
  // condition fails, a read of the key's project only says whether the key is the project's.
  'reset-hwid': [
    ...EVERY_ROUTE,
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.fingerprintReset, returnValues: FINGERPRINT_RESET_RETURN_VALUES },
    { actions: ['dynamodb:GetItem'], partitions: ['key'], attributes: ['projectId'] },
    RECORD_AUDIT,
  ],
  // Key lifecycle (key-store.ts): one conditional write of the key's ban, expiry or edited fields, then the audit entry.
  'ban-key': [...EVERY_ROUTE, { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyBan }, RECORD_AUDIT],
  'unban-key': [...EVERY_ROUTE, { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyBan }, RECORD_AUDIT],
  // The new expiry comes back from the write; a failed condition is followed by a read of what says why.
  'extend-key': [
    ...EVERY_ROUTE,
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyExpiry, returnValues: KEY_EXTEND_RETURN_VALUES },
    { actions: ['dynamodb:GetItem'], partitions: ['key'], attributes: KEY_EXTEND_FAILURE_READ },
    RECORD_AUDIT,
  ],
  // The edit asks nothing back; the key detail it answers is read after it, as get-key reads it.
  'update-key': [
    ...EVERY_ROUTE,
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyEdit },
    { actions: ['dynamodb:GetItem'], partitions: ['key'] },
    RECORD_AUDIT,
  ],
} as const satisfies Record<Route['entry'], readonly TableGrant[]>;

/** The authorizer: one GetItem of a token item. */
export const TOKEN_LOOKUP = [{ actions: ['dynamodb:GetItem'], partitions: ['token'] }] as const satisfies readonly TableGrant[];

/** DynamoDB evaluates a request naming attributes only if the list also holds every key attribute of the table and its indexes. */
const KEY_ATTRIBUTES = Object.keys(KEY_ATTRIBUTE_TYPES);

/**
 * Allow `actions` on the table's items whose partition keys begin as `partitions` do (layout.ts's PARTITION), and
 * on nothing else: the one way every construct grants item access, with `dynamodb:LeadingKeys`.
 */
export function grantItems(
  fn: lambda.IFunction,
  table: ITable | ITableV2,
  actions: readonly string[],
  partitions: readonly Partition[],
  { attributes, returnValues }: ItemLimits = {},
): void {
  if (returnValues && !attributes) throw new Error('returnValues limits only a grant that lists attributes');
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: [...actions],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': partitions.map((partition) => `${PARTITION[partition]}*`) },
        ...(attributes ? { 'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...KEY_ATTRIBUTES, ...attributes] } } : {}),
        ...(attributes ? { StringEqualsIfExists: { 'dynamodb:ReturnValues': [...(returnValues ?? ['NONE'])] } } : {}),
      },
    }),
  );
}

/** Allow `Query` of one index (its exact ARN, not `index/*`) in the partitions INDEX_PARTITION describes. */
function grantIndexQuery(fn: lambda.IFunction, table: ITableV2, index: IndexName): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:Query'],
      resources: [`${table.tableArn}/index/${TABLE.indexes[index].name}`],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${INDEX_PARTITION[index]}*`] } },
    }),
  );
}

/** Point a function at the table (`TABLE_NAME`) and grant it `grants`, nothing else: no Scan, no table administration. */
export function bindTable(fn: lambda.Function, table: ITableV2, grants: readonly TableGrant[]): void {
  fn.addEnvironment('TABLE_NAME', table.tableName);
  for (const grant of grants) {
    if ('queryIndex' in grant) grantIndexQuery(fn, table, grant.queryIndex);
    else grantItems(fn, table, grant.actions, grant.partitions, grant);
  }
}
