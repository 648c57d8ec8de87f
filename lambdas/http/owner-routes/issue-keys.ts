import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { OrderConflict, OrderRepeatClosed } from '#domain/errors';
import { issueKeys, ORDER_REPEAT_WINDOW_SECONDS } from '#domain/selling-keys';
import { EXAMPLE } from '#http/openapi/examples';
import { invalid } from '#http/openapi/operation-doc';
import { defineOwnerRoute } from '#http/owner-route';
import { RECORD_AUDIT } from '#http/table-grants';
import { IssueKeysBody, LIFETIME_EXPIRES_AT, NoQuery } from '#schemas/requests';
import { IssueKeysResponse } from '#schemas/responses';

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
  openapi: () => ({
    operationId: 'issueKeys',
    tag: 'Keys',
    summary: 'Issue keys (for a shop or a bot)',
    description: `Issues 1 to 100 keys and answers their raw values, in this answer only (the table keeps their SHA-256). \`duration\` is a preset (\`1d\`, \`7d\`, \`30d\`, \`90d\`, \`365d\`), whole seconds (60 to 315,360,000), or \`lifetime\` (\`expires_at\` ${LIFETIME_EXPIRES_AT}, 2100-01-01); default \`30d\`. \`max_fingerprints\` binds each key to that many machines on their first checks (null: not bound). With \`order_id\`, a repeat of the same body in the same project answers the same keys, raw values included, and issues nothing; the same \`order_id\` with another body is a 400. Counts once toward the rate limit.`,
    requestBody: {
      name: 'IssueKeysRequest',
      description: 'What to issue.',
      examples: {
        shop_order: {
          summary: "A shop's order",
          value: {
            count: 1,
            duration: '30d',
            max_fingerprints: 1,
            order_id: 'sellauth-48213',
            discord_id: '123456789012345678',
            note: 'SellAuth order 48213',
          },
        },
        batch: { summary: 'A batch of lifetime keys', value: { count: 25, duration: 'lifetime' } },
      },
    },
    ok: {
      name: 'IssueKeysResponse',
      schema: IssueKeysResponse,
      description: 'The keys, with their raw values (shown here only).',
      example: {
        keys: [{ id: EXAMPLE.keyId, key: 'sdk_7Qm2vYcJ0sX5kR9uWb3nHf1LtA8eDgZo', watermark: EXAMPLE.watermark, expires_at: 1766380800 }],
        repeated: false,
        issued_at: 1763788800,
      } satisfies IssueKeysResponse,
    },
    errors: [
      invalid('count out of range', IssueKeysBody, { count: 101 }),
      invalid('Unknown duration', IssueKeysBody, { duration: '2w' }),
      { summary: 'order_id used with another body or by another token', error: new OrderConflict('sellauth-48213') },
      { summary: 'order_id placed more than 72 hours ago', error: new OrderRepeatClosed('sellauth-48213', ORDER_REPEAT_WINDOW_SECONDS) },
    ],
  }),
});
