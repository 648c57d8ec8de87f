import type { ScopeNeed } from '#domain/tokens';

/** An API function's Lambda timeout; API Gateway itself gives up on an integration after 29 s. */
export const API_FUNCTION_TIMEOUT_SECONDS = 10;

/**
 * The owner API's routes, each behind the token authorizer: the CDK stack builds one Lambda per route from
 * `functions/<entry>.ts` (its table grant is ROUTE_TABLE_ACCESS in lib/constructs/table-access.ts), the local server
 * dispatches to the same endpoints. `access` is what the route does to the data: it decides the token scope the
 * route needs (a `read` token may call the read routes only); `doing` says it in words for the 403 of a token
 * without that scope. A bulk revoke of 10,000 keys needs more than the default timeout, so it gets API Gateway's
 * whole 29 s less a second to answer in. `capacity: 'quiet'` marks a route a person or one sale calls, never a
 * fleet: it gets a small throttle and reservation of its own (QUIET_ROUTE_THROTTLE in lib/capacity.ts).
 */
export const ROUTES = [
  { method: 'GET', path: '/v1/projects/{id}/keys', entry: 'list-keys', access: 'read', doing: 'listing keys' },
  { method: 'POST', path: '/v1/projects/{id}/keys', entry: 'issue-keys', access: 'write', doing: 'issuing keys' },
  { method: 'GET', path: '/v1/projects/{id}/keys/{key_id}', entry: 'get-key', access: 'read', doing: 'reading a key' },
  { method: 'PATCH', path: '/v1/projects/{id}/keys/{key_id}', entry: 'update-key', access: 'write', doing: 'editing a key', capacity: 'quiet' },
  { method: 'POST', path: '/v1/projects/{id}/keys/reset-hwid', entry: 'reset-hwid', access: 'write', doing: "resetting a key's machines" },
  { method: 'POST', path: '/v1/projects/{id}/keys/ban', entry: 'ban-key', access: 'write', doing: 'banning a key', capacity: 'quiet' },
  { method: 'POST', path: '/v1/projects/{id}/keys/unban', entry: 'unban-key', access: 'write', doing: 'unbanning a key', capacity: 'quiet' },
  { method: 'POST', path: '/v1/projects/{id}/keys/extend', entry: 'extend-key', access: 'write', doing: 'extending a key', capacity: 'quiet' },
  { method: 'POST', path: '/v1/projects/{id}/keys/revoke', entry: 'revoke-key', access: 'write', doing: 'revoking a key' },
  {
    method: 'POST',
    path: '/v1/projects/{id}/keys/revoke-bulk',
    entry: 'revoke-bulk',
    access: 'write',
    doing: 'revoking keys by watermark',
    timeoutSeconds: 28,
  },
  { method: 'GET', path: '/v1/projects/{id}/versions', entry: 'list-versions', access: 'read', doing: 'listing versions' },
  { method: 'POST', path: '/v1/projects/{id}/versions/rollback', entry: 'rollback', access: 'write', doing: 'rolling back a version' },
  { method: 'GET', path: '/v1/projects/{id}/webhooks', entry: 'list-webhooks', access: 'read', doing: 'listing webhooks' },
  { method: 'GET', path: '/v1/projects/{id}/stats', entry: 'get-stats', access: 'read', doing: 'reading stats', capacity: 'quiet' },
] as const;

export type Route = (typeof ROUTES)[number];

/** The token scope a route needs, for its endpoint: its `access`. */
export function scopeNeededBy(entry: Route['entry']): ScopeNeed {
  const route = ROUTES.find((candidate) => candidate.entry === entry);
  if (!route) throw new Error(`No route with entry ${entry}`);
  return { scope: route.access, doing: route.doing, route: route.entry };
}

/** The loader's key check (DESIGN.md, "Loader key check"): public, no bearer token, its own function. */
export const LOADER_ROUTE = { method: 'POST', path: '/v1/loader/validate', entry: 'loader-validate', mappingKey: 'v1/loader' } as const;
/** Script delivery (DESIGN.md, "Script delivery"): public like the check it makes, served by the loader check's function. */
export const SCRIPT_ROUTE = { method: 'POST', path: '/v1/loader/script', entry: 'loader-script', mappingKey: 'v1/loader' } as const;
/**
 * The hosted stub loader (DESIGN.md, "Buyers help themselves in Discord"): every buyer's run fetches it before the
 * script, so it is loader traffic and is served by the loader's function.
 */
export const STUB_ROUTE = { method: 'GET', path: '/v1/loader/stub/{project_id}', entry: 'loader-stub', mappingKey: 'v1/loader' } as const;
/**
 * Discord's HTTP interactions for a linked project (DESIGN.md, "Buyers help themselves in Discord"): public, the
 * Ed25519 signature of the project's linked Discord application is the credential. A function of its own, so a
 * flood of loader checks can never hold back a reply Discord waits at most 3 seconds for.
 */
export const DISCORD_ROUTE = {
  method: 'POST',
  path: '/v1/discord/interactions/{project_id}',
  entry: 'discord-interactions',
  mappingKey: 'v1/discord',
} as const;
/** The public routes: no bearer token (a key in the body, a public project id, or Discord's signature). */
export const PUBLIC_ROUTES = [LOADER_ROUTE, SCRIPT_ROUTE, STUB_ROUTE, DISCORD_ROUTE] as const;
export type LoaderRoute = (typeof PUBLIC_ROUTES)[number];

/**
 * The public routes are served by their own HTTP API. Under a custom domain it is mapped at each route's
 * `mappingKey`, which API Gateway strips before routing: there the routes are `POST /validate`, `GET /stub/{project_id}`,
 * `POST /interactions/{project_id}`.
 */
export const LOADER_MAPPING_KEY = 'v1/loader';
export const PUBLIC_MAPPING_KEYS = [...new Set(PUBLIC_ROUTES.map((route) => route.mappingKey))];

/** A public route's path as its HTTP API sees it through the custom domain's mapping. */
export const mappedPathOf = (route: LoaderRoute): string => route.path.slice(route.mappingKey.length + 1);

/** The public route an HTTP API route key (`POST /v1/loader/script`, or `POST /script` through the mapping) names. */
export function publicRouteOf(routeKey: string): LoaderRoute | undefined {
  return PUBLIC_ROUTES.find((route) => routeKey === `${route.method} ${route.path}` || routeKey === `${route.method} ${mappedPathOf(route)}`);
}

/** The URL buyers' loaders fetch the hosted stub of `projectId` from, on the loader routes' base URL. */
export const stubUrlOf = (loaderBaseUrl: string, projectId: string): string =>
  `${loaderBaseUrl.replace(/\/+$/, '')}${STUB_ROUTE.path.replace('{project_id}', encodeURIComponent(projectId))}`;

/** The URL a publisher pastes as the Discord application's "Interactions Endpoint URL". */
export const interactionsUrlOf = (loaderBaseUrl: string, projectId: string): string =>
  `${loaderBaseUrl.replace(/\/+$/, '')}${DISCORD_ROUTE.path.replace('{project_id}', encodeURIComponent(projectId))}`;

/** Every route the API serves, as API Gateway (and the local gateway) routes requests. */
export const ALL_ROUTES = [...ROUTES, ...PUBLIC_ROUTES] as const;
export type AnyRoute = Route | LoaderRoute;

/** Whether a route has the quiet routes' throttle and reservation instead of a busy route's. */
export const isQuiet = (route: AnyRoute): boolean => 'capacity' in route && route.capacity === 'quiet';

export const timeoutSecondsOf = (route: AnyRoute): number => ('timeoutSeconds' in route ? route.timeoutSeconds : API_FUNCTION_TIMEOUT_SECONDS);

/** Whether API Gateway runs the token authorizer before the route (every route but the loader's). */
export const needsToken = (route: AnyRoute): route is Route => !(PUBLIC_ROUTES as readonly AnyRoute[]).includes(route);
