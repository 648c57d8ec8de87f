import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import type { JsonSchema, OpenApiDocument } from '#http/openapi/types';

/** The document's schemas live under `components`, which is no JSON Schema keyword; this base URI names the document. */
const DOCUMENT_ID = 'urn:sdapi:openapi';

type Ref = { $ref: string };
type ResponseLike = { content?: Record<string, { schema: JsonSchema; examples?: Record<string, { value: unknown }> }> } | Ref;

/**
 * Validators for the OpenAPI document's JSON Schemas (2020-12, through ajv), so tests can hold real answers
 * of the service against what the document promises.
 */
export class OpenApiValidator {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    this.ajv.addKeyword({ keyword: 'components' });
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: document.components.schemas } });
  }

  /** A validator for a schema of the document: a component name, or a schema that may `$ref` components. */
  validator(schema: string | JsonSchema): ValidateFunction {
    const root = typeof schema === 'string' ? { $ref: `#/components/schemas/${schema}` } : schema;
    const key = JSON.stringify(root);
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebase(root));
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** Meta-schema errors of a component schema, or an empty list when it is valid JSON Schema 2020-12. */
  metaSchemaErrors(name: string): string[] {
    const schema = this.document.components.schemas[name];
    if (!schema) return [`no component schema ${name}`];
    return this.ajv.validateSchema(schema) ? [] : (this.ajv.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }

  /** The response schema the document gives for `method path` answering `status`. */
  responseSchema(method: string, path: string, status: number): JsonSchema {
    const operation = this.document.paths[path]?.[method.toLowerCase()];
    if (!operation) throw new Error(`The document has no operation ${method} ${path}`);
    const response = operation.responses[String(status)];
    if (!response) throw new Error(`${method} ${path} documents no ${status} response`);
    const schema = this.resolveResponse(response).content?.['application/json']?.schema;
    if (!schema) throw new Error(`${method} ${path} ${status} has no JSON body schema`);
    return schema;
  }

  /** The `error` texts of the documented examples of `method path` answering `status`. */
  documentedErrors(method: string, path: string, status: number): string[] {
    const response = this.document.paths[path]?.[method.toLowerCase()]?.responses[String(status)];
    const examples = response ? this.resolveResponse(response).content?.['application/json']?.examples : undefined;
    return Object.values(examples ?? {}).flatMap(({ value }) => {
      const error = (value as { error?: unknown } | null)?.error;
      return typeof error === 'string' ? [error] : [];
    });
  }

  /** Why `body` does not match the documented `status` answer of `method path`; empty when it matches. */
  responseErrors(method: string, path: string, status: number, body: unknown): string[] {
    const validate = this.validator(this.responseSchema(method, path, status));
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message} (${e.schemaPath})`);
  }

  private resolveResponse(response: ResponseLike): Exclude<ResponseLike, Ref> {
    if (!('$ref' in response)) return response;
    const name = response.$ref.replace('#/components/responses/', '');
    const target = this.document.components.responses[name];
    if (!target) throw new Error(`Dangling response reference ${response.$ref}`);
    return target;
  }
}

/** Point the document-relative references of a schema at the registered document. */
function rebase(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`)) as JsonSchema;
}
