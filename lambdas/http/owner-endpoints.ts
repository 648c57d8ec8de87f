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
import { type ApiDeps, type ApiHandler, createApiHandler, type Endpoint, type FrontDoor, OWNER_API } from './api-handler';
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

/** Every route's handler, built from the same dependencies (the local stack's stores, a test's), for one front door. */
export function createRouteHandlers(deps: ApiDeps, door: FrontDoor = OWNER_API): Record<Route['entry'], ApiHandler> {
  return Object.fromEntries(Object.entries(ENDPOINTS).map(([entry, endpoint]) => [entry, createApiHandler(endpoint, deps, door)])) as Record<
    Route['entry'],
    ApiHandler
  >;
}
