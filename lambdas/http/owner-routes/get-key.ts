import { KeyNotFound } from '#domain/errors';
import { keyDetail } from '#domain/selling-keys';
import { EXAMPLE, EXAMPLE_BAN, EXAMPLE_FINGERPRINT, EXAMPLE_LISTED_KEY } from '#http/openapi/examples';
import { unknownQuery } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { NoQuery } from '#schemas/requests';
import { KeyDetailResponse } from '#schemas/responses';

export const getKeyRoute = defineOwnerRoute({
  method: 'GET',
  path: '/v1/projects/{id}/keys/{key_id}',
  entry: 'get-key',
  access: 'read',
  doing: 'reading a key',
  tableAccess: [{ actions: ['dynamodb:GetItem'], partitions: ['key'] }],
  query: NoQuery,
  run: ({ project, keyId, now, stores }) => keyDetail(stores.keys.store, project, keyId, now),
  openapi: () => ({
    operationId: 'getKey',
    tag: 'Keys',
    summary: 'Read one key in detail',
    description:
      "The key's metadata (the key list's fields) and what selling adds: `note`, `discord_id`, `max_fingerprints`, the machines bound (`fingerprints`, each with `bound_at`), `last_check_at` (the last check that counted a use) `revoked_by` (the id of the API token that revoked the key, or `dashboard`) and `ban` (`{reason, until}` while a ban holds: `until` null for a ban until unbanned); null where unset. Never the raw value.",
    ok: {
      name: 'KeyDetailResponse',
      schema: KeyDetailResponse,
      description: 'The key.',
      example: {
        key: {
          ...EXAMPLE_LISTED_KEY,
          note: 'SellAuth order 48213',
          discord_id: '123456789012345678',
          max_fingerprints: 1,
          fingerprints: [{ fingerprint: EXAMPLE_FINGERPRINT, bound_at: 1763790000 }],
          last_check_at: 1763875200,
          ban: EXAMPLE_BAN,
          revoked_by: null,
        },
      } satisfies KeyDetailResponse,
    },
    errors: [...unknownQuery(), { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) }],
  }),
});
