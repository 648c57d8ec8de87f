import { removeFromBlacklist } from '#domain/blacklist';
import { BlacklistEntryNotFound } from '#domain/errors';
import { unknownQuery } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { NoQuery } from '#schemas/requests';
import { OkResponse } from '#schemas/responses';

export const removeFromBlacklistRoute = defineOwnerRoute({
  method: 'DELETE',
  path: '/v1/projects/{id}/blacklist/{entry_id}',
  entry: 'remove-from-blacklist',
  access: 'write',
  doing: 'removing from the blacklist',
  capacity: 'quiet',
  // The entry, the count and the last position moved into the freed one, in one transaction (blacklist-store.ts).
  tableAccess: [{ actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'], partitions: ['blacklist'] }, RECORD_AUDIT],
  query: NoQuery,
  run: ({ project, entryId, now, actor }, _projects, audit, _keys, blacklist) => removeFromBlacklist(blacklist, project, entryId, now, { log: audit, actor }),
  openapi: () => ({
    operationId: 'removeFromBlacklist',
    tag: 'Blacklist',
    summary: 'Remove a buyer from the blacklist',
    description:
      'The buyer may bind machines, redeem and get keys again. The keys the entry banned stay banned until each is unbanned (`POST …/keys/unban`). An entry of another project, or none, is 404.',
    ok: { name: 'OkResponse', schema: OkResponse, description: 'The entry is gone.', example: { ok: true } satisfies OkResponse },
    errors: [...unknownQuery(), { summary: 'No such entry in this project', error: new BlacklistEntryNotFound('bld_80351110224678912') }],
  }),
});
