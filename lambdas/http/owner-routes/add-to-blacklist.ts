import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { addToBlacklist } from '#domain/blacklist';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { AddBlacklistBody, NoQuery } from '#schemas/requests';

export const addToBlacklistRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/blacklist',
  entry: 'add-to-blacklist',
  access: 'write',
  doing: 'adding to the blacklist',
  capacity: 'quiet',
  // The entry, its position and the count in one transaction (blacklist-store.ts); the buyer's keys from the machine's
  // records or the Discord index, each banned by one conditional write.
  tableAccess: [
    { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], partitions: ['blacklist'] },
    { actions: ['dynamodb:Query'], partitions: ['machine'] },
    { queryIndex: 'byDiscordId' },
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: UPDATED_ATTRIBUTES.blacklistBan },
    RECORD_AUDIT,
  ],
  query: NoQuery,
  body: AddBlacklistBody,
  run: ({ project, body, now, trail, stores }) => addToBlacklist(stores.blacklist, project, body, now, trail),
});
