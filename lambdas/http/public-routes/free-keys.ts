import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import { definePublicRoute } from '#http/public-route';
import type { TableGrant } from '#http/table-grants';

/**
 * The key page of free keys behind checkpoints (DESIGN.md, "Free keys behind checkpoints"; docs/free-keys.md):
 * public HTML on the loader routes' front door, in a function of its own (lambdas/functions/free-keys.ts), so that
 * the provider calls it waits on (up to PROVIDER_TIMEOUT_MS) never hold the loader's reserved instances.
 */

/** Both pages read the settings and count the funnel; starting counts the address's and machine's windows too. */
const SHARED: readonly TableGrant[] = [
  { actions: ['dynamodb:GetItem'], partitions: ['project'] },
  { actions: ['dynamodb:PutItem', 'dynamodb:GetItem'], partitions: ['freeSession'] },
  { actions: ['dynamodb:UpdateItem'], partitions: ['freeFunnel'] },
  { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'], attributes: UPDATED_ATTRIBUTES.rateWindow, returnValues: RATE_WINDOW_RETURN_VALUES },
];

export const FREE_START_ROUTE = definePublicRoute({
  method: 'GET',
  path: '/v1/free/{project_id}',
  entry: 'free-start',
  mappingKey: 'v1/free',
  tableAccess: SHARED,
});

/** Lootlabs' server-to-server postback: reads the settings, records the postback (docs/free-keys.md). */
export const FREE_POSTBACK_ROUTE = definePublicRoute({
  method: 'GET',
  path: '/v1/free/{project_id}/postback',
  entry: 'free-postback',
  mappingKey: 'v1/free',
  tableAccess: [
    { actions: ['dynamodb:GetItem'], partitions: ['project'] },
    { actions: ['dynamodb:PutItem'], partitions: ['freePostback'] },
  ],
});

export const FREE_RETURN_ROUTE = definePublicRoute({
  method: 'GET',
  path: '/v1/free/{project_id}/return',
  entry: 'free-return',
  mappingKey: 'v1/free',
  tableAccess: [
    ...SHARED,
    // Single use of provider tokens, and Lootlabs' postbacks read.
    { actions: ['dynamodb:PutItem'], partitions: ['freeToken'] },
    { actions: ['dynamodb:GetItem'], partitions: ['freePostback'] },
    // Issuing the key as the issue route does (owner-routes/issue-keys.ts), without orders.
    { actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], partitions: ['sequenceLease'] },
    { actions: ['dynamodb:UpdateItem'], partitions: ['project'], attributes: UPDATED_ATTRIBUTES.keyCount },
    { actions: ['dynamodb:BatchWriteItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem'], partitions: ['key', 'noteWords'] },
    // The machine's entry on the project's blacklist, before its key is issued (#domain/blacklist blacklistProblem).
    { actions: ['dynamodb:GetItem'], partitions: ['blacklist'] },
  ],
});
