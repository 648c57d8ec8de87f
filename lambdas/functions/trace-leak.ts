import { traceLeakRoute } from '#http/owner-routes/trace-leak';
import { awsApiHandler } from '#runtime/aws';

/** The Lambda entry of the route defined in lambdas/http/owner-routes/trace-leak.ts. */
export const handler = awsApiHandler(traceLeakRoute);
