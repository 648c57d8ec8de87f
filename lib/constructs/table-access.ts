import type { ITable, ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { INDEX_PARTITION, PARTITION, type Partition, UPDATED_ATTRIBUTES } from '#adapters/layout';
import { KEY_ATTRIBUTE_TYPES, TABLE } from '#adapters/table-definition';
import type { IndexName, ItemLimits, TableGrant } from '#http/table-grants';

// What a function may do to the table is data (TableGrant, lambdas/http/table-grants.ts), written beside each
// route's definition; this module turns it into IAM statements.

/**
 * The console's function (lib/constructs/console-api.ts): it serves every owner route (their calls, merged by
 * partition) and its own items: sessions, the owner's tokens and project list, webhooks, uploads and versions in
 * the project's partition, the key search's indexes and note-word items, the project's audit entries to list.
 */
export const CONSOLE_TABLE_ACCESS = [
  { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'], attributes: UPDATED_ATTRIBUTES.rateWindow },
  {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
    partitions: ['project'],
  },
  { actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], partitions: ['key'] },
  { actions: ['dynamodb:BatchWriteItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:Query'], partitions: ['noteWords'] },
  { actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], partitions: ['sequenceLease'] },
  { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], partitions: ['order'] },
  { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'], partitions: ['projectAudit'] },
  { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'], partitions: ['consoleSession'] },
  // Token create and revoke: the three items of a token and the owner's audit entry, in one transaction each.
  { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'], partitions: ['token'] },
  { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], partitions: ['tokenById'] },
  { actions: ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:DeleteItem'], partitions: ['owner'] },
  { actions: ['dynamodb:PutItem'], partitions: ['ownerAudit'] },
  // The blacklist routes' mirror: entries, positions and count, and the machines' records of their keys.
  { actions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'], partitions: ['blacklist'] },
  { actions: ['dynamodb:Query'], partitions: ['machine'] },
  // Shop connections (added, mapped, removed in transactions with their project list item), the delivery log and a
  // replayed order's key ids.
  { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'], partitions: ['shop'] },
  { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'], partitions: ['shopLog'] },
  { queryIndex: 'byIssueOrder' },
  { queryIndex: 'byWatermark' },
  { queryIndex: 'byDiscordId' },
] as const satisfies readonly TableGrant[];

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
  grantTable(fn, table, grants);
}

/** Grant `grants` of the table, each line a statement of its own. */
export function grantTable(fn: lambda.IFunction, table: ITableV2, grants: readonly TableGrant[]): void {
  for (const grant of grants) {
    if ('queryIndex' in grant) grantIndexQuery(fn, table, grant.queryIndex);
    else grantItems(fn, table, grant.actions, grant.partitions, grant);
  }
}
