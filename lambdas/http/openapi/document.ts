import { fileURLToPath } from 'node:url';
import { PROJECT_NOT_FOUND } from '#domain/errors';
import { RATE_LIMIT } from '#domain/rate-limit';
import { MAX_BODY_BYTES } from '#http/middlewares';
import { PUBLIC_ROUTES } from '#http/public-routes';
import { ROUTES } from '#http/routes';
import { PATH_ID_PATTERN, WATERMARK_PATTERN } from '#schemas/formats';
import { KEYS_PAGE } from '#schemas/requests';
import { EXAMPLE } from './examples';
import { ownerOperation } from './owner-operations';
import { PUBLIC_DOCS } from './public-docs';
import { sharedHeaders, sharedResponses } from './responses';
import { buildSchemas } from './schemas';
import { type OpenApiDocument, type Operation, SECURITY } from './types';

/**
 * The OpenAPI 3.1 description of the API, built from the route definitions the stack deploys (their zod schemas,
 * their operations), and the messages and limits the code uses, so the document cannot say something the service
 * does not do. `npm run openapi` writes it to openapi.json.
 */

const DESCRIPTION = `Manage a script-distribution project over HTTP: issue keys (for a shop or a bot, idempotent by order id), read, list and revoke them (one by id, or every key carrying a leaked watermark), ban and unban them with a reason the buyer reads, extend and edit them, reset a key's bound machines, list script versions and roll back, read webhook configurations.

- **Authentication**: every request sends \`Authorization: Bearer <API_TOKEN>\`; a missing, unknown or revoked token gets 401.
- **Token scopes**: a \`read\` token may call the GET operations only; on the operations that write (issue, edit, reset-hwid, ban, unban, extend, revoke, bulk revoke, rollback) it gets 403 naming the \`write\` scope it lacks. A \`write\` token (the default) may call them all.
- **Access**: a project is visible to its owner only (anyone else gets 404 \`${PROJECT_NOT_FOUND}\`), and must be on the Business plan (403 otherwise).
- **Rate limit**: ${RATE_LIMIT.requests} requests per minute per token, in fixed one-minute windows. Every answer carries \`RateLimit\` and \`RateLimit-Policy\`; a 429 carries \`Retry-After\` (seconds).
- **Pagination**: \`limit\` (default ${KEYS_PAGE.defaultLimit}, max ${KEYS_PAGE.maxLimit}) and \`offset\` (default ${KEYS_PAGE.defaultOffset}) on the key list.
- **Watermark**: exactly 16 lowercase hex characters (\`${WATERMARK_PATTERN.source}\`), the text after \`WM_\` in a leaked dump.
- **Bodies**: JSON with \`Content-Type: application/json\`, at most ${MAX_BODY_BYTES / 1024} KB (${MAX_BODY_BYTES} bytes). A JSON object sent with no \`Content-Type\` or with curl's default \`application/x-www-form-urlencoded\` is read as JSON too; an empty body is \`{}\`.
- **Errors**: always \`{"error": "..."}\`; failures on the service side add \`request_id\`.
- **Versioning**: the version is the path prefix \`/v1\`.`;

/** The document's paths: one operation per owner route, then one per public route that has one (not Discord's). */
function buildPaths(): OpenApiDocument['paths'] {
  const paths: OpenApiDocument['paths'] = {};
  const add = (route: { method: string; path: string }, operation: Operation) => {
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  };
  for (const route of ROUTES) add(route, ownerOperation(route));
  for (const route of PUBLIC_ROUTES) {
    const doc = PUBLIC_DOCS[route.entry];
    if (doc) add(route, doc());
  }
  return paths;
}

export function buildOpenApiDocument(): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Script Distribution Developer API',
      version: '1.0.0',
      summary: 'Keys, versions and webhooks of a script-distribution project.',
      description: DESCRIPTION,
    },
    servers: [
      {
        url: '{baseUrl}',
        description: 'The `ApiUrl` output of `cdk deploy` (the Loader routes: `LoaderUrl`), the custom domain, or the local stack of `npm start`.',
        variables: {
          baseUrl: { default: 'http://127.0.0.1:3000', description: 'Base URL without a trailing slash; the local stack listens on http://127.0.0.1:3000.' },
        },
      },
    ],
    security: SECURITY,
    tags: [
      { name: 'Keys', description: 'Issued keys: metadata, revocation one by one or by leaked watermark.' },
      { name: 'Versions', description: 'Script versions and the current-version pointer.' },
      { name: 'Webhooks', description: 'Webhook configurations (read-only; managed in the dashboard).' },
      { name: 'Stats', description: "The project's key checks and executions by hour or day." },
      { name: 'Blacklist', description: 'Buyers (a machine, a Discord user, an email hash) who get no new key, binding or redeem.' },
      {
        name: 'Loader',
        description:
          "The buyer's loader asks whether its key may run, or fetches the script it may run. Public: no bearer token. In AWS at the `LoaderUrl` output (or the custom domain), not at `ApiUrl`.",
      },
    ],
    paths: buildPaths(),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API token the dashboard issues (`sdt_…`); only its SHA-256 is stored.' },
      },
      parameters: {
        ProjectId: {
          name: 'id',
          in: 'path',
          required: true,
          description: 'Project identifier.',
          schema: { type: 'string', pattern: PATH_ID_PATTERN.source },
          example: EXAMPLE.projectId,
        },
        EntryId: {
          name: 'entry_id',
          in: 'path',
          required: true,
          description: 'Blacklist entry identifier (`blf_…`, `bld_…`, `ble_…`), as the blacklist list and the add call give it.',
          schema: { type: 'string', pattern: PATH_ID_PATTERN.source },
          example: 'bld_80351110224678912',
        },
        KeyId: {
          name: 'key_id',
          in: 'path',
          required: true,
          description: 'Key identifier (`key_…`), as the key list and the issue call give it.',
          schema: { type: 'string', pattern: PATH_ID_PATTERN.source },
          example: EXAMPLE.keyId,
        },
      },
      headers: sharedHeaders(),
      schemas: buildSchemas(ROUTES),
      responses: sharedResponses(),
    },
  };
}

/** Where `npm run openapi` writes the document: the repository root. */
export const OPENAPI_PATH = fileURLToPath(new URL('../../../openapi.json', import.meta.url));

/** The checked-in form: 2-space indent and a final newline, so regenerating an unchanged document is a no-op. */
export function serializeOpenApiDocument(document: OpenApiDocument = buildOpenApiDocument()): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
