import { listVersionsRoute } from '#http/owner-routes/list-versions';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/list-versions.ts. */
export const handler = awsApiHandler(listVersionsRoute);
