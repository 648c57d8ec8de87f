import { type ApiDeps, type ApiHandler, createApiHandler, type Endpoint } from './api-handler';
import { addToBlacklistRoute } from './owner-routes/add-to-blacklist';
import { banKeyRoute } from './owner-routes/ban-key';
import { extendKeyRoute } from './owner-routes/extend-key';
import { getKeyRoute } from './owner-routes/get-key';
import { getStatsRoute } from './owner-routes/get-stats';
import { issueKeysRoute } from './owner-routes/issue-keys';
import { listBlacklistRoute } from './owner-routes/list-blacklist';
import { listKeysRoute } from './owner-routes/list-keys';
import { listVersionsRoute } from './owner-routes/list-versions';
import { listWebhooksRoute } from './owner-routes/list-webhooks';
import { removeFromBlacklistRoute } from './owner-routes/remove-from-blacklist';
import { resetHwidRoute } from './owner-routes/reset-hwid';
import { revokeBulkRoute } from './owner-routes/revoke-bulk';
import { revokeKeyRoute } from './owner-routes/revoke-key';
import { rollbackRoute } from './owner-routes/rollback';
import { traceLeakRoute } from './owner-routes/trace-leak';
import { unbanKeyRoute } from './owner-routes/unban-key';
import { updateKeyRoute } from './owner-routes/update-key';
import { PUBLIC_ROUTES, type PublicRoute } from './public-routes';

/** An API function's Lambda timeout; API Gateway itself gives up on an integration after 29 s. */
export const API_FUNCTION_TIMEOUT_SECONDS = 10;

/**
 * The owner API's routes, each behind the token authorizer, each defined once in its own file of owner-routes/
 * (defineOwnerRoute, owner-route.ts). Everything else is built from this list: the CDK stack's function per route
 * (entry `functions/<entry>.ts`, timeout, capacity, table grant), the local server's dispatch, the console's mirror
 * of the owner API, and the OpenAPI document's operations (openapi/document.ts).
 */
export const ROUTES = [
  listKeysRoute,
  issueKeysRoute,
  getKeyRoute,
  updateKeyRoute,
  resetHwidRoute,
  banKeyRoute,
  unbanKeyRoute,
  extendKeyRoute,
  revokeKeyRoute,
  revokeBulkRoute,
  traceLeakRoute,
  listVersionsRoute,
  rollbackRoute,
  listWebhooksRoute,
  getStatsRoute,
  addToBlacklistRoute,
  listBlacklistRoute,
  removeFromBlacklistRoute,
] as const;

export type Route = (typeof ROUTES)[number];

/** Every route's REST handler, built from the same dependencies (the local stack's stores, a test's). */
export function createRouteHandlers(deps: ApiDeps): Record<Route['entry'], ApiHandler> {
  return Object.fromEntries(ROUTES.map((route) => [route.entry, createApiHandler(route as Endpoint<unknown, unknown, unknown>, deps)])) as Record<
    Route['entry'],
    ApiHandler
  >;
}

/** Every route the API serves, as API Gateway (and the local gateway) routes requests. */
export const ALL_ROUTES = [...ROUTES, ...PUBLIC_ROUTES] as const;
export type AnyRoute = Route | PublicRoute;

/** Whether a route has the quiet routes' throttle and reservation instead of a busy route's. */
export const isQuiet = (route: AnyRoute): boolean => 'capacity' in route && route.capacity === 'quiet';

export const timeoutSecondsOf = (route: AnyRoute): number => ('timeoutSeconds' in route && route.timeoutSeconds) || API_FUNCTION_TIMEOUT_SECONDS;

/** Whether API Gateway runs the token authorizer before the route (every route but the public ones). */
export const needsToken = (route: AnyRoute): route is Route => !(PUBLIC_ROUTES as readonly AnyRoute[]).includes(route);
