import { updateKeyRoute } from '#http/owner-routes/update-key';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/update-key.ts. */
export const handler = awsApiHandler(updateKeyRoute);
