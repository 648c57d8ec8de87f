import { rollbackRoute } from '#http/owner-routes/rollback';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/rollback.ts. */
export const handler = awsApiHandler(rollbackRoute);
