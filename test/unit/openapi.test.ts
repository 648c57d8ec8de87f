import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { GATEWAY_RESPONSES } from '#http/gateway-responses';
import { MAX_BODY_BYTES } from '#http/middlewares';
import { buildOpenApiDocument, OPENAPI_PATH, serializeOpenApiDocument } from '#http/openapi/document';
import type { JsonSchema } from '#http/openapi/types';
import { DISCORD_ROUTE, SCRIPT_ROUTE, SHOP_ROUTE, VALIDATE_ROUTE } from '#http/public-routes';
import { ALL_ROUTES, ROUTES } from '#http/routes';
import { LoaderScriptRefused, REFUSAL_CODES } from '#schemas/loader';
import { RevokeBulkBody } from '#schemas/requests';
import { OpenApiValidator } from '../../scripts/openapi-validator';

const document = buildOpenApiDocument();
const validator = new OpenApiValidator(document);
const operations = ROUTES.map((route) => ({ route, operation: document.paths[route.path]?.[route.method.toLowerCase()] }));

/** Every `{"$ref": ...}` target in the document. */
function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => (key === '$ref' && typeof child === 'string' ? [child] : refsIn(child)));
}

function resolvePointer(ref: string): unknown {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((node, segment) => (node as Record<string, unknown> | undefined)?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')], document);
}

/** Every example value in the document beside the schema it illustrates. */
function examplesWithSchemas(): { where: string; schema: JsonSchema; value: unknown }[] {
  const found: { where: string; schema: JsonSchema; value: unknown }[] = [];
  const visitMedia = (where: string, media: { schema: JsonSchema; examples?: Record<string, { value: unknown }> } | undefined) => {
    for (const [name, example] of Object.entries(media?.examples ?? {}))
      found.push({ where: `${where} example ${name}`, schema: media!.schema, value: example.value });
  };
  for (const { route, operation } of operations) {
    const where = `${route.method} ${route.path}`;
    visitMedia(`${where} request`, operation?.requestBody?.content['application/json']);
    for (const [status, response] of Object.entries(operation?.responses ?? {})) {
      if (!('$ref' in response)) visitMedia(`${where} ${status}`, response.content?.['application/json']);
    }
  }
  for (const [name, response] of Object.entries(document.components.responses)) visitMedia(`responses.${name}`, response.content?.['application/json']);
  for (const [name, parameter] of Object.entries(document.components.parameters)) {
    found.push({ where: `parameters.${name}`, schema: parameter.schema, value: parameter.example });
  }
  for (const [name, header] of Object.entries(document.components.headers))
    found.push({ where: `headers.${name}`, schema: header.schema, value: header.example });
  return found;
}

describe('openapi.json', () => {
  it('is what npm run openapi generates from the current schemas', () => {
    const checkedIn = readFileSync(OPENAPI_PATH, 'utf8');
    expect(checkedIn === serializeOpenApiDocument(document), 'openapi.json is out of date: run npm run openapi').toBe(true);
  });

  it('is OpenAPI 3.1 with a global bearer security scheme', () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
  });

  it('describes exactly the deployed routes, each with its method and a unique operationId', () => {
    for (const { route, operation } of operations) expect(operation, `${route.method} ${route.path}`).toBeDefined();
    const documented = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    // Discord's interactions endpoint is Discord's contract (docs/discord.md), the shop receiver each shop's (docs/selling-keys.md).
    const deployed = ALL_ROUTES.filter((route) => route !== DISCORD_ROUTE && route !== SHOP_ROUTE);
    expect(documented.sort()).toEqual(deployed.map((route) => `${route.method} ${route.path}`).sort());
    const ids = operations.map(({ operation }) => operation?.operationId);
    expect(new Set(ids).size).toBe(ROUTES.length);
  });

  it('documents the script fetch: public, a text/plain 200 and a 304 with the version headers, a 403 example per refusal code in the refusal schema', () => {
    const fetchScript = document.paths[SCRIPT_ROUTE.path]?.[SCRIPT_ROUTE.method.toLowerCase()];
    expect(fetchScript).toMatchObject({ tags: ['Loader'], security: [] });
    const responses = fetchScript?.responses as Record<
      string,
      { headers?: object; content?: Record<string, { examples?: Record<string, { value: unknown }> }> }
    >;
    expect(Object.keys(responses[200]?.content ?? {})).toEqual(['text/plain; charset=utf-8']);
    expect(responses[304]?.content).toBeUndefined();
    for (const status of [200, 304])
      expect(Object.keys(responses[status]?.headers ?? {})).toEqual(['ETag', 'X-Version-Id', 'X-Version-Number', 'X-Script-SHA256']);
    const refusals = Object.values(responses[403]?.content?.['application/json']?.examples ?? {}).map((example) => LoaderScriptRefused.parse(example.value));
    expect(refusals.map((refusal) => refusal.code)).toEqual([...REFUSAL_CODES]);
    expect(responses).not.toHaveProperty('401');
  });

  it('documents the loader check under its own tag, with no security, every refusal code and the 429 with Retry-After', () => {
    const loader = document.paths[VALIDATE_ROUTE.path]?.[VALIDATE_ROUTE.method.toLowerCase()];
    expect(loader).toMatchObject({ tags: ['Loader'], security: [], parameters: [] });
    const examples =
      (loader!.responses[200] as { content: Record<string, { examples: Record<string, { value: { code: string } }> }> }).content['application/json']
        ?.examples ?? {};
    expect(
      Object.values(examples)
        .map((example) => example.value.code)
        .sort(),
    ).toEqual(['KEY_BANNED', 'KEY_EXPIRED', 'KEY_HWID_LOCKED', 'KEY_INVALID', 'KEY_OVER_LIMIT', 'KEY_REVOKED', 'KEY_VALID']);
    expect(loader?.responses[429]).toMatchObject({ headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } });
    expect(loader?.responses).not.toHaveProperty('401');
  });

  it('requires the bearer token on every operation and takes the project id from the path', () => {
    for (const { route, operation } of operations) {
      expect(operation?.security, route.path).toEqual([{ bearerAuth: [] }]);
      expect(operation?.parameters, route.path).toContainEqual({ $ref: '#/components/parameters/ProjectId' });
    }
    expect(document.components.parameters.ProjectId).toMatchObject({ name: 'id', in: 'path', required: true });
  });

  it('documents 200 and every error status the handlers and API Gateway produce, with the error body', () => {
    const gatewayStatuses = Object.values(GATEWAY_RESPONSES).flatMap((response) => (response.status === undefined ? [] : [response.status]));
    for (const { route, operation } of operations) {
      const statuses = Object.keys(operation?.responses ?? {}).map(Number);
      const handlerStatuses = [400, 401, 403, 404, 429, 500];
      const expected = [200, ...handlerStatuses, ...gatewayStatuses.filter((status) => route.method === 'POST' || status !== 413)];
      expect(statuses, `${route.method} ${route.path}: no 415, a status the spec's table does not have`).not.toContain(415);
      expect(statuses, `${route.method} ${route.path}`).toEqual(expect.arrayContaining(expected));
      for (const status of statuses.filter((s) => s >= 400)) {
        expect(validator.responseSchema(route.method, route.path, status), `${route.path} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
      }
    }
  });

  it('documents the list-keys paging limits as integer query parameters', () => {
    const parameters = document.paths['/v1/projects/{id}/keys']?.get?.parameters ?? [];
    expect(parameters).toContainEqual(
      expect.objectContaining({ name: 'limit', in: 'query', required: false, schema: { default: 50, type: 'integer', minimum: 1, maximum: 100 } }),
    );
    expect(parameters).toContainEqual(
      expect.objectContaining({ name: 'offset', in: 'query', required: false, schema: expect.objectContaining({ default: 0, type: 'integer', minimum: 0 }) }),
    );
  });

  it('states the rate limit headers, the watermark pattern and the body size limit', () => {
    expect(document.components.responses.TooManyRequests?.headers).toEqual(
      expect.objectContaining({ 'Retry-After': expect.anything(), RateLimit: expect.anything(), 'RateLimit-Policy': expect.anything() }),
    );
    expect(Object.values(document.components.responses.TooManyRequests?.content?.['application/json']?.examples ?? {}).map((example) => example.value)).toEqual(
      [{ error: RATE_LIMIT_MESSAGE }],
    );
    expect(document.components.headers['RateLimit-Policy']?.example).toBe('"per-token";q=100;w=60');
    expect(document.components.schemas.RevokeBulkRequest).toMatchObject({ properties: { watermark: { type: 'string', pattern: '^[0-9a-f]{16}$' } } });
    expect(document.components.schemas.Key).toMatchObject({ properties: { watermark: { pattern: '^[0-9a-f]{16}$' } } });
    expect(document.info.description).toContain(`${MAX_BODY_BYTES / 1024} KB`);
    expect(document.info.description).toContain('100 requests per minute');
  });

  it('has no dangling $ref', () => {
    const refs = [...new Set(refsIn(document))];
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) expect(resolvePointer(ref), ref).toBeDefined();
  });

  it('has component schemas that are valid JSON Schema 2020-12 and compile with ajv', () => {
    const names = Object.keys(document.components.schemas);
    expect(names).toEqual(expect.arrayContaining(['Key', 'Version', 'Webhook', 'ErrorResponse', 'RevokeBulkRequest']));
    for (const name of names) {
      expect(validator.metaSchemaErrors(name), name).toEqual([]);
      expect(typeof validator.validator(name), name).toBe('function');
    }
  });

  it('has examples that match their own schemas', () => {
    const examples = examplesWithSchemas();
    expect(examples.length).toBeGreaterThan(30);
    for (const { where, schema, value } of examples) {
      const validate = validator.validator(schema);
      expect(validate(value) ? [] : validate.errors, where).toEqual([]);
    }
  });

  it('rejects what the handlers reject: a watermark with the WM_ prefix or uppercase hex', () => {
    const validate = validator.validator('RevokeBulkRequest');
    for (const watermark of ['WM_3f9a1c7e5b2d8046', '3F9A1C7E5B2D8046', '3f9a1c7e5b2d804', '3f9a1c7e5b2d80466']) {
      expect(RevokeBulkBody.safeParse({ watermark }).success, watermark).toBe(false);
      expect(validate({ watermark }), watermark).toBe(false);
    }
    expect(validate({ watermark: '3f9a1c7e5b2d8046' })).toBe(true);
  });
});
