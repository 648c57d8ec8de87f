import { EXAMPLE } from '#http/openapi/examples';
import { invalid, type OperationDoc } from '#http/openapi/operation-doc';
import { KEYS_PAGE, ListPageQuery } from '#schemas/requests';
import { ListWebhooksResponse } from '#schemas/responses';

/** The OpenAPI operation of list-webhooks (its route: list-webhooks.ts); the document alone imports it, never a Lambda bundle. */
export const listWebhooksDoc = (): OperationDoc => ({
  operationId: 'listWebhooks',
  tag: 'Webhooks',
  summary: 'List webhook configurations',
  description:
    'Every webhook configuration of the project; with `limit`, a page of them from `offset` (in a stable order). `total` counts every configuration. Read-only: webhooks are managed in the dashboard. A `read` token sees each `url` with its token redacted; a `write` token sees it whole.',
  queryDescriptions: {
    limit: `Configurations per page (at most ${KEYS_PAGE.maxLimit}); without it, every configuration from \`offset\`, as the spec says (§4.6).`,
    offset: 'How many configurations to skip (default 0).',
  },
  ok: {
    name: 'ListWebhooksResponse',
    schema: ListWebhooksResponse,
    description: 'The webhook configurations.',
    example: {
      webhooks: [
        {
          id: EXAMPLE.webhookId,
          url: 'https://discord.com/api/webhooks/1311223344556677889/Zx9-example-webhook-token',
          events: '["version_deployed","key_abuse"]',
          enabled: 1,
          created_at: 1763616000,
          updated_at: 1763616000,
        },
      ],
      total: 1,
    } satisfies ListWebhooksResponse,
  },
  errors: [invalid('limit out of range', ListPageQuery, { limit: '500' }), invalid('offset not a whole number', ListPageQuery, { offset: '-1' })],
});
