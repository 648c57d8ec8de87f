import { BlacklistEntryNotFound } from '#domain/errors';
import type { OperationDoc } from '#http/openapi/operation-doc';
import { unknownQuery } from '#http/openapi/operation-doc';
import { OkResponse } from '#schemas/responses';

/** The OpenAPI operation of remove-from-blacklist (its route: remove-from-blacklist.ts); the document alone imports it, never a Lambda bundle. */
export const removeFromBlacklistDoc = (): OperationDoc => ({
  operationId: 'removeFromBlacklist',
  tag: 'Blacklist',
  summary: 'Remove a buyer from the blacklist',
  description:
    'The buyer may bind machines, redeem and get keys again. The keys the entry banned stay banned until each is unbanned (`POST …/keys/unban`). An entry of another project, or none, is 404.',
  ok: { name: 'OkResponse', schema: OkResponse, description: 'The entry is gone.', example: { ok: true } satisfies OkResponse },
  errors: [...unknownQuery(), { summary: 'No such entry in this project', error: new BlacklistEntryNotFound('bld_80351110224678912') }],
});
