/** The parts of an OpenAPI 3.1 document this API's document uses, and the references between them. */

export type JsonSchema = { [keyword: string]: unknown };
export type Ref = { $ref: string };
export type Examples = Record<string, { summary: string; value: unknown }>;
export interface MediaType {
  schema: JsonSchema;
  examples?: Examples;
}
export interface Header {
  description: string;
  schema: JsonSchema;
  example: unknown;
}
export interface ResponseObject {
  description: string;
  headers?: Record<string, Ref>;
  /** Absent for a response without a body (a 304). */
  content?: Record<string, MediaType>;
}
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description: string;
  schema: JsonSchema;
  example?: unknown;
}
export interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  security: Record<string, string[]>[];
  parameters: (Parameter | Ref)[];
  requestBody?: { required: true; description: string; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject | Ref>;
}
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; summary: string; description: string };
  servers: { url: string; description: string; variables?: Record<string, { default: string; description: string }> }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: 'http'; scheme: 'bearer'; description: string }>;
    parameters: Record<string, Parameter>;
    headers: Record<string, Header>;
    schemas: Record<string, JsonSchema>;
    responses: Record<string, ResponseObject>;
  };
}

export const SECURITY = [{ bearerAuth: [] }];
export const JSON_TYPE = 'application/json';
export const schemaRef = (name: string): Ref => ({ $ref: `#/components/schemas/${name}` });
export const responseRef = (name: string): Ref => ({ $ref: `#/components/responses/${name}` });
export const headerRef = (name: string): Ref => ({ $ref: `#/components/headers/${name}` });
