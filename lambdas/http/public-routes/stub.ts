import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import { definePublicRoute } from '#http/public-route';

/**
 * The hosted stub loader (DESIGN.md, "Buyers help themselves in Discord"): every buyer's run fetches it before the
 * script, so it is loader traffic and is served by the loader's function. Public text with an ETag.
 */
export const STUB_ROUTE = definePublicRoute({
  method: 'GET',
  path: '/v1/loader/stub/{project_id}',
  entry: 'loader-stub',
  mappingKey: 'v1/loader',
  // Whether the project exists: one read of its project item; an unknown one counts in its address's window.
  tableAccess: [
    { actions: ['dynamodb:GetItem'], partitions: ['project'] },
    { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'], attributes: UPDATED_ATTRIBUTES.rateWindow, returnValues: RATE_WINDOW_RETURN_VALUES },
  ],
});
