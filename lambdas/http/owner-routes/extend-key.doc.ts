import { KeyNotFound } from '#domain/errors';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { ExtendKeyBody, LIFETIME_EXPIRES_AT } from '#schemas/requests';
import { ExtendKeyResponse } from '#schemas/responses';

/** The OpenAPI operation of extend-key (its route: extend-key.ts); the document alone imports it, never a Lambda bundle. */
export const extendKeyDoc = (): OperationDoc => ({
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
});
