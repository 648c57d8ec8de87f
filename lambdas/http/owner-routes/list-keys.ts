import { listKeys } from '#domain/project-api';
import { defineOwnerRoute } from '#http/owner-route';
import { ListKeysQuery } from '#schemas/requests';

export const listKeysRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/keys',
  entry: 'list-keys',
  access: 'read',
  doing: 'listing keys',
  // Both indexes hold keys only (the watermark one serves the `watermark` filter): the page's keys themselves come
  // from one consistent BatchGetItem.
  tableAccess: [{ queryIndex: 'byIssueOrder' }, { queryIndex: 'byWatermark' }, { actions: ['dynamodb:BatchGetItem'], partitions: ['key'] }],
  query: ListKeysQuery,
  run: ({ project, query, stores }) => listKeys(stores.projects, project, query),
});
