import type { Partition } from '#adapters/layout';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import type { TABLE } from '#adapters/table-definition';

/**
 * What a route's function may do to the table, as data beside the route's definition (owner-routes/, public-routes/):
 * lib/constructs/table-access.ts turns it into IAM, and imports nothing of CDK here. Every line is scoped by
 * `dynamodb:LeadingKeys` to partitions that begin as layout.ts says, so no line allows `Scan` (it names no
 * partition) or reaches another kind of item.
 */

export type IndexName = keyof typeof TABLE.indexes;

/** One line of what a function may do to the table. */
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
type LimitedReturnValues = 'NONE' | 'UPDATED_OLD' | 'UPDATED_NEW';

/** What an item grant may further limit: the attributes a request names, and the ReturnValues it asks for. */
export interface ItemLimits {
  attributes?: readonly string[];
  returnValues?: readonly LimitedReturnValues[];
}

/**
 * Every owner route reads its project (owner and plan) and counts the request in the caller's rate window: the
 * stack grants these lines before a route's own `tableAccess`.
 */
export const EVERY_ROUTE = [
  { actions: ['dynamodb:GetItem'], partitions: ['project'] },
  { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'], attributes: UPDATED_ATTRIBUTES.rateWindow, returnValues: RATE_WINDOW_RETURN_VALUES },
] as const satisfies readonly TableGrant[];

/** A change through the API puts its project's audit entry, and no other item. */
export const RECORD_AUDIT = { actions: ['dynamodb:PutItem'], partitions: ['projectAudit'] } as const satisfies TableGrant;

/**
 * One function's grant from the grants of the routes it serves (the loader's function serves three): the same line
 * once, and lines that differ only in their partitions as one line over all of them.
 */
export function mergeGrants(grants: readonly TableGrant[]): TableGrant[] {
  const merged: TableGrant[] = [];
  for (const grant of grants) {
    if ('queryIndex' in grant) {
      if (!merged.some((line) => 'queryIndex' in line && line.queryIndex === grant.queryIndex)) merged.push(grant);
      continue;
    }
    const sameBut = (line: TableGrant): line is Exclude<TableGrant, { queryIndex: IndexName }> =>
      !('queryIndex' in line) &&
      JSON.stringify([line.actions, line.attributes, line.returnValues]) === JSON.stringify([grant.actions, grant.attributes, grant.returnValues]);
    const index = merged.findIndex(sameBut);
    const line = merged[index];
    if (index === -1 || !line || 'queryIndex' in line) merged.push(grant);
    else merged[index] = { ...line, partitions: [...new Set([...line.partitions, ...grant.partitions])] };
  }
  return merged;
}
