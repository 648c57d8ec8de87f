import { MACHINE_ENTRY_READ, MACHINE_RECORD_ATTRIBUTES } from '#adapters/blacklist-store';
import { KEY_CHECK_ATTRIBUTES, KEY_CHECK_RETURN_VALUES } from '#adapters/key-check-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import { definePublicRoute } from '#http/public-route';

/** The loader's key check (DESIGN.md, "Loader key check"): public, no bearer token, served by the loader's function. */
export const VALIDATE_ROUTE = definePublicRoute({
  method: 'POST',
  path: '/v1/loader/validate',
  entry: 'loader-validate',
  mappingKey: 'v1/loader',
  // A check counts a use on its key item, naming only what the count writes and tests: not a key's note, owner
  // fields or index keys' neighbours; and counts itself in its rate windows.
  tableAccess: [
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: KEY_CHECK_ATTRIBUTES, returnValues: KEY_CHECK_RETURN_VALUES },
    { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'], attributes: UPDATED_ATTRIBUTES.rateWindow, returnValues: RATE_WINDOW_RETURN_VALUES },
    // Before binding a new machine: its record of the key, then its blacklist entry's reason (blacklist-store.ts machineBinding).
    { actions: ['dynamodb:PutItem'], partitions: ['machine'], attributes: MACHINE_RECORD_ATTRIBUTES },
    { actions: ['dynamodb:GetItem'], partitions: ['blacklist'], attributes: MACHINE_ENTRY_READ },
  ],
});
