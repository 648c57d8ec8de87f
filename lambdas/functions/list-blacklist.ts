import { listBlacklistRoute } from '#http/owner-routes/list-blacklist';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/list-blacklist.ts. */
export const handler = awsApiHandler(listBlacklistRoute);
