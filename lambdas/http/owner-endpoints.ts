import { banKeyEndpoint } from '#functions/ban-key';
import { extendKeyEndpoint } from '#functions/extend-key';
import { getKeyEndpoint } from '#functions/get-key';
import { getStatsEndpoint } from '#functions/get-stats';
import { issueKeysEndpoint } from '#functions/issue-keys';
import { listKeysEndpoint } from '#functions/list-keys';
import { listVersionsEndpoint } from '#functions/list-versions';
import { listWebhooksEndpoint } from '#functions/list-webhooks';
import { resetHwidEndpoint } from '#functions/reset-hwid';
import { revokeBulkEndpoint } from '#functions/revoke-bulk';
import { revokeKeyEndpoint } from '#functions/revoke-key';
import { rollbackEndpoint } from '#functions/rollback';
import { unbanKeyEndpoint } from '#functions/unban-key';
import { updateKeyEndpoint } from '#functions/update-key';
import { type ApiDeps, type ApiHandler, createApiHandler, type Endpoint } from './api-handler';
import type { Route } from './routes';

/** Each route's endpoint, for whatever builds handlers from its own dependencies (the local stack, the tests). */
export const ENDPOINTS: Record<Route['entry'], Endpoint<unknown, unknown, unknown>> = {
  'list-keys': listKeysEndpoint,
  'issue-keys': issueKeysEndpoint,
  'get-key': getKeyEndpoint,
  'update-key': updateKeyEndpoint,
  'reset-hwid': resetHwidEndpoint,
  'ban-key': banKeyEndpoint,
  'unban-key': unbanKeyEndpoint,
  'extend-key': extendKeyEndpoint,
  'revoke-key': revokeKeyEndpoint,
  'revoke-bulk': revokeBulkEndpoint,
  'list-versions': listVersionsEndpoint,
  rollback: rollbackEndpoint,
  'list-webhooks': listWebhooksEndpoint,
  'get-stats': getStatsEndpoint,
};

/** Every route's handler, built from the same dependencies (the local stack's stores, a test's). */
export function createRouteHandlers(deps: ApiDeps): Record<Route['entry'], ApiHandler> {
  return {
    'list-keys': createApiHandler(ENDPOINTS['list-keys'], deps),
    'issue-keys': createApiHandler(ENDPOINTS['issue-keys'], deps),
    'get-key': createApiHandler(ENDPOINTS['get-key'], deps),
    'update-key': createApiHandler(ENDPOINTS['update-key'], deps),
    'reset-hwid': createApiHandler(ENDPOINTS['reset-hwid'], deps),
    'ban-key': createApiHandler(ENDPOINTS['ban-key'], deps),
    'unban-key': createApiHandler(ENDPOINTS['unban-key'], deps),
    'extend-key': createApiHandler(ENDPOINTS['extend-key'], deps),
    'revoke-key': createApiHandler(ENDPOINTS['revoke-key'], deps),
    'revoke-bulk': createApiHandler(ENDPOINTS['revoke-bulk'], deps),
    'list-versions': createApiHandler(ENDPOINTS['list-versions'], deps),
    rollback: createApiHandler(ENDPOINTS.rollback, deps),
    'list-webhooks': createApiHandler(ENDPOINTS['list-webhooks'], deps),
    'get-stats': createApiHandler(ENDPOINTS['get-stats'], deps),
  };
}
