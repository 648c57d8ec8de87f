import { MACHINE_ENTRY_READ, MACHINE_RECORD_ATTRIBUTES } from '#adapters/blacklist-store';
import { KEY_CHECK_ATTRIBUTES, KEY_CHECK_RETURN_VALUES } from '#adapters/key-check-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import { definePublicRoute } from '#http/public-route';

/**
 * Script delivery (DESIGN.md, "Script delivery"): public like the check it makes, served by the loader's function.
 * The same body and check as validate; the script on 200, 304 for a cached copy, 403 refusals.
 */
export const SCRIPT_ROUTE = definePublicRoute({
  method: 'POST',
  path: '/v1/loader/script',
  entry: 'loader-script',
  mappingKey: 'v1/loader',
  // The key check's own writes, and a read of the current-version pointer and the version item (project items),
  // and of the key when there is nothing to serve.
  tableAccess: [
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: KEY_CHECK_ATTRIBUTES, returnValues: KEY_CHECK_RETURN_VALUES },
    { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'], attributes: UPDATED_ATTRIBUTES.rateWindow, returnValues: RATE_WINDOW_RETURN_VALUES },
    // Before binding a new machine: its record of the key, then its blacklist entry's reason (blacklist-store.ts machineBinding).
    { actions: ['dynamodb:PutItem'], partitions: ['machine'], attributes: MACHINE_RECORD_ATTRIBUTES },
    { actions: ['dynamodb:GetItem'], partitions: ['blacklist'], attributes: MACHINE_ENTRY_READ },
    { actions: ['dynamodb:GetItem'], partitions: ['key', 'project'] },
  ],
});
