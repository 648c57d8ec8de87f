import { banKeyRoute } from '#http/owner-routes/ban-key';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/ban-key.ts. */
export const handler = awsApiHandler(banKeyRoute);
