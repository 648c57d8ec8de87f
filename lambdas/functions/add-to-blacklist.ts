import { addToBlacklistRoute } from '#http/owner-routes/add-to-blacklist';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/add-to-blacklist.ts. */
export const handler = awsApiHandler(addToBlacklistRoute);
