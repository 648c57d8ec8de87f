import { unbanKey } from '#domain/key-lifecycle';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, UnbanKeyBody } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/unban */
export const unbanKeyEndpoint = defineEndpoint({
  scope: scopeNeededBy('unban-key'),
  query: NoQuery,
  body: UnbanKeyBody,
  run: ({ project, body, now, actor }, _projects, audit, keys) => unbanKey(keys.store, project, body, now, { log: audit, actor }),
});

export const handler = awsApiHandler(unbanKeyEndpoint);
