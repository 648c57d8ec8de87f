import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hashToken, tokenIdOf } from '#domain/tokens';
import { UNAUTHORIZED, wholeApiArn } from '#functions/authorizer';
import { captureOutput, memoryAuthorizer } from '#test-support/api-harness';
import { authorizerEvent, methodArn, TEST_API_ID, TEST_STAGE } from '#test-support/fixtures';
import { MemoryStores } from '#test-support/memory-stores';

const TOKEN = 'sdt_Zm9vYmFyYmF6cXV4LXRoaXMtaXMtYS10ZXN0LXRva2Vu';
const OWNER = 'own_4f1c2a';
const READ_TOKEN = 'sdt_cmVhZC1vbmx5LXRva2VuLWZvci10aGUtc2NvcGUtdGVzdA';

let tokens: MemoryStores;
let authorizer: ReturnType<typeof memoryAuthorizer>;

beforeEach(() => {
  tokens = new MemoryStores();
  tokens.addToken(OWNER, TOKEN);
  authorizer = memoryAuthorizer(tokens);
});
afterEach(() => vi.restoreAllMocks());

describe('authorizer (spec §5)', () => {
  it('allows a known token on the whole API and passes the owner, the token hash, the token id and its scope on', async () => {
    const result = await authorizer(authorizerEvent(`Bearer ${TOKEN}`, methodArn('POST', '/v1/projects/prj_1/keys/revoke')));
    expect(result).toEqual({
      principalId: OWNER,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `arn:aws:execute-api:us-east-1:123456789012:${TEST_API_ID}/${TEST_STAGE}/*` }],
      },
      context: { ownerId: OWNER, tokenHash: hashToken(TOKEN), tokenId: tokenIdOf(hashToken(TOKEN)), scope: 'write', projectId: '', routes: '' },
      usageIdentifierKey: hashToken(TOKEN),
    });
  });

  it('allows a read token on the whole API too, with its scope in the context for the handlers to enforce', async () => {
    tokens.addToken(OWNER, READ_TOKEN, 'read');
    const result = await authorizer(authorizerEvent(`Bearer ${READ_TOKEN}`, methodArn('POST', '/v1/projects/prj_1/keys/revoke')));
    expect(result.policyDocument.Statement).toEqual([
      expect.objectContaining({ Effect: 'Allow', Resource: `arn:aws:execute-api:us-east-1:123456789012:${TEST_API_ID}/${TEST_STAGE}/*` }),
    ]);
    expect(result.context).toMatchObject({ tokenId: tokenIdOf(hashToken(READ_TOKEN)), scope: 'read' });
  });

  it('asks the token store for the SHA-256 of the token only', async () => {
    const findToken = vi.spyOn(tokens, 'findToken');
    await authorizer(authorizerEvent(`Bearer ${TOKEN}`));
    expect(findToken.mock.calls).toEqual([[hashToken(TOKEN)]]);
    expect(JSON.stringify(findToken.mock.calls)).not.toContain(TOKEN);
  });

  it('accepts the Bearer scheme in any case', async () => {
    expect((await authorizer(authorizerEvent(`bearer ${TOKEN}`))).principalId).toBe(OWNER);
  });

  it('refuses an unknown token with Unauthorized, which API Gateway answers with 401', async () => {
    await expect(authorizer(authorizerEvent('Bearer sdt_unknown'))).rejects.toThrow(UNAUTHORIZED);
    expect(UNAUTHORIZED).toBe('Unauthorized');
  });

  it.each(['', 'Bearer', `Basic ${TOKEN}`, TOKEN, `Bearer ${TOKEN} extra`, `Bearer ${'a'.repeat(600)}`, 'Bearer a\u0000b'])(
    'refuses the malformed header %j with Unauthorized without asking the token store',
    async (header) => {
      const findToken = vi.spyOn(tokens, 'findToken');
      await expect(authorizer(authorizerEvent(header))).rejects.toThrow(UNAUTHORIZED);
      expect(findToken).not.toHaveBeenCalled();
    },
  );

  it('never writes the raw token to the logs, only a prefix of its hash', async () => {
    const output = captureOutput();
    const unknown = 'sdt_this-token-must-never-be-logged-0123456789';
    await expect(authorizer(authorizerEvent(`Bearer ${unknown}`))).rejects.toThrow(UNAUTHORIZED);
    await authorizer(authorizerEvent(`Bearer ${TOKEN}`));
    expect(output.text()).toContain('Unknown API token');
    expect(output.text()).toContain(hashToken(unknown).slice(0, 8));
    expect(output.text()).not.toContain(unknown);
    expect(output.text()).not.toContain(hashToken(unknown));
    expect(output.text()).not.toContain(TOKEN);
  });

  it('fails (API Gateway answers 500) rather than allowing when the token cannot be looked up, and the error carries no token', async () => {
    vi.spyOn(tokens, 'findToken').mockRejectedValue(new Error('table unavailable'));
    const outcome = authorizer(authorizerEvent(`Bearer ${TOKEN}`));
    await expect(outcome).rejects.toThrow('table unavailable');
    await expect(outcome).rejects.not.toThrow(TOKEN);
  });
});

describe('wholeApiArn', () => {
  it('widens a method ARN to every method and path of the stage', () => {
    expect(wholeApiArn('arn:aws:execute-api:eu-west-1:111122223333:abc123/prod/GET/v1/projects/prj_1/keys')).toBe(
      'arn:aws:execute-api:eu-west-1:111122223333:abc123/prod/*',
    );
  });
});
