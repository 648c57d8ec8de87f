import { KeyNotFound } from '#domain/errors';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { ResetHwidBody } from '#schemas/requests';
import { ResetHwidResponse } from '#schemas/responses';

/** The OpenAPI operation of reset-hwid (its route: reset-hwid.ts); the document alone imports it, never a Lambda bundle. */
export const resetHwidDoc = (): OperationDoc => ({
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
});
