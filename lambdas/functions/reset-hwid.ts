import { resetHwid } from '#domain/selling-keys';
import { defineEndpoint } from '#http/api-handler';
import { scopeNeededBy } from '#http/routes';
import { awsApiHandler } from '#runtime/aws';
import { NoQuery, ResetHwidBody } from '#schemas/requests';

/** POST /v1/projects/{id}/keys/reset-hwid */
export const resetHwidEndpoint = defineEndpoint({
  scope: scopeNeededBy('reset-hwid'),
  query: NoQuery,
  body: ResetHwidBody,
  run: ({ project, body, now, actor }, _projects, audit, keys) => resetHwid(keys.store, project, body.key_id, now, { log: audit, actor }),
});

export const handler = awsApiHandler(resetHwidEndpoint);
