import { addToBlacklistDoc } from '#http/owner-routes/add-to-blacklist.doc';
import { banKeyDoc } from '#http/owner-routes/ban-key.doc';
import { extendKeyDoc } from '#http/owner-routes/extend-key.doc';
import { getKeyDoc } from '#http/owner-routes/get-key.doc';
import { getStatsDoc } from '#http/owner-routes/get-stats.doc';
import { issueKeysDoc } from '#http/owner-routes/issue-keys.doc';
import { listBlacklistDoc } from '#http/owner-routes/list-blacklist.doc';
import { listKeysDoc } from '#http/owner-routes/list-keys.doc';
import { listVersionsDoc } from '#http/owner-routes/list-versions.doc';
import { listWebhooksDoc } from '#http/owner-routes/list-webhooks.doc';
import { removeFromBlacklistDoc } from '#http/owner-routes/remove-from-blacklist.doc';
import { resetHwidDoc } from '#http/owner-routes/reset-hwid.doc';
import { revokeBulkDoc } from '#http/owner-routes/revoke-bulk.doc';
import { revokeKeyDoc } from '#http/owner-routes/revoke-key.doc';
import { rollbackDoc } from '#http/owner-routes/rollback.doc';
import { traceLeakDoc } from '#http/owner-routes/trace-leak.doc';
import { unbanKeyDoc } from '#http/owner-routes/unban-key.doc';
import { updateKeyDoc } from '#http/owner-routes/update-key.doc';
import type { Route } from '#http/routes';
import type { OperationDoc } from './operation-doc';

/**
 * Each owner route's OpenAPI operation, kept in `owner-routes/<entry>.doc.ts` beside its route and reached only from
 * the document: a Lambda imports its route, never this. A route without its doc fails to compile here.
 */
export const OWNER_DOCS: Record<Route['entry'], () => OperationDoc> = {
  'add-to-blacklist': addToBlacklistDoc,
  'ban-key': banKeyDoc,
  'extend-key': extendKeyDoc,
  'get-key': getKeyDoc,
  'get-stats': getStatsDoc,
  'issue-keys': issueKeysDoc,
  'list-blacklist': listBlacklistDoc,
  'list-keys': listKeysDoc,
  'list-versions': listVersionsDoc,
  'list-webhooks': listWebhooksDoc,
  'remove-from-blacklist': removeFromBlacklistDoc,
  'reset-hwid': resetHwidDoc,
  'revoke-bulk': revokeBulkDoc,
  'revoke-key': revokeKeyDoc,
  rollback: rollbackDoc,
  'trace-leak': traceLeakDoc,
  'unban-key': unbanKeyDoc,
  'update-key': updateKeyDoc,
};
