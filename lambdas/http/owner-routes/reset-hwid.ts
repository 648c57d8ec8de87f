import { FINGERPRINT_RESET_RETURN_VALUES } from '#adapters/key-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { resetHwid } from '#domain/selling-keys';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery, ResetHwidBody } from '#schemas/requests';

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
});
