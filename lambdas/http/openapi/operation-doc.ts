import * as z from 'zod/mini';
import { type DomainError, InvalidInput } from '#domain/errors';
import { NoQuery } from '#schemas/requests';
import type { Examples } from './types';

/** A domain error as an example of the answer it gets: its own message, under a summary. */
export interface ErrorExample {
  summary: string;
  error: DomainError;
}

/**
 * What an owner route's OpenAPI operation says beyond what its route already does. The query parameters (from the
 * route's `query`), the request body's schema (its `body`), the path parameters, the 403 of a read-only token on a
 * `write` route and the failures every operation shares are added from the route (openapi/owner-operations.ts).
 */
export interface OperationDoc {
  operationId: string;
  tag: 'Keys' | 'Versions' | 'Webhooks' | 'Stats' | 'Blacklist';
  summary: string;
  description: string;
  /** What each query parameter means; a parameter without a line is described by its name. */
  queryDescriptions?: Record<string, string>;
  /** The route's JSON body, documented as the component `name` (its schema is the route's `body`). */
  requestBody?: { name: string; description: string; examples: Examples };
  /** The 200 answer: `schema` becomes the component `name`. */
  ok: { name: string; schema: z.core.$ZodType; description: string; example: unknown };
  /** The failures this operation's own rule and input can produce, besides those of every operation. */
  errors: ErrorExample[];
}

/** The message the schema gives the first problem of `input`: what the service answers in its 400. */
export function firstIssue(schema: z.core.$ZodType, input: unknown): string {
  const result = z.safeParse(schema, input);
  if (result.success) throw new Error(`example input ${JSON.stringify(input)} unexpectedly passed validation`);
  return result.error.issues[0]?.message ?? 'Invalid request';
}

/** The 400 `input` gets from `schema`, under a summary. */
export const invalid = (summary: string, schema: z.core.$ZodType, input: unknown): ErrorExample => ({
  summary,
  error: new InvalidInput(firstIssue(schema, input)),
});

/** The 400 of a query parameter a route without parameters does not know. */
export const unknownQuery = (): ErrorExample[] => [invalid('Unknown query parameter', NoQuery, { page: '2' })];
