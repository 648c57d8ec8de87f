import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  FlushStageAuthorizersCacheCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
} from '@aws-sdk/client-api-gateway';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyOf, tokenItems } from '#adapters/layout';
import { tokenCreate, tokenRevoke } from '#dashboard/commands/tokens';
import { CommandError, type DashboardContext, openContext, type StackOutputsReader, type TableLocation } from '#dashboard/context';
import { TokenLimitReached } from '#domain/errors';
import { AUTHORIZER_CACHE_SECONDS, hashToken, SECOND_FLUSH_AFTER_SECONDS, tokenIdOf } from '#domain/tokens';

/**
 * The dashboard's token commands against AWS, with the SDK mocked: the table (DynamoDB document client) and API
 * Gateway (usage-plan keys, the stage's authorizer cache). Each call is asserted with its inputs and its order.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const apiGateway = mockClient(APIGatewayClient);

const NOW = 1_750_000_000;
const OWNER = 'own_0123456789abcdef0123';
const TOKEN_HASH = hashToken('sdt_token-to-revoke');
const TOKEN_ID = tokenIdOf(TOKEN_HASH);
const GATEWAY = { usagePlanId: 'plan-1', restApiId: 'a1b2c3d4e5', stageName: 'prod' };
const LOCATION: TableLocation = { kind: 'aws', tableName: 'prod-table', stackName: 'ScriptDistributionDeveloperApi', gateway: GATEWAY };
const noOutputsNeeded: StackOutputsReader = async () => {
  throw new Error('the stack outputs are known already');
};

let dashboard: { context: DashboardContext; close(): void };
/** Every SDK call, in the order made, as `Client.Command`. */
let calls: string[];

function record(name: string, output: object = {}) {
  return () => {
    calls.push(name);
    return output;
  };
}

beforeEach(() => {
  ddb.reset();
  apiGateway.reset();
  calls = [];
  const active = tokenItems({ ownerId: OWNER, tokenId: TOKEN_ID, tokenHash: TOKEN_HASH, scope: 'write', createdAt: NOW - 86_400 }).byId;
  ddb.on(GetCommand, { Key: keyOf.tokenById(TOKEN_ID) }).callsFake(record('DynamoDB.Get', { Item: active }));
  ddb.on(GetCommand, { Key: keyOf.owner(OWNER) }).callsFake(record('DynamoDB.Get', { Item: { ...keyOf.owner(OWNER), id: OWNER } }));
  // The owner's working tokens, counted against MAX_TOKENS_PER_OWNER before a new one is made: none.
  ddb.on(QueryCommand).callsFake(record('DynamoDB.Query', { Items: [] }));
  ddb.on(TransactWriteCommand).callsFake(record('DynamoDB.TransactWrite'));
  ddb.on(UpdateCommand).callsFake(record('DynamoDB.Update'));
  apiGateway.on(GetUsagePlanCommand).callsFake(record('APIGateway.GetUsagePlan', { id: GATEWAY.usagePlanId }));
  apiGateway.on(GetApiKeysCommand).callsFake(
    record('APIGateway.GetApiKeys', {
      items: [
        { id: 'key-exact', name: TOKEN_ID },
        { id: 'key-prefix', name: `${TOKEN_ID}-manual` },
      ],
    }),
  );
  apiGateway.on(DeleteApiKeyCommand).callsFake(record('APIGateway.DeleteApiKey'));
  apiGateway.on(FlushStageAuthorizersCacheCommand).callsFake(record('APIGateway.FlushStageAuthorizersCache'));
  apiGateway.on(CreateApiKeyCommand).callsFake(record('APIGateway.CreateApiKey', { id: 'key-new' }));
  apiGateway.on(CreateUsagePlanKeyCommand).callsFake(record('APIGateway.CreateUsagePlanKey'));
  const opened = openContext(LOCATION, noOutputsNeeded, async (ms) => void calls.push(`sleep ${ms} ms`));
  dashboard = { context: { ...opened.context, now: () => NOW }, close: opened.close };
});

const SECOND_FLUSH = [`sleep ${SECOND_FLUSH_AFTER_SECONDS * 1000} ms`, 'APIGateway.FlushStageAuthorizersCache'];

afterEach(() => dashboard.close());

describe('token revoke in AWS', () => {
  it('deletes the token record, then its usage-plan API key, then flushes the stage authorizer cache twice, the second after every authorizer run of before has ended, then records the cleanup', async () => {
    expect(await tokenRevoke.run(dashboard.context, { tokenId: TOKEN_ID })).toEqual({ tokenId: TOKEN_ID, revoked: true });
    expect(calls).toEqual([
      'APIGateway.GetUsagePlan',
      'DynamoDB.Get',
      'DynamoDB.TransactWrite',
      'APIGateway.GetApiKeys',
      'APIGateway.DeleteApiKey',
      'APIGateway.FlushStageAuthorizersCache',
      ...SECOND_FLUSH,
      'DynamoDB.Update',
    ]);
    expect(ddb.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'prod-table',
      Key: keyOf.tokenById(TOKEN_ID),
      UpdateExpression: 'SET cleanedUpAt = :now',
      ConditionExpression: 'attribute_exists(revokedAt)',
      ExpressionAttributeValues: { ':now': NOW },
    });

    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({ TableName: 'prod-table', Key: keyOf.tokenById(TOKEN_ID), ConsistentRead: true });
    const transaction = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(transaction).toEqual([
      { Delete: { TableName: 'prod-table', Key: keyOf.token(TOKEN_HASH) } },
      { Delete: { TableName: 'prod-table', Key: keyOf.ownerToken(OWNER, TOKEN_ID) } },
      {
        Update: {
          TableName: 'prod-table',
          Key: keyOf.tokenById(TOKEN_ID),
          UpdateExpression: 'SET revokedAt = :now REMOVE tokenHash',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
          ExpressionAttributeValues: { ':now': NOW },
        },
      },
      {
        Put: {
          TableName: 'prod-table',
          Item: expect.objectContaining({
            pk: `AUDIT#OWNER#${OWNER}`,
            entity: 'AUDIT',
            ownerId: OWNER,
            action: 'token.revoke',
            source: 'dashboard',
            target: { token_id: TOKEN_ID },
            outcome: { scope: 'write' },
            at: NOW,
          }),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ]);

    expect(apiGateway.commandCalls(GetUsagePlanCommand)[0]?.args[0].input).toEqual({ usagePlanId: 'plan-1' });
    expect(apiGateway.commandCalls(GetApiKeysCommand)[0]?.args[0].input).toEqual({ nameQuery: TOKEN_ID, limit: 500, position: undefined });
    // nameQuery matches a prefix: only the key named exactly by the token id goes.
    expect(apiGateway.commandCalls(DeleteApiKeyCommand).map((call) => call.args[0].input)).toEqual([{ apiKey: 'key-exact' }]);
    expect(apiGateway.commandCalls(FlushStageAuthorizersCacheCommand)[0]?.args[0].input).toEqual({ restApiId: 'a1b2c3d4e5', stageName: 'prod' });
  });

  it("reads every page of API keys to find the token's", async () => {
    apiGateway
      .on(GetApiKeysCommand)
      .resolvesOnce({ items: [{ id: 'other', name: 'tok_ffffffffffffffffffff' }], position: 'page-2' })
      .resolvesOnce({ items: [{ id: 'key-exact', name: TOKEN_ID }] });
    await tokenRevoke.run(dashboard.context, { tokenId: TOKEN_ID });
    expect(apiGateway.commandCalls(GetApiKeysCommand).map((call) => call.args[0].input.position)).toEqual([undefined, 'page-2']);
    expect(apiGateway.commandCalls(DeleteApiKeyCommand).map((call) => call.args[0].input)).toEqual([{ apiKey: 'key-exact' }]);
  });

  it.each([
    ['an unknown id', {}, `Token ${TOKEN_ID} not found`],
    [
      'an id already revoked and cleaned up',
      {
        Item: {
          ...keyOf.tokenById(TOKEN_ID),
          ownerId: OWNER,
          tokenId: TOKEN_ID,
          scope: 'write',
          createdAt: NOW - 10,
          revokedAt: NOW - 5,
          cleanedUpAt: NOW - 5,
        },
      },
      `Token ${TOKEN_ID} is already revoked (at `,
    ],
  ])('refuses %s in one line and writes nothing, in the table or at the gateway', async (_case, found, message) => {
    ddb.on(GetCommand, { Key: keyOf.tokenById(TOKEN_ID) }).resolves(found);
    const outcome = tokenRevoke.run(dashboard.context, { tokenId: TOKEN_ID });
    await expect(outcome).rejects.toBeInstanceOf(CommandError);
    await expect(outcome).rejects.toThrow(message);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(apiGateway.commandCalls(DeleteApiKeyCommand)).toHaveLength(0);
    expect(apiGateway.commandCalls(FlushStageAuthorizersCacheCommand)).toHaveLength(0);
  });

  it('retries the gateway cleanup when revoked again after the flush failed, instead of answering "already revoked"', async () => {
    apiGateway.on(FlushStageAuthorizersCacheCommand).rejectsOnce(new Error('TooManyRequestsException: Too Many Requests'));
    await expect(tokenRevoke.run(dashboard.context, { tokenId: TOKEN_ID })).rejects.toThrow('flushing the authorizer cache of stage prod failed');
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);

    // The table now holds the token revoked, its cleanup not recorded.
    ddb
      .on(GetCommand, { Key: keyOf.tokenById(TOKEN_ID) })
      .resolves({ Item: { ...keyOf.tokenById(TOKEN_ID), ownerId: OWNER, tokenId: TOKEN_ID, scope: 'write', createdAt: NOW - 10, revokedAt: NOW } });
    apiGateway.on(FlushStageAuthorizersCacheCommand).callsFake(record('APIGateway.FlushStageAuthorizersCache'));
    calls = [];
    expect(await tokenRevoke.run(dashboard.context, { tokenId: TOKEN_ID })).toEqual({ tokenId: TOKEN_ID, revoked: true });
    expect(calls).toEqual([
      'APIGateway.GetUsagePlan',
      'APIGateway.GetApiKeys',
      'APIGateway.DeleteApiKey',
      'APIGateway.FlushStageAuthorizersCache',
      ...SECOND_FLUSH,
      'DynamoDB.Update',
    ]);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('still flushes the cache when the API key cannot be deleted, and says what is left to do', async () => {
    apiGateway.on(DeleteApiKeyCommand).rejects(new Error('TooManyRequestsException: Too Many Requests'));
    await expect(tokenRevoke.run(dashboard.context, { tokenId: TOKEN_ID })).rejects.toThrow(
      `Token ${TOKEN_ID} is revoked and stopped, but deleting its API key (named ${TOKEN_ID}) failed (TooManyRequestsException: Too Many Requests); delete it by hand, without the token it lets nothing through`,
    );
    expect(apiGateway.commandCalls(FlushStageAuthorizersCacheCommand)).toHaveLength(2);
    // Not recorded as cleaned up: the next revoke tries to delete the key again.
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('says how long the revoked token may still pass when the flush fails: the cache TTL', async () => {
    apiGateway.on(FlushStageAuthorizersCacheCommand).rejects(new Error('AccessDeniedException: not allowed'));
    await expect(tokenRevoke.run(dashboard.context, { tokenId: TOKEN_ID })).rejects.toThrow(
      `Token ${TOKEN_ID} is revoked in the table, but flushing the authorizer cache of stage prod failed (AccessDeniedException: not allowed): it stops working within ${AUTHORIZER_CACHE_SECONDS} s, when the cached answer expires`,
    );
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('checks the gateway before anything is written, reading the stack outputs when they are not known yet', async () => {
    dashboard.close();
    const readOutputs: StackOutputsReader = async () => ({ TableName: 'prod-table', UsagePlanId: 'plan-1' });
    const opened = openContext({ kind: 'aws', tableName: 'prod-table', stackName: 'Old' }, readOutputs);
    dashboard = opened;
    await expect(tokenRevoke.run(dashboard.context, { tokenId: TOKEN_ID })).rejects.toThrow(
      'The AWS stack Old lacks an output whose key contains UsagePlanId, RestApiId, StageName: deploy the stack again',
    );
    expect(calls).toEqual([]);
  });
});

describe('token create in AWS', () => {
  it('registers an API key named by the token id, valued by its hash, on the usage plan, before the table is written', async () => {
    const created = await tokenCreate.run(dashboard.context, { ownerId: OWNER, scope: 'read', limits: {} });
    expect(created).toEqual({ token: expect.stringMatching(/^sdt_/), tokenId: tokenIdOf(hashToken(created.token)), scope: 'read' });
    expect(calls).toEqual([
      'DynamoDB.Get',
      'APIGateway.GetUsagePlan',
      'DynamoDB.Query',
      'APIGateway.CreateApiKey',
      'APIGateway.CreateUsagePlanKey',
      'DynamoDB.TransactWrite',
    ]);
    expect(apiGateway.commandCalls(CreateApiKeyCommand)[0]?.args[0].input).toEqual({
      name: created.tokenId,
      description: 'Usage-plan key of a developer API token (value: SHA-256 of the token)',
      value: hashToken(created.token),
      enabled: true,
    });
    expect(apiGateway.commandCalls(CreateUsagePlanKeyCommand)[0]?.args[0].input).toEqual({ usagePlanId: 'plan-1', keyId: 'key-new', keyType: 'API_KEY' });
    const puts = (ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? []).map((item) => item.Put?.Item);
    expect(puts.map((item) => item?.pk)).toEqual([
      `TOKEN#${hashToken(created.token)}`,
      `TOKEN_ID#${created.tokenId}`,
      `OWNER#${OWNER}`,
      `AUDIT#OWNER#${OWNER}`,
    ]);
    expect(JSON.stringify(puts)).not.toContain(created.token);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it("says the account's 10,000 API keys a Region are used up, and what to do, when API Gateway refuses the key; the table is left untouched", async () => {
    const refusal = Object.assign(new Error('API key limit exceeded'), { name: 'LimitExceededException' });
    apiGateway.on(CreateApiKeyCommand).rejects(refusal);
    const attempt = tokenCreate.run(dashboard.context, { ownerId: OWNER, scope: 'read', limits: {} });
    await expect(attempt).rejects.toBeInstanceOf(TokenLimitReached);
    await expect(attempt).rejects.toThrow(
      /^API Gateway refused the token's API key \(API key limit exceeded\): an account holds at most 10,000 API keys per Region, one per token .* Nothing was written: revoke tokens no one uses/,
    );
    expect(calls).toEqual(['DynamoDB.Get', 'APIGateway.GetUsagePlan', 'DynamoDB.Query']);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });
});
