import type { ScopeNeed, TokenScope } from '#domain/tokens';
import type { Endpoint } from './api-handler';
import type { TableGrant } from './table-grants';

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Everything about one owner API route, in one file of owner-routes/: what API Gateway routes to it, the token scope
 * it needs, its capacity, its Lambda's timeout and table grant, its endpoint (schemas and rule). Its OpenAPI
 * operation is beside it in `<entry>.doc.ts` (OWNER_DOCS, openapi/owner-docs.ts), so that no Lambda bundle carries
 * the documentation. ROUTES (routes.ts) lists them; the CDK stack, the local server, the console's mirror of the
 * owner API and the OpenAPI document are built from that list.
 */
export interface OwnerRouteDefinition<Entry extends string, Method extends HttpMethod, Query, Body, Result>
  extends Omit<Endpoint<Query, Body, Result>, 'scope'> {
  method: Method;
  path: `/v1/projects/{id}${string}`;
  /** The route's name: its Lambda entry is `lambdas/functions/<entry>.ts`, its CDK function `<Entry>Function`. */
  entry: Entry;
  /** What the route does to the data: it decides the token scope the route needs (a `read` token calls the `read` routes only). */
  access: TokenScope;
  /** The route's action in words, for the 403 of a token without its scope ("revoking a key"). */
  doing: string;
  /**
   * `quiet`: a route a person or one sale calls, never a fleet: it gets a small throttle and reservation of its own
   * (QUIET_ROUTE_THROTTLE in lib/capacity.ts).
   */
  capacity?: 'quiet';
  /** Its function's timeout when API_FUNCTION_TIMEOUT_SECONDS (routes.ts) is not enough. */
  timeoutSeconds?: number;
  /**
   * The calls its store makes, beside EVERY_ROUTE's (reading the project, counting the rate window), nothing more.
   * A route without it fails to compile.
   */
  tableAccess: readonly TableGrant[];
}

/** A route as the code uses it: its definition, and the Endpoint it is (its scope from `access` and `doing`). */
export type OwnerRoute<Entry extends string, Method extends HttpMethod, Query, Body, Result> = OwnerRouteDefinition<Entry, Method, Query, Body, Result> & {
  scope: ScopeNeed;
};

/** One owner route, its types inferred from its schemas (`defineOwnerRoute({ method, path, entry, ..., query, body, run })`). */
export const defineOwnerRoute = <Entry extends string, Method extends HttpMethod, Query, Body, Result>(
  definition: OwnerRouteDefinition<Entry, Method, Query, Body, Result>,
): OwnerRoute<Entry, Method, Query, Body, Result> => ({ ...definition, scope: { scope: definition.access, doing: definition.doing, route: definition.entry } });
