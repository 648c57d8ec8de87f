import { CfnResource, Stack, Validations } from 'aws-cdk-lib';
import type { ITable, ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Route } from '#api/routes';
import { PARTITION, type Partition } from '#store/layout';

/** What a function may do to the table: a route's `access`, or the authorizer's token lookup. */
export type TableAccess = Route['access'] | 'token-lookup';

/**
 * Allow `actions` on the table's items whose partition keys begin as `partitions` do (layout.ts's PARTITION), and
 * on nothing else: the one way every construct grants table access, with `dynamodb:LeadingKeys`.
 */
export function grantItems(fn: lambda.IFunction, table: ITable | ITableV2, actions: string[], partitions: readonly Partition[]): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions,
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': partitions.map((partition) => `${PARTITION[partition]}*`) } },
    }),
  );
}

/**
 * Point a function at the table (`TABLE_NAME`) and grant it no more than its kind of handler does:
 * - `read`: reads of the table and its indexes, and `UpdateItem` on rate-limit windows only, because every
 *   request counts itself in a per-token window item;
 * - `write`: reads, `UpdateItem` on keys (revoke), projects (rollback), rate windows and the projects' audit
 *   entries (a bulk revoke's entry is completed after its writes), and `PutItem` on the projects' audit
 *   entries only. The API never deletes an item (keys are revoked, not deleted) and puts nothing but audit
 *   entries, so `DeleteItem`, `BatchWriteItem` and other puts are not granted;
 * - `token-lookup`: `GetItem` on token items, nothing else.
 * No function gets table administration actions.
 */
export function bindTable(fn: lambda.Function, table: ITableV2, access: TableAccess): void {
  fn.addEnvironment('TABLE_NAME', table.tableName);
  if (access === 'token-lookup') {
    grantItems(fn, table, ['dynamodb:GetItem'], ['token']);
    return;
  }
  table.grantReadData(fn);
  acknowledgeIndexWildcard(fn, table);
  if (access === 'read') {
    grantItems(fn, table, ['dynamodb:UpdateItem'], ['rateWindow']);
    return;
  }
  grantItems(fn, table, ['dynamodb:UpdateItem'], ['key', 'project', 'rateWindow', 'projectAudit']);
  grantItems(fn, table, ['dynamodb:PutItem'], ['projectAudit']);
}

/** The read grant covers the table's indexes as `<table arn>/index/*`, which cdk-nag reports as a wildcard. */
function acknowledgeIndexWildcard(fn: lambda.Function, table: ITableV2): void {
  const cfnTable = table.node.defaultChild;
  if (!CfnResource.isCfnResource(cfnTable)) throw new Error('The table has no CloudFormation resource to name in the acknowledgement');
  Validations.of(fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${Stack.of(table).getLogicalId(cfnTable)}.Arn>/index/*]`,
    reason: "Queries of this table's global secondary indexes; no other table or resource.",
  });
}
