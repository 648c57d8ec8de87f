import { keyDetail } from '#domain/selling-keys';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery } from '#schemas/requests';

/** GET /v1/projects/{id}/keys/{key_id} */
export const getKeyEndpoint = defineEndpoint({
  scope: scopeNeededBy('get-key'),
  query: NoQuery,
  run: ({ project, keyId, now }, _projects, _audit, keys) => keyDetail(keys.store, project, keyId, now),
});

export const handler = awsApiHandler(getKeyEndpoint);
