import { EXAMPLE } from '#http/openapi/examples';
import { type OperationDoc, unknownQuery } from '#http/openapi/operation-doc';
import { ListWebhooksResponse } from '#schemas/responses';

/** The OpenAPI operation of list-webhooks (its route: list-webhooks.ts); the document alone imports it, never a Lambda bundle. */
export const listWebhooksDoc = (): OperationDoc => ({
  operationId: 'listWebhooks',
  tag: 'Webhooks',
  summary: 'List webhook configurations',
  description:
    'Every webhook configuration of the project. Read-only: webhooks are managed in the dashboard. A `read` token sees each `url` with its token redacted; a `write` token sees it whole.',
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
    } satisfies ListWebhooksResponse,
  },
  errors: unknownQuery(),
});
