import { listWebhooksRoute } from '#http/owner-routes/list-webhooks';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/list-webhooks.ts. */
export const handler = awsApiHandler(listWebhooksRoute);
