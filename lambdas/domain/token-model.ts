/**
 * What a token is and may do, shared by the token rules (tokens.ts), the errors, the model and the storage ports: a
 * leaf module (it imports nothing), so none of them imports the rules for it.
 */

/**
 * What a token may do (spec §5 leaves scopes open): `read` calls the three GET endpoints only, `write` (the
 * default) calls all six. A token keeps the scope it was created with.
 */
export const TOKEN_SCOPES = ['read', 'write'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * What a token may reach besides its scope allows: one project, and named routes (their entries, as in
 * lambdas/http/routes.ts). A shop's delivery hook gets `issue-keys` on its project and nothing else, so a leak of
 * it can neither read nor revoke keys, nor touch another project. Absent: every project and route of the owner.
 */
export interface TokenLimits {
  projectId?: string;
  routes?: readonly string[];
}

/** What the authorizer learns from a token: whose it is, which one, what it may do and where. */
export interface TokenGrant extends TokenLimits {
  ownerId: string;
  tokenId: string;
  scope: TokenScope;
}

/** A new token as the table keeps it: its grant, the hash it is found by, and when it was made. */
export interface NewToken extends TokenGrant {
  tokenHash: string;
  createdAt: number;
}

/** What a route needs of the caller's token, and what the route does, in words for the 403 of a token without it. */
export interface ScopeNeed {
  scope: TokenScope;
  doing: string;
  /** The route's entry, for a token limited to named routes. */
  route?: string;
}
