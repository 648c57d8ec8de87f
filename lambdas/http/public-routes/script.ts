import { MACHINE_ENTRY_READ, MACHINE_RECORD_ATTRIBUTES } from '#adapters/blacklist-store';
import { KEY_CHECK_ATTRIBUTES, KEY_CHECK_RETURN_VALUES } from '#adapters/key-check-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import { REFUSAL_SENTENCES, refusalSentence } from '#domain/scripts';
import { NO_VERSION_YET } from '#http/loader-script';
import { EXAMPLE_BAN } from '#http/openapi/examples';
import { errorContent } from '#http/openapi/responses';
import { headerRef, JSON_TYPE, type Operation, schemaRef } from '#http/openapi/types';
import { definePublicRoute } from '#http/public-route';
import { REFUSAL_CODES } from '#schemas/loader';
import { keyCheckFailures, VALIDATE_ROUTE } from './validate';

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
  openapi: (): Operation => {
    const check = VALIDATE_ROUTE.openapi();
    const failures = keyCheckFailures();
    const versionHeaders = {
      ETag: headerRef('ETag'),
      'X-Version-Id': headerRef('X-Version-Id'),
      'X-Version-Number': headerRef('X-Version-Number'),
      'X-Script-SHA256': headerRef('X-Script-SHA256'),
    };
    return {
      operationId: 'fetchScript',
      tags: ['Loader'],
      summary: "Fetch the script for a buyer's key",
      description: `Called by the stub loader at every execution, with no bearer token and the body of the key check. One fetch is one check: the same codes in the same order, the same limits, one use counted per 200 or 304 and none otherwise. A valid key gets the project's current version's script with every \`WM_XXXXXXXXXXXXXXXX\` replaced by \`WM_<its watermark>\` (a script without the placeholder gets the line \`--WM_<watermark>\` in front). \`If-None-Match\` with the \`ETag\` of the copy the loader holds answers 304 without a body. After a rollback answered 200 or an upload finished, the next fetch serves the new version; after a revoke answered 200, the next fetch of that key is refused.`,
      security: [],
      parameters: [
        {
          name: 'If-None-Match',
          in: 'header',
          required: false,
          description: 'The `ETag` of the copy the loader holds.',
          schema: { type: 'string' },
          example: '"577d2eff1378cbcc8207097a0e498908"',
        },
      ],
      requestBody: check.requestBody,
      responses: {
        200: {
          description: "The script, stamped with the key's watermark. `Cache-Control: private, no-store`.",
          headers: versionHeaders,
          content: {
            'text/plain; charset=utf-8': {
              schema: { type: 'string' },
              examples: { script: { summary: 'A stamped script', value: 'local WATERMARK = "WM_3f9a1c7e5b2d8046"\nprint("running")\n' } },
            },
          },
        },
        304: { description: 'The copy named by `If-None-Match` is current: no body (one use counted).', headers: versionHeaders },
        400: failures[400],
        403: {
          description: 'The key may not run: a sentence for the buyer, and the code. No use counted, no script bytes.',
          content: {
            [JSON_TYPE]: {
              schema: schemaRef('LoaderScriptRefused'),
              examples: Object.fromEntries(
                REFUSAL_CODES.map((code) => {
                  const error = code === 'KEY_BANNED' ? refusalSentence({ code, ban: EXAMPLE_BAN }) : REFUSAL_SENTENCES[code];
                  return [code, { summary: code, value: { error, valid: false, code } }];
                }),
              ),
            },
          },
        },
        404: {
          description: 'A valid key of a project with no version yet (no use counted).',
          content: errorContent({ none: { summary: 'No version yet', value: { error: NO_VERSION_YET } } }),
        },
        413: failures[413],
        429: failures[429],
        500: failures[500],
      },
    };
  },
});
