import { getKeyRoute } from '#http/owner-routes/get-key';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/get-key.ts. */
export const handler = awsApiHandler(getKeyRoute);
