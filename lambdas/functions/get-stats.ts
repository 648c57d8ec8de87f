import { getStatsRoute } from '#http/owner-routes/get-stats';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/get-stats.ts. */
export const handler = awsApiHandler(getStatsRoute);
