import { type DomainError, type DomainErrorName, RateLimited } from '#domain/errors';

/**
 * Every domain error's HTTP status (spec §7's table), in one place: the handlers answer with it and the OpenAPI
 * document (lambdas/http/openapi/) describes each operation's failures from it.
 */
export const ERROR_STATUSES = {
  InvalidInput: { status: 400, description: 'The request is invalid; `error` says what to fix.' },
  Unauthenticated: { status: 401, description: 'Missing or invalid API token.' },
  ScopeMissing: { status: 403, description: 'The token has the read scope and this operation writes; `error` names the scope it needs.' },
  RouteNotAllowed: { status: 403, description: 'The token was created for named routes only and this is not one of them; `error` names them.' },
  TokenTooWide: { status: 403, description: 'The token asked for would reach further than the one the session was opened with; `error` says how.' },
  TokenLimitReached: { status: 403, description: 'The owner has as many working tokens as allowed; `error` names the limit.' },
  PlanNotAllowed: { status: 403, description: 'The project is not on the Business plan.' },
  ProjectNotFound: { status: 404, description: 'The project does not exist or is not yours (the same answer, so ids cannot be enumerated).' },
  KeyNotFound: { status: 404, description: 'No key with this id in the project.' },
  VersionNotFound: { status: 404, description: 'No version with this id in the project.' },
  BlacklistEntryNotFound: { status: 404, description: 'No blacklist entry with this id in the project.' },
  RateLimited: { status: 429, description: 'Over the rate limit; wait `Retry-After` seconds.' },
} as const satisfies Record<DomainErrorName, { status: number; description: string }>;

export const statusOf = (error: DomainError): number => ERROR_STATUSES[error.name].status;

/** Headers a failure adds to its answer: when to try again, for a refusal that passes. */
export function errorHeadersOf(error: DomainError): Record<string, string> {
  return error instanceof RateLimited ? { 'Retry-After': String(error.retryAfterSeconds) } : {};
}
