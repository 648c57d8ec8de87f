import { expect, it } from 'vitest';
import { hashToken, newApiToken, tokenIdOf } from '#domain/tokens';
import { forEachImplementation, OWNER_ID, type StoreWorld } from './subjects';

/** TokenStore (lambdas/domain/ports.ts): MemoryStores and DynamoTokenStore, one contract. */

forEachImplementation('stores', (world: () => StoreWorld) => {
  it('finds a token by its hash: whose it is, its id and its scope', async () => {
    const token = newApiToken();
    await world().addToken(OWNER_ID, token, 'read');
    expect(await world().tokens.findToken(hashToken(token))).toEqual({ ownerId: OWNER_ID, tokenId: tokenIdOf(hashToken(token)), scope: 'read' });
  });

  it('finds the limits of a limited token', async () => {
    const token = newApiToken();
    await world().addToken(OWNER_ID, token, 'write', { projectId: 'prj_limited', routes: ['GET /v1/projects/{id}/keys'] });
    expect(await world().tokens.findToken(hashToken(token))).toEqual({
      ownerId: OWNER_ID,
      tokenId: tokenIdOf(hashToken(token)),
      scope: 'write',
      projectId: 'prj_limited',
      routes: ['GET /v1/projects/{id}/keys'],
    });
  });

  it('finds no token that was never stored', async () => {
    expect(await world().tokens.findToken(hashToken(newApiToken()))).toBeUndefined();
  });

  it('finds a token no more once it is revoked', async () => {
    const token = newApiToken();
    await world().addToken(OWNER_ID, token, 'write');
    await world().revokeToken(token);
    expect(await world().tokens.findToken(hashToken(token))).toBeUndefined();
  });
});
