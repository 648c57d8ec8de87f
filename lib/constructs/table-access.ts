import { CfnResource, Stack, Validations } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Route } from '#api/routes';
import { keyOf } from '#store/repository';

/** What a function may do to the table: a route's `access`, or the authorizer's token lookup. */
export type TableAccess = Route['access'] | 'token-lookup';

/** `dynamodb:LeadingKeys` pattern for every item whose partition key starts like `key`'s. */
const leadingKeysLike = (key: { pk: string }) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${key.pk}*`] } });

/**
 * Point a function at the table (`TABLE_NAME`) and grant it no more than its kind of handler does:
 * - `read`: reads of the table and its indexes, and `UpdateItem` on rate-limit windows only, because every
 *   request counts itself in a per-token window item;
 * - `write`: reads, and `UpdateItem` (revoke, rollback, rate limit). The API never puts or deletes an item
 *   (keys are revoked, not deleted), so `PutItem`, `DeleteItem` and `BatchWriteItem` are not granted;
 * - `token-lookup`: `GetItem` on token items, nothing else.
 * No function gets table administration actions.
 */
export function bindTable(fn: lambda.Function, table: TableV2, access: TableAccess): void {
  fn.addEnvironment('TABLE_NAME', table.tableName);
  if (access === 'token-lookup') {
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [table.tableArn], conditions: leadingKeysLike(keyOf.token('')) }),
    );
    return;
  }
  table.grantReadData(fn);
  acknowledgeIndexWildcard(fn, table);
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: access === 'read' ? leadingKeysLike(keyOf.rateWindow('', 0)) : undefined,
    }),
  );
}

/** The read grant covers the table's indexes as `<table arn>/index/*`, which cdk-nag reports as a wildcard. */
function acknowledgeIndexWildcard(fn: lambda.Function, table: TableV2): void {
  const cfnTable = table.node.defaultChild;
  if (!CfnResource.isCfnResource(cfnTable)) throw new Error('The table has no CloudFormation resource to name in the acknowledgement');
  Validations.of(fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${Stack.of(table).getLogicalId(cfnTable)}.Arn>/index/*]`,
    reason: "Queries of this table's global secondary indexes; no other table or resource.",
  });
}
