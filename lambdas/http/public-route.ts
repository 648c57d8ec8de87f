import type { TableGrant } from './table-grants';

/**
 * One public route (no bearer token: a key in the body, a public project id, or Discord's signature), in one file of
 * public-routes/: what its HTTP API routes to it, the custom domain's mapping key it lives under, what its function
 * may do to the table (its OpenAPI operation, when it has one, is beside it in `<name>.doc.ts`: PUBLIC_DOCS in
 * openapi/public-docs.ts). PUBLIC_ROUTES (public-routes.ts) lists them; the loader's HTTP API,
 * the functions' grants, the local gateway and the OpenAPI document are built from that list.
 */
export interface PublicRouteDefinition {
  method: 'GET' | 'POST';
  path: `/v1/${string}`;
  /** The route's name, as the loader's function tells its routes apart. */
  entry: string;
  /** The custom domain's mapping the route is served under; API Gateway strips it before routing. */
  mappingKey: 'v1/loader' | 'v1/discord' | 'v1/shops' | 'v1/free';
  /** What the route's handler does to the table; its function is granted what its routes need, nothing more. */
  tableAccess: readonly TableGrant[];
}

/** One public route, its literal method, path and entry kept (`definePublicRoute({ method, path, ... })`). */
export const definePublicRoute = <const Route extends PublicRouteDefinition>(
  route: Route,
): Omit<Route, 'tableAccess'> & Pick<PublicRouteDefinition, 'tableAccess'> => route;
