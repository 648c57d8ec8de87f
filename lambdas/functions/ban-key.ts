import { banKey } from '#domain/key-lifecycle';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { BanKeyBody, NoQuery } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/ban */
export const banKeyEndpoint = defineEndpoint({
  scope: scopeNeededBy('ban-key'),
  query: NoQuery,
  body: BanKeyBody,
  run: ({ project, body, now, actor }, _projects, audit, keys) => banKey(keys.store, project, body, now, { log: audit, actor }),
});

export const handler = awsApiHandler(banKeyEndpoint);
