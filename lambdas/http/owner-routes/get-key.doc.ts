import { KeyNotFound } from '#domain/errors';
import { EXAMPLE, EXAMPLE_BAN, EXAMPLE_FINGERPRINT, EXAMPLE_LISTED_KEY } from '#http/openapi/examples';
import { type OperationDoc, unknownQuery } from '#http/openapi/operation-doc';
import { KeyDetailResponse } from '#schemas/responses';

/** The OpenAPI operation of get-key (its route: get-key.ts); the document alone imports it, never a Lambda bundle. */
export const getKeyDoc = (): OperationDoc => ({
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
});
