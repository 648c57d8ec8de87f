import { extendKeyRoute } from '#http/owner-routes/extend-key';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/extend-key.ts. */
export const handler = awsApiHandler(extendKeyRoute);
