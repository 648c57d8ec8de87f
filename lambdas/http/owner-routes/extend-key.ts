import { KEY_EXTEND_FAILURE_READ, KEY_EXTEND_RETURN_VALUES } from '#adapters/key-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { extendKey } from '#domain/key-lifecycle';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { ExtendKeyBody, NoQuery } from '#schemas/requests';

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
});
