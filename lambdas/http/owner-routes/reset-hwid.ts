import { FINGERPRINT_RESET_RETURN_VALUES } from '#adapters/key-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { KeyNotFound } from '#domain/errors';
import { resetHwid } from '#domain/selling-keys';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, ResetHwidBody } from '#schemas/requests';
import { ResetHwidResponse } from '#schemas/responses';

export const resetHwidRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys/reset-hwid',
  entry: 'reset-hwid',
  access: 'write',
  doing: "resetting a key's machines",
  // One conditional write of the key's fingerprints (returning the old ones only), then the audit entry; when the
  // condition fails, a read of the key's project only says whether the key is the project's.
  tableAccess: [
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.fingerprintReset, returnValues: FINGERPRINT_RESET_RETURN_VALUES },
    { actions: ['dynamodb:GetItem'], partitions: ['key'], attributes: ['projectId'] },
    RECORD_AUDIT,
  ],
  query: NoQuery,
  body: ResetHwidBody,
  run: ({ project, body, now, trail, stores }) => resetHwid(stores.keys.store, project, body.key_id, now, trail),
  openapi: () => ({
    operationId: 'resetHwid',
    tag: 'Keys',
    summary: "Unbind a key's machines",
    description:
      'Unbinds every machine the key is bound to, in one write; the next checks bind anew (up to `max_fingerprints`). `cleared` counts the machines unbound: 0 for a key that is not bound.',
    requestBody: {
      name: 'ResetHwidRequest',
      description: 'The key to reset.',
      examples: { reset: { summary: 'Reset a key', value: { key_id: EXAMPLE.keyId } } },
    },
    ok: {
      name: 'ResetHwidResponse',
      schema: ResetHwidResponse,
      description: 'The machines are unbound.',
      example: { ok: true, cleared: 1 } satisfies ResetHwidResponse,
    },
    errors: [invalid('Empty body', ResetHwidBody, {}), { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) }],
  }),
});
