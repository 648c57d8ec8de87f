import { extendKey } from '#domain/key-lifecycle';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { ExtendKeyBody, NoQuery } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/extend */
export const extendKeyEndpoint = defineEndpoint({
  scope: scopeNeededBy('extend-key'),
  query: NoQuery,
  body: ExtendKeyBody,
  run: ({ project, body, now, actor }, _projects, audit, keys) => extendKey(keys.store, project, body, now, { log: audit, actor }),
});

export const handler = awsApiHandler(extendKeyEndpoint);
