import { resetHwidRoute } from '#http/owner-routes/reset-hwid';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/reset-hwid.ts. */
export const handler = awsApiHandler(resetHwidRoute);
