import { listKeysRoute } from '#http/owner-routes/list-keys';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/list-keys.ts. */
export const handler = awsApiHandler(listKeysRoute);
