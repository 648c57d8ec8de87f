import { updateKey } from '#domain/key-lifecycle';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, UpdateKeyBody } from '#schemas/requests';

/** PATCH /v1/projects/{id}/keys/{key_id} */
export const updateKeyEndpoint = defineEndpoint({
  scope: scopeNeededBy('update-key'),
  query: NoQuery,
  body: UpdateKeyBody,
  run: ({ project, keyId, body, now, actor }, _projects, audit, keys) => updateKey(keys.store, project, keyId, body, now, { log: audit, actor }),
});

export const handler = awsApiHandler(updateKeyEndpoint);
