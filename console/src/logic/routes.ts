/**
 * The console's pages by URL fragment (`#/projects/prj_…/keys`): a static host serves one index.html for all of
 * them, and the address bar, Back and bookmarks work.
 */
export const PROJECT_PAGES = ['keys', 'versions', 'webhooks', 'stats', 'leak', 'blacklist', 'audit', 'loader', 'shops'] as const;
export type ProjectPage = (typeof PROJECT_PAGES)[number];

export const PAGE_TITLES: Record<ProjectPage, string> = {
  keys: 'Keys',
  versions: 'Versions',
  webhooks: 'Webhooks',
  stats: 'Stats',
  leak: 'Leak',
  blacklist: 'Blacklist',
  audit: 'Audit',
  loader: 'Loader',
  shops: 'Shops',
};

export type Route =
  | { page: 'projects' }
  | { page: 'tokens' }
  | { page: ProjectPage; projectId: string }
  | { page: 'key'; projectId: string; keyId: string }
  | { page: 'not-found'; path: string };

function isProjectPage(name: string): name is ProjectPage {
  return (PROJECT_PAGES as readonly string[]).includes(name);
}

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const parts = path
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === 'projects')) return { page: 'projects' };
  if (parts.length === 1 && parts[0] === 'tokens') return { page: 'tokens' };
  const [first, projectId, name, keyId] = parts;
  if (first === 'projects' && projectId) {
    if (parts.length === 2) return { page: 'keys', projectId };
    if (parts.length === 3 && name && isProjectPage(name)) return { page: name, projectId };
    if (parts.length === 4 && name === 'keys' && keyId) return { page: 'key', projectId, keyId };
  }
  return { page: 'not-found', path };
}

export function href(route: Route): string {
  switch (route.page) {
    case 'projects':
      return '#/projects';
    case 'tokens':
      return '#/tokens';
    case 'key':
      return `#/projects/${encodeURIComponent(route.projectId)}/keys/${encodeURIComponent(route.keyId)}`;
    case 'not-found':
      return `#${route.path}`;
    default:
      return `#/projects/${encodeURIComponent(route.projectId)}/${route.page}`;
  }
}
