import { revokeKeyRoute } from '#http/owner-routes/revoke-key';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/revoke-key.ts. */
export const handler = awsApiHandler(revokeKeyRoute);
