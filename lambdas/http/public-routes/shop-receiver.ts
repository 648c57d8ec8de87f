import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { definePublicRoute } from '#http/public-route';
import { RECORD_AUDIT } from '#http/table-grants';

/**
 * The shop receiver (DESIGN.md, "Shops deliver keys by themselves"): public, the shop's own signature under the
 * connection's secret is the credential. A function of its own, so a flood of loader checks never delays an answer
 * SellAuth waits at most 10 s for. Shops call it, not clients of the API: docs/selling-keys.md describes it.
 */
export const SHOP_ROUTE = definePublicRoute({
  method: 'POST',
  path: '/v1/shops/{connection_id}',
  entry: 'shop-receiver',
  mappingKey: 'v1/shops',
  tableAccess: [
    // The connection (one read), the key ids each order got (read, ADDed), the project read before issuing.
    { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], partitions: ['shop'] },
    { actions: ['dynamodb:GetItem'], partitions: ['project'] },
    // Issuing under an order id, exactly as POST …/keys does (lambdas/http/owner-routes/issue-keys.ts).
    { actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], partitions: ['sequenceLease'] },
    { actions: ['dynamodb:UpdateItem'], partitions: ['project'], attributes: UPDATED_ATTRIBUTES.keyCount },
    { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], partitions: ['order'] },
    { actions: ['dynamodb:BatchWriteItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem'], partitions: ['key', 'noteWords'] },
    // A refund's or a dispute's ban on the order's keys (the key lifecycle's write).
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyBan },
    { actions: ['dynamodb:PutItem'], partitions: ['shopLog'] },
    // The buyer's entry on the project's blacklist, by email hash (#domain/blacklist blacklistProblem).
    { actions: ['dynamodb:GetItem'], partitions: ['blacklist'] },
    RECORD_AUDIT,
  ],
});
