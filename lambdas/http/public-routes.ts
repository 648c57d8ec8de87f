import { DISCORD_ROUTE } from './public-routes/discord-interactions';
import { FREE_POSTBACK_ROUTE, FREE_RETURN_ROUTE, FREE_START_ROUTE } from './public-routes/free-keys';
import { SCRIPT_ROUTE } from './public-routes/script';
import { SHOP_ROUTE } from './public-routes/shop-receiver';
import { STUB_ROUTE } from './public-routes/stub';
import { VALIDATE_ROUTE } from './public-routes/validate';

export { DISCORD_ROUTE, SCRIPT_ROUTE, SHOP_ROUTE, STUB_ROUTE, VALIDATE_ROUTE };

/**
 * The public routes: no bearer token (a key in the body, a public project id, or Discord's signature), each defined
 * in its own file of public-routes/ with its table grant and OpenAPI operation. They are served by their own HTTP
 * API (lib/constructs/loader-api.ts); the loader's module imports this list, never the owner routes (routes.ts).
 */
export const PUBLIC_ROUTES = [
  VALIDATE_ROUTE,
  SCRIPT_ROUTE,
  STUB_ROUTE,
  DISCORD_ROUTE,
  SHOP_ROUTE,
  FREE_START_ROUTE,
  FREE_RETURN_ROUTE,
  FREE_POSTBACK_ROUTE,
] as const;
/** The key page's routes, served by a function of their own (lambdas/functions/free-keys.ts). */
export const FREE_KEY_ROUTES = [FREE_START_ROUTE, FREE_RETURN_ROUTE, FREE_POSTBACK_ROUTE] as const;
export type PublicRoute = (typeof PUBLIC_ROUTES)[number];

/**
 * The routes the loader's function serves (lambdas/functions/loader.ts): its grant is what they need
 * (lib/constructs/loader-check.ts). Discord's route has a function of its own.
 */
export const LOADER_FUNCTION_ROUTES = [VALIDATE_ROUTE, SCRIPT_ROUTE, STUB_ROUTE] as const;

/**
 * Under a custom domain the public routes' HTTP API is mapped at each route's `mappingKey`, which API Gateway strips
 * before routing: there the routes are `POST /validate`, `GET /stub/{project_id}`, `POST /interactions/{project_id}`.
 */
export const LOADER_MAPPING_KEY = 'v1/loader';
export const PUBLIC_MAPPING_KEYS = [...new Set(PUBLIC_ROUTES.map((route) => route.mappingKey))];

/** A public route's path as its HTTP API sees it through the custom domain's mapping. */
export const mappedPathOf = (route: PublicRoute): string => route.path.slice(route.mappingKey.length + 1);

/** The public route an HTTP API route key (`POST /v1/loader/script`, or `POST /script` through the mapping) names. */
export function publicRouteOf(routeKey: string): PublicRoute | undefined {
  return PUBLIC_ROUTES.find((route) => routeKey === `${route.method} ${route.path}` || routeKey === `${route.method} ${mappedPathOf(route)}`);
}

/** The URL buyers' loaders fetch the hosted stub of `projectId` from, on the loader routes' base URL. */
export const stubUrlOf = (loaderBaseUrl: string, projectId: string): string =>
  `${loaderBaseUrl.replace(/\/+$/, '')}${STUB_ROUTE.path.replace('{project_id}', encodeURIComponent(projectId))}`;

/** The URL a publisher pastes as the Discord application's "Interactions Endpoint URL". */
export const interactionsUrlOf = (loaderBaseUrl: string, projectId: string): string =>
  `${loaderBaseUrl.replace(/\/+$/, '')}${DISCORD_ROUTE.path.replace('{project_id}', encodeURIComponent(projectId))}`;
