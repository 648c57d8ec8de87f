import type { ScopeNeed, TokenScope } from './token-model';

/**
 * Failures a caller can act on, as the domain names them; `message` says what to fix. The domain knows nothing
 * of HTTP: `lambdas/http/error-statuses.ts` maps each kind to its status (and the OpenAPI document reads the same
 * table). Anything thrown that is not a DomainError is a failure on the service side.
 */
export abstract class DomainError extends Error {
  abstract override readonly name: DomainErrorName;
}

/** Unknown project and project of another owner read the same, so project ids cannot be enumerated (spec §5). */
export const PROJECT_NOT_FOUND = 'Project not found';

/** A missing field, a bad format, malformed JSON (spec §7). */
export class InvalidInput extends DomainError {
  override readonly name = 'InvalidInput';
}

/** No caller established: the request never passed the token check. */
export class Unauthenticated extends DomainError {
  override readonly name = 'Unauthenticated';
  constructor() {
    super('Missing or invalid API token');
  }
}

/** A read token on a route that writes (the token's scope is fixed when it is created in the dashboard). */
export class ScopeMissing extends DomainError {
  override readonly name = 'ScopeMissing';
  constructor(held: TokenScope, need: ScopeNeed) {
    super(`This token has the ${held} scope; ${need.doing} needs the ${need.scope} scope. Use a token created with --scope ${need.scope}.`);
  }
}

export class RouteNotAllowed extends DomainError {
  override readonly name = 'RouteNotAllowed';
  constructor(routes: readonly string[], need: ScopeNeed) {
    super(`This token may call only ${routes.join(', ')}; ${need.doing} is not one of them. Use a token created without --routes, or with this route.`);
  }
}

/** A token asked of a session (the console's Tokens page) that would reach further than the session's own token. */
export class TokenTooWide extends DomainError {
  override readonly name = 'TokenTooWide';
  constructor(wider: string) {
    super(`A new token may reach no further than the token this session was opened with, and this one would reach ${wider}`);
  }
}

/** One token too many for its owner, or for the account's API keys: `message` names the limit and what to do. */
export class TokenLimitReached extends DomainError {
  override readonly name = 'TokenLimitReached';
}

export class ProjectNotFound extends DomainError {
  override readonly name = 'ProjectNotFound';
  constructor() {
    super(PROJECT_NOT_FOUND);
  }
}

/** Spec §1: the API requires a Business plan. */
export class PlanNotAllowed extends DomainError {
  override readonly name = 'PlanNotAllowed';
  constructor(projectId: string, plan: string) {
    super(`This API requires a Business plan; project ${projectId} is on the ${plan} plan. Upgrade the project in the dashboard.`);
  }
}

export class KeyNotFound extends DomainError {
  override readonly name = 'KeyNotFound';
  constructor(keyId: string) {
    super(`Key ${keyId} not found in this project`);
  }
}

/** An order id reused with another body: the keys it issued are not what this request asks for. */
export class OrderConflict extends InvalidInput {
  constructor(orderId: string) {
    super(
      `order_id "${orderId}" cannot be used with this token and body: an order is repeated only by the token that placed it, with the same body; use a new order_id`,
    );
  }
}

export class OrderRepeatClosed extends InvalidInput {
  constructor(orderId: string, windowSeconds: number) {
    super(`order_id "${orderId}" was placed more than ${windowSeconds / 3600} hours ago and can no longer be repeated; use a new order_id`);
  }
}

export class VersionNotFound extends DomainError {
  override readonly name = 'VersionNotFound';
  constructor(versionId: string) {
    super(`Version ${versionId} not found in this project`);
  }
}

/** No blacklist entry with this id in the project (another project's entry reads the same). */
export class BlacklistEntryNotFound extends DomainError {
  override readonly name = 'BlacklistEntryNotFound';
  constructor(entryId: string) {
    super(`Blacklist entry ${entryId} not found in this project`);
  }
}

/** Over a limit, which `message` names (spec §8's is RATE_LIMIT_MESSAGE); `retryAfterSeconds` is when the next window opens. */
export class RateLimited extends DomainError {
  override readonly name = 'RateLimited';
  constructor(
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
  }
}

export type DomainErrorName =
  | 'InvalidInput'
  | 'RouteNotAllowed'
  | 'TokenTooWide'
  | 'TokenLimitReached'
  | 'Unauthenticated'
  | 'ScopeMissing'
  | 'ProjectNotFound'
  | 'PlanNotAllowed'
  | 'KeyNotFound'
  | 'VersionNotFound'
  | 'BlacklistEntryNotFound'
  | 'RateLimited';
