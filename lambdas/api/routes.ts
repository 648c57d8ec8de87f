/**
 * The API's routes: the CDK stack builds one Lambda per route from `entry`, the local server dispatches
 * to the same modules. `access` decides the table grant of the route's function.
 */
export const ROUTES = [
  { method: 'GET', path: '/v1/projects/{id}/keys', entry: 'list-keys', access: 'read' },
  { method: 'POST', path: '/v1/projects/{id}/keys/revoke', entry: 'revoke-key', access: 'write' },
  { method: 'POST', path: '/v1/projects/{id}/keys/revoke-bulk', entry: 'revoke-bulk', access: 'write' },
  { method: 'GET', path: '/v1/projects/{id}/versions', entry: 'list-versions', access: 'read' },
  { method: 'POST', path: '/v1/projects/{id}/versions/rollback', entry: 'rollback', access: 'write' },
  { method: 'GET', path: '/v1/projects/{id}/webhooks', entry: 'list-webhooks', access: 'read' },
] as const;

export type Route = (typeof ROUTES)[number];
