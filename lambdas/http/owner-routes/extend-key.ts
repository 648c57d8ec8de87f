import { KEY_EXTEND_FAILURE_READ, KEY_EXTEND_RETURN_VALUES } from '#adapters/key-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { KeyNotFound } from '#domain/errors';
import { extendKey } from '#domain/key-lifecycle';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { ExtendKeyBody, LIFETIME_EXPIRES_AT, NoQuery } from '#schemas/requests';
import { ExtendKeyResponse } from '#schemas/responses';

export const extendKeyRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys/extend',
  entry: 'extend-key',
  access: 'write',
  doing: 'extending a key',
  capacity: 'quiet',
  // One conditional write of the key's expiry, which comes back from the write; a failed condition is followed by a
  // read of what says why; then the audit entry.
  tableAccess: [
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyExpiry, returnValues: KEY_EXTEND_RETURN_VALUES },
    { actions: ['dynamodb:GetItem'], partitions: ['key'], attributes: KEY_EXTEND_FAILURE_READ },
    RECORD_AUDIT,
  ],
  query: NoQuery,
  body: ExtendKeyBody,
  run: ({ project, body, now, trail, stores }) => extendKey(stores.keys.store, project, body, now, trail),
  openapi: () => ({
    operationId: 'extendKey',
    tag: 'Keys',
    summary: 'Give a key more time',
    description: `The new \`expires_at\` is the later of now and the old \`expires_at\`, plus \`duration\` (the durations of issuing keys: \`1d\`, \`7d\`, \`30d\`, \`90d\`, \`365d\`, whole seconds 60 to 315,360,000, or \`lifetime\`, which sets ${LIFETIME_EXPIRES_AT}). An expired key runs again. One write, with no read before it.`,
    requestBody: {
      name: 'ExtendKeyRequest',
      description: 'The key and the time to add.',
      examples: { renewal: { summary: 'A renewal payment', value: { key_id: EXAMPLE.keyId, duration: '30d' } } },
    },
    ok: {
      name: 'ExtendKeyResponse',
      schema: ExtendKeyResponse,
      description: "The key's new expiry.",
      example: { ok: true, expires_at: 1768972800 } satisfies ExtendKeyResponse,
    },
    errors: [
      invalid('Unknown duration', ExtendKeyBody, { key_id: EXAMPLE.keyId, duration: '2w' }),
      { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
    ],
  }),
});
