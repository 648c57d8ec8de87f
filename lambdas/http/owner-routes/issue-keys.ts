import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { issueKeys } from '#domain/selling-keys';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { IssueKeysBody, NoQuery } from '#schemas/requests';

export const issueKeysRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/keys',
  entry: 'issue-keys',
  access: 'write',
  doing: 'issuing keys',
  // key-store.ts: the project's lease taken and given back, the counter moved (nothing else of the project) with
  // the order put in one transaction, the keys put in batches of 25; a repeat reads the order and its keys
  // (BatchGetItem) and puts any key the first call did not write.
  tableAccess: [
    { actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], partitions: ['sequenceLease'] },
    { actions: ['dynamodb:UpdateItem'], partitions: ['project'], attributes: UPDATED_ATTRIBUTES.keyCount },
    { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], partitions: ['order'] },
    // The keys and, for a batch with a note, its note-word search items (the console's search), written alike.
    { actions: ['dynamodb:BatchWriteItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem'], partitions: ['key', 'noteWords'] },
    RECORD_AUDIT,
  ],
  query: NoQuery,
  body: IssueKeysBody,
  run: ({ project, body, now, trail, stores }) => issueKeys(stores.keys, project, body, now, trail),
});
