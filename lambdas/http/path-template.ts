/**
 * Routes by method and path template (`/v1/projects/{id}/keys/{key_id}`), matched as API Gateway matches them: a
 * parameter is one non-empty segment, decoded once. The local gateway and the console's router both match with it.
 */

export interface PathMatch<Route> {
  route: Route;
  /** The path parameters, decoded. */
  params: Record<string, string>;
}

/**
 * A matcher over `routes`: the first route of the method whose template the raw (still percent-encoded) path fits,
 * with its parameters decoded; undefined for no route, or a parameter that does not decode.
 */
export function pathMatcher<Route extends { method: string; path: string }>(
  routes: readonly Route[],
): (method: string, path: string) => PathMatch<Route> | undefined {
  const compiled = routes.map((route) => ({
    route,
    names: [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? ''),
    pattern: new RegExp(`^${route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '([^/]+)')}$`),
  }));
  return (method, path) => {
    for (const { route, names, pattern } of compiled) {
      if (route.method !== method) continue;
      const match = pattern.exec(path);
      if (!match) continue;
      const values = match.slice(1).map(decodeSegment);
      if (values.some((value) => value === undefined)) return undefined;
      return { route, params: Object.fromEntries(names.map((name, i) => [name, values[i] ?? ''])) };
    }
    return undefined;
  };
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
