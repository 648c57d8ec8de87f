import * as z from 'zod/mini';
import { RateLimited, ScopeMissing } from '#domain/errors';
import { RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { ERROR_STATUSES, statusOf } from '#http/error-statuses';
import { MAX_BODY_BYTES, TEXT_BODY_TYPE } from '#http/middlewares';
import type { Route } from '#http/routes';
import type { ErrorExample, OperationDoc } from './operation-doc';
import { OWNER_DOCS } from './owner-docs';
import { BODY_FAILS_WITH, EVERY_OPERATION_FAILS_WITH, errorContent, errorExamples, gatewayExamples } from './responses';
import {
  headerRef,
  JSON_TYPE,
  type JsonSchema,
  type Operation,
  type Parameter,
  type Ref,
  type ResponseObject,
  responseRef,
  SECURITY,
  schemaRef,
} from './types';

/** The query parameters, from the same schema the handler parses the query string with. */
function queryParameters(query: z.core.$ZodType, descriptions: Record<string, string> = {}): Parameter[] {
  // The handler sees strings; the output side carries the integer type, bounds and defaults a client needs.
  const parsed = z.toJSONSchema(query, { target: 'draft-2020-12', io: 'output' });
  const accepted = z.toJSONSchema(query, { target: 'draft-2020-12', io: 'input' });
  const required = new Set(Array.isArray(accepted.required) ? accepted.required : []);
  return Object.entries(parsed.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    description: descriptions[name] ?? name,
    schema: schema as JsonSchema,
  }));
}

/**
 * An operation's failures, grouped by the status ERROR_STATUSES gives each domain error, with the gateway's own
 * answers of the same status beside them; 401, 413, 429 and 5xx are shared components. A `write` route adds the 403
 * of a read-only token, with the service's own message for that route.
 */
function errorResponses(route: Route, doc: OperationDoc, hasJsonBody: boolean, hasBody: boolean): Record<string, ResponseObject | Ref> {
  const readOnlyToken: ErrorExample[] = route.access === 'write' ? [{ summary: 'Read-only token', error: new ScopeMissing('read', route.scope) }] : [];
  const failures = [...doc.errors, ...readOnlyToken, ...(hasJsonBody ? BODY_FAILS_WITH : []), ...EVERY_OPERATION_FAILS_WITH];
  const byStatus = new Map<number, ErrorExample[]>();
  for (const failure of failures) byStatus.set(statusOf(failure.error), [...(byStatus.get(statusOf(failure.error)) ?? []), failure]);
  const responses: Record<string, ResponseObject | Ref> = { 401: responseRef('Unauthorized') };
  for (const [status, examples] of [...byStatus].sort(([a], [b]) => a - b)) {
    if (status === statusOf(new RateLimited(1, RATE_LIMIT_MESSAGE))) continue;
    const fromGateway = gatewayExamples(status);
    const descriptions: string[] = [...new Set(examples.map(({ error }) => ERROR_STATUSES[error.name].description))];
    if (Object.keys(fromGateway).length > 0) descriptions.push('Or API Gateway refused the request itself.');
    responses[status] = { description: descriptions.join(' '), content: errorContent({ ...errorExamples(examples), ...fromGateway }) };
  }
  if (hasBody) responses[413] = responseRef('PayloadTooLarge');
  return { ...responses, 429: responseRef('TooManyRequests'), 500: responseRef('InternalError') };
}

/** An owner route's operation: its OperationDoc, with the parameters, body and failures its route implies. */
export function ownerOperation(route: Route): Operation {
  const doc = OWNER_DOCS[route.entry]();
  const hasJsonBody = 'body' in route && route.body !== undefined;
  const hasTextBody = 'textBody' in route && route.textBody !== undefined;
  const hasBody = hasJsonBody || hasTextBody;
  if (hasBody !== (doc.requestBody !== undefined))
    throw new Error(`${route.entry}: a route with a body documents it (requestBody in its .doc.ts), and only such a route`);
  const responses: Record<string, ResponseObject | Ref> = {
    200: {
      description: doc.ok.description,
      headers: { RateLimit: headerRef('RateLimit'), 'RateLimit-Policy': headerRef('RateLimit-Policy') },
      content: { [JSON_TYPE]: { schema: schemaRef(doc.ok.name), examples: { ok: { summary: doc.summary, value: doc.ok.example } } } },
    },
    ...errorResponses(route, doc, hasJsonBody, hasBody),
  };

  return {
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    description: doc.description,
    security: SECURITY,
    parameters: [
      { $ref: '#/components/parameters/ProjectId' },
      ...(route.path.includes('{key_id}') ? [{ $ref: '#/components/parameters/KeyId' }] : []),
      ...(route.path.includes('{entry_id}') ? [{ $ref: '#/components/parameters/EntryId' }] : []),
      ...queryParameters(route.query, doc.queryDescriptions),
    ],
    ...(doc.requestBody &&
      hasTextBody && {
        requestBody: {
          required: true,
          description: `${doc.requestBody.description} Text, \`Content-Type: text/plain; charset=utf-8\`.`,
          content: { [TEXT_BODY_TYPE]: { schema: { type: 'string' }, examples: doc.requestBody.examples } },
        },
      }),
    ...(doc.requestBody &&
      hasJsonBody && {
        requestBody: {
          required: true,
          description: `${doc.requestBody.description} JSON, \`Content-Type: application/json\`, at most ${MAX_BODY_BYTES / 1024} KB.`,
          content: { [JSON_TYPE]: { schema: schemaRef(doc.requestBody.name), examples: doc.requestBody.examples } },
        },
      }),
    responses,
  };
}
