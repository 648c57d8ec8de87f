import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { InvalidInput, KeyNotFound } from '#domain/errors';
import { banKey } from '#domain/key-lifecycle';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { BAN_REASON_LENGTH, BanKeyBody, NoQuery } from '#schemas/requests';
import { OkResponse } from '#schemas/responses';

export const banKeyRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys/ban',
  entry: 'ban-key',
  access: 'write',
  doing: 'banning a key',
  capacity: 'quiet',
  // Key lifecycle (key-store.ts): one conditional write of the key's ban, then the audit entry.
  tableAccess: [{ actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.keyBan }, RECORD_AUDIT],
  query: NoQuery,
  body: BanKeyBody,
  run: ({ project, body, now, trail, stores }) => banKey(stores.keys.store, project, body, now, trail),
  openapi: () => ({
    operationId: 'banKey',
    tag: 'Keys',
    summary: 'Ban a key, with a reason the buyer reads',
    description: `Every check of the key is refused \`KEY_BANNED\` with no use counted, until \`until\` (Unix seconds, in the future) or an unban; without \`until\` the ban lasts until unbanned. Validate answers \`{"valid": false, "code": "KEY_BANNED", "reason": ...}\` and a script fetch a 403 whose \`error\` sentence holds the reason. \`reason\` is ${BAN_REASON_LENGTH.min} to ${BAN_REASON_LENGTH.max} characters of one line. Banning a banned key replaces its reason and end. Order of codes: revoked, banned, expired, HWID locked, over limit. One write.`,
    requestBody: {
      name: 'BanKeyRequest',
      description: 'The key, the reason and the end.',
      examples: {
        week: { summary: 'A week off', value: { key_id: EXAMPLE.keyId, reason: 'Shared the key in a public server', until: 1764480000 } },
        until_unbanned: { summary: 'Until unbanned', value: { key_id: EXAMPLE.keyId, reason: 'Chargeback: contact support' } },
      },
    },
    ok: { name: 'OkResponse', schema: OkResponse, description: 'The key is banned.', example: { ok: true } satisfies OkResponse },
    errors: [
      invalid('No reason', BanKeyBody, { key_id: EXAMPLE.keyId }),
      {
        summary: 'until in the past',
        error: new InvalidInput('until must be in the future: a Unix time after now (1763875200); leave it out for a ban until unbanned'),
      },
      { summary: 'No such key in this project', error: new KeyNotFound(EXAMPLE.otherKeyId) },
    ],
  }),
});
