import { revokeBulkRoute } from '#http/owner-routes/revoke-bulk';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/revoke-bulk.ts. */
export const handler = awsApiHandler(revokeBulkRoute);
