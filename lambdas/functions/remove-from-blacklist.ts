import { removeFromBlacklistRoute } from '#http/owner-routes/remove-from-blacklist';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/remove-from-blacklist.ts. */
export const handler = awsApiHandler(removeFromBlacklistRoute);
