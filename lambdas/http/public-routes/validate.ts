import { MACHINE_ENTRY_READ, MACHINE_RECORD_ATTRIBUTES } from '#adapters/blacklist-store';
import { KEY_CHECK_ATTRIBUTES, KEY_CHECK_RETURN_VALUES } from '#adapters/key-check-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import { InvalidInput, RateLimited } from '#domain/errors';
import { ADDRESS_COUNTING, LOADER_LIMITS } from '#domain/key-check';
import { ERROR_STATUSES } from '#http/error-statuses';
import { MAX_BODY_BYTES } from '#http/middlewares';
import { EXAMPLE, EXAMPLE_FINGERPRINT } from '#http/openapi/examples';
import { type ErrorExample, firstIssue } from '#http/openapi/operation-doc';
import { BODY_FAILS_WITH, errorContent, errorExamples } from '#http/openapi/responses';
import { headerRef, JSON_TYPE, type Operation, type Ref, type ResponseObject, responseRef, schemaRef } from '#http/openapi/types';
import { definePublicRoute } from '#http/public-route';
import { LoaderCheckRequest } from '#schemas/loader';

const invalidBody = (summary: string, input: unknown): ErrorExample => ({ summary, error: new InvalidInput(firstIssue(LoaderCheckRequest, input)) });

/**
 * The failures every key-checking route answers alike (the check's 400, 413, 429 and 500): the script fetch reuses them.
 */
export function keyCheckFailures(): Record<400 | 413 | 429 | 500, ResponseObject | Ref> {
  const tooMany: ErrorExample[] = [
    { summary: 'Over the per-key limit', error: new RateLimited(42, `Too many checks of this key: at most ${LOADER_LIMITS.perKeyPerMinute} per minute`) },
    {
      summary: 'Over the per-address limit',
      error: new RateLimited(42, `Too many key checks from this address: at most ${LOADER_LIMITS.perAddressPerMinute} per minute`),
    },
    {
      summary: 'Too many unknown keys from one address',
      error: new RateLimited(42, `Too many unknown keys from this address: at most ${ADDRESS_COUNTING.invalidKeysPerMinute} per minute`),
    },
  ];
  const invalid: ErrorExample[] = [
    invalidBody('No key', { project_id: EXAMPLE.projectId, fingerprint: EXAMPLE_FINGERPRINT, executor: 'Wave' }),
    invalidBody('A raw machine id instead of its hash', { project_id: EXAMPLE.projectId, key: 'sdk_…', fingerprint: 'HWID-1234', executor: 'Wave' }),
    ...BODY_FAILS_WITH,
  ];
  return {
    400: { description: ERROR_STATUSES.InvalidInput.description, content: errorContent(errorExamples(invalid)) },
    413: responseRef('PayloadTooLarge'),
    429: {
      description: 'Past a limit; wait `Retry-After` seconds.',
      headers: { 'Retry-After': headerRef('Retry-After') },
      content: errorContent(errorExamples(tooMany)),
    },
    500: responseRef('InternalError'),
  };
}

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
  openapi: (): Operation => {
    const refused = (code: string) => ({ summary: code, value: { valid: false, code } });
    return {
      operationId: 'validateKey',
      tags: ['Loader'],
      summary: "Check a buyer's key",
      description: `Called by the script's loader at every execution, with no bearer token. Answers 200 for every well-formed request, whatever the key's state: \`valid: true\` counts one use; a refusal counts none. When several refusals apply, revoked wins over banned, which wins over expired, then HWID locked, then over-limit; a banned key's answer carries the publisher's \`reason\`; an unknown key, a key of another project and an unknown project are all \`KEY_INVALID\`. After a revoke or bulk revoke answered 200, every later check of those keys answers \`KEY_REVOKED\`. Limits: ${LOADER_LIMITS.perKeyPerMinute} checks per minute per key, ${LOADER_LIMITS.perAddressPerMinute} per client address (an IPv6 client is its /64) and ${ADDRESS_COUNTING.invalidKeysPerMinute} unknown keys per address; past them, 429 with \`Retry-After\`. In AWS the loader routes are served at the stack's \`LoaderUrl\` output (their own HTTP API) or the custom domain's base URL; that API's own throttle answers 429 \`{"message":"Too Many Requests"}\` without \`Retry-After\`.`,
      security: [],
      parameters: [],
      requestBody: {
        required: true,
        description: `The key check. JSON, \`Content-Type: application/json\`, at most ${MAX_BODY_BYTES / 1024} KB. Fields not listed are ignored.`,
        content: {
          [JSON_TYPE]: {
            schema: schemaRef('LoaderCheckRequest'),
            examples: {
              check: {
                summary: 'A check',
                value: { project_id: EXAMPLE.projectId, key: 'sdk_7Qm2vYcJ0sX5kR9uWb3nHf1LtA8eDgZo', fingerprint: EXAMPLE_FINGERPRINT, executor: 'Wave' },
              },
            },
          },
        },
      },
      responses: {
        200: {
          description: 'Whether the key may run.',
          content: {
            [JSON_TYPE]: {
              schema: schemaRef('LoaderCheckResponse'),
              examples: {
                valid: { summary: 'KEY_VALID', value: { valid: true, code: 'KEY_VALID', key_id: EXAMPLE.keyId, expires_at: 1766380800, uses_left: 41 } },
                revoked: refused('KEY_REVOKED'),
                banned: { summary: 'KEY_BANNED', value: { valid: false, code: 'KEY_BANNED', reason: 'Shared the key in a public server' } },
                expired: refused('KEY_EXPIRED'),
                hwid_locked: refused('KEY_HWID_LOCKED'),
                over_limit: refused('KEY_OVER_LIMIT'),
                invalid: refused('KEY_INVALID'),
              },
            },
          },
        },
        ...keyCheckFailures(),
      },
    };
  },
});
