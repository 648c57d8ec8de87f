import { unbanKeyRoute } from '#http/owner-routes/unban-key';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/unban-key.ts. */
export const handler = awsApiHandler(unbanKeyRoute);
