import { KeyNotFound } from '#domain/errors';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { UnbanKeyBody } from '#schemas/requests';
import { OkResponse } from '#schemas/responses';

/** The OpenAPI operation of unban-key (its route: unban-key.ts); the document alone imports it, never a Lambda bundle. */
export const unbanKeyDoc = (): OperationDoc => ({
  operationId: 'unbanKey',
  tag: 'Keys',
  summary: 'Lift the ban of a key',
  description: 'The next check of the key is judged as if there had been no ban. A key without a ban answers the same. One write.',
  requestBody: { name: 'UnbanKeyRequest', description: 'The key.', examples: { unban: { summary: 'Unban a key', value: { key_id: EXAMPLE.keyId } } } },
  ok: { name: 'OkResponse', schema: OkResponse, description: 'The key is not banned.', example: { ok: true } satisfies OkResponse },
  errors: [invalid('Empty body', UnbanKeyBody, {}), { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) }],
});
