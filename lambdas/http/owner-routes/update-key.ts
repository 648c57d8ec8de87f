import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { KeyNotFound } from '#domain/errors';
import { updateKey } from '#domain/key-lifecycle';
import { EXAMPLE, EXAMPLE_LISTED_KEY } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, UpdateKeyBody } from '#schemas/requests';
import { KeyDetailResponse } from '#schemas/responses';

export const updateKeyRoute = defineOwnerRoute({
  method: 'PATCH',
  path: '/v1/projects/{id}/keys/{key_id}',
  entry: 'update-key',
  access: 'write',
  doing: 'editing a key',
  capacity: 'quiet',
  // The edit asks nothing back; the key detail it answers is read after it, as get-key reads it.
  tableAccess: [
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyEdit },
    { actions: ['dynamodb:GetItem'], partitions: ['key'] },
    RECORD_AUDIT,
  ],
  query: NoQuery,
  body: UpdateKeyBody,
  run: ({ project, keyId, body, now, trail, stores }) => updateKey(stores.keys.store, project, keyId, body, now, trail),
  openapi: () => ({
    operationId: 'updateKey',
    tag: 'Keys',
    summary: 'Edit a key',
    description:
      'Sets any of `note`, `discord_id`, `max_uses` and `max_fingerprints`; null clears one, a field left out stays as it is. One write; answers the key in detail as it is after it. Lowering `max_fingerprints` below the machines bound keeps them bound and binds no new machine until a reset (`reset-hwid`); null makes the key unbound. An empty body is a 400.',
    requestBody: {
      name: 'UpdateKeyRequest',
      description: 'The fields to change.',
      examples: {
        fix_note: { summary: 'Fix a note and link a Discord user', value: { note: 'SellAuth order 48213 (renewed)', discord_id: '123456789012345678' } },
        limit_machines: { summary: 'Give a key a machine limit', value: { max_fingerprints: 2 } },
        clear: { summary: 'Remove the use cap and the Discord link', value: { max_uses: null, discord_id: null } },
      },
    },
    ok: {
      name: 'KeyDetailResponse',
      schema: KeyDetailResponse,
      description: 'The key after the edit.',
      example: {
        key: {
          ...EXAMPLE_LISTED_KEY,
          note: 'SellAuth order 48213 (renewed)',
          discord_id: '123456789012345678',
          max_fingerprints: 2,
          fingerprints: [],
          last_check_at: 1763875200,
          ban: null,
          revoked_by: null,
        },
      } satisfies KeyDetailResponse,
    },
    errors: [
      invalid('Empty body', UpdateKeyBody, {}),
      invalid('max_fingerprints out of range', UpdateKeyBody, { max_fingerprints: 11 }),
      { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
    ],
  }),
});
