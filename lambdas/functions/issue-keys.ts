import { issueKeysRoute } from '#http/owner-routes/issue-keys';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/issue-keys.ts. */
export const handler = awsApiHandler(issueKeysRoute);
