import { Logger } from '@aws-lambda-powertools/logger';
import { InternalServerError } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UNAUTHORIZED, createAuthorizer, handler, wholeApiArn } from '#api/authorizer';
import type { TokenStore } from '#domain/ports';
import { hashToken } from '#domain/tokens';
import { keyOf } from '#store/layout';
import { TEST_API_ID, TEST_STAGE, authorizerEvent, methodArn } from '#test-support/fixtures';
import { captureOutput } from './mock-table';

const TOKEN = 'sdt_Zm9vYmFyYmF6cXV4LXRoaXMtaXMtYS10ZXN0LXRva2Vu';
const OWNER = 'own_4f1c2a';

const ddb = mockClient(DynamoDBDocumentClient);

beforeEach(() => {
  process.env.TABLE_NAME = 'developer-api-test';
  ddb.reset();
  ddb.on(GetCommand).resolves({});
  ddb.on(GetCommand, { Key: keyOf.token(hashToken(TOKEN)) }).resolves({ Item: { ...keyOf.token(hashToken(TOKEN)), entity: 'TOKEN', ownerId: OWNER } });
});
afterEach(() => vi.restoreAllMocks());

describe('authorizer (spec §5)', () => {
  it('allows a known token on the whole API and passes the owner and the token hash on', async () => {
    const result = await handler(authorizerEvent(`Bearer ${TOKEN}`, methodArn('POST', '/v1/projects/prj_1/keys/revoke')));
    expect(result).toEqual({
      principalId: OWNER,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `arn:aws:execute-api:us-east-1:123456789012:${TEST_API_ID}/${TEST_STAGE}/*` }],
      },
      context: { ownerId: OWNER, tokenHash: hashToken(TOKEN) },
      usageIdentifierKey: hashToken(TOKEN),
    });
  });

  it('looks the token up by its SHA-256 only', async () => {
    await handler(authorizerEvent(`Bearer ${TOKEN}`));
    const lookups = ddb.commandCalls(GetCommand).map((call) => call.args[0].input.Key);
    expect(lookups).toEqual([keyOf.token(hashToken(TOKEN))]);
    expect(JSON.stringify(lookups)).not.toContain(TOKEN);
  });

  it('accepts the Bearer scheme in any case', async () => {
    expect((await handler(authorizerEvent(`bearer ${TOKEN}`))).principalId).toBe(OWNER);
  });

  it('refuses an unknown token with Unauthorized, which API Gateway answers with 401', async () => {
    await expect(handler(authorizerEvent('Bearer sdt_unknown'))).rejects.toThrow(UNAUTHORIZED);
    expect(UNAUTHORIZED).toBe('Unauthorized');
  });

  it.each(['', 'Bearer', `Basic ${TOKEN}`, TOKEN, `Bearer ${TOKEN} extra`, `Bearer ${'a'.repeat(600)}`, 'Bearer a\u0000b'])(
    'refuses the malformed header %j with Unauthorized without reading the table',
    async (header) => {
      await expect(handler(authorizerEvent(header))).rejects.toThrow(UNAUTHORIZED);
      expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
    },
  );

  it('never writes the raw token to the logs, only a prefix of its hash', async () => {
    const output = captureOutput();
    const unknown = 'sdt_this-token-must-never-be-logged-0123456789';
    await expect(handler(authorizerEvent(`Bearer ${unknown}`))).rejects.toThrow(UNAUTHORIZED);
    await handler(authorizerEvent(`Bearer ${TOKEN}`));
    expect(output.text()).toContain('Unknown API token');
    expect(output.text()).toContain(hashToken(unknown).slice(0, 8));
    expect(output.text()).not.toContain(unknown);
    expect(output.text()).not.toContain(hashToken(unknown));
    expect(output.text()).not.toContain(TOKEN);
  });

  it('fails (API Gateway answers 500) rather than allowing when the token cannot be looked up, and the error carries no token', async () => {
    ddb.on(GetCommand).rejects(new InternalServerError({ message: 'table unavailable', $metadata: {} }));
    const outcome = handler(authorizerEvent(`Bearer ${TOKEN}`));
    await expect(outcome).rejects.toThrow('table unavailable');
    await expect(outcome).rejects.not.toThrow(TOKEN);
  });
});

describe('createAuthorizer with any TokenStore', () => {
  it('asks the store for the hash of the token', async () => {
    const asked: string[] = [];
    const store: TokenStore = { findTokenOwner: async (hash) => (asked.push(hash), 'own_x') };
    const result = await createAuthorizer({ tokens: store, logger: new Logger({ serviceName: 'test', logLevel: 'SILENT' }) })(authorizerEvent('Bearer tok'));
    expect(asked).toEqual([hashToken('tok')]);
    expect(result.context).toEqual({ ownerId: 'own_x', tokenHash: hashToken('tok') });
  });
});

describe('wholeApiArn', () => {
  it('widens a method ARN to every method and path of the stage', () => {
    expect(wholeApiArn('arn:aws:execute-api:eu-west-1:111122223333:abc123/prod/GET/v1/projects/prj_1/keys')).toBe(
      'arn:aws:execute-api:eu-west-1:111122223333:abc123/prod/*',
    );
  });
});
