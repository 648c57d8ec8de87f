import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CommandError, locateTable, type StackOutputsReader } from '#dashboard/context';
import { DEFAULT_STACK_NAME } from '#lib/context';

let dir: string;
let stateFile: string;
const missingFile = () => join(dir, 'missing.json');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dashboard-context-'));
  stateFile = join(dir, 'stack.json');
  await writeFile(stateFile, JSON.stringify({ baseUrl: 'http://127.0.0.1:3000', dynamodbEndpoint: 'http://127.0.0.1:8000', tableName: 'from-file' }));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const noStack: StackOutputsReader = async () => {
  throw new Error('Could not load credentials from any providers');
};

describe('locateTable', () => {
  it('prefers DYNAMODB_ENDPOINT and TABLE_NAME from the environment over the state file', async () => {
    const location = await locateTable({ env: { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9000', TABLE_NAME: 'from-env' }, stateFile, readStackOutputs: noStack });
    expect(location).toEqual({ kind: 'local', endpoint: 'http://127.0.0.1:9000', tableName: 'from-env' });
  });

  it('refuses DYNAMODB_ENDPOINT without TABLE_NAME', async () => {
    await expect(locateTable({ env: { DYNAMODB_ENDPOINT: 'http://x' }, stateFile, readStackOutputs: noStack })).rejects.toThrow(
      'DYNAMODB_ENDPOINT is set but TABLE_NAME is not',
    );
  });

  it('reads the running local stack from the state file', async () => {
    expect(await locateTable({ env: {}, stateFile, readStackOutputs: noStack })).toEqual({
      kind: 'local',
      endpoint: 'http://127.0.0.1:8000',
      tableName: 'from-file',
      loaderBaseUrl: 'http://127.0.0.1:3000',
    });
  });

  it('refuses a state file that is not JSON or lacks the table fields', async () => {
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{"baseUrl":');
    await expect(locateTable({ env: {}, stateFile: broken, readStackOutputs: noStack })).rejects.toThrow(`${broken} is not valid JSON`);
    await writeFile(broken, '{"baseUrl":"x"}');
    await expect(locateTable({ env: {}, stateFile: broken, readStackOutputs: noStack })).rejects.toThrow('lacks dynamodbEndpoint or tableName');
  });

  it('takes TABLE_NAME alone as a table in AWS', async () => {
    expect(await locateTable({ env: { TABLE_NAME: 'prod-table', STACK_NAME: 'Mine' }, stateFile, readStackOutputs: noStack })).toEqual({
      kind: 'aws',
      tableName: 'prod-table',
      stackName: 'Mine',
    });
  });

  it("falls back to the deployed stack's outputs, matching output keys that contain TableName, UsagePlanId, RestApiId and StageName", async () => {
    const readStackOutputs = vi.fn<StackOutputsReader>(async () => ({
      ApiUrl: 'https://x',
      DataTableNameA1B2: 'table-in-aws',
      ApiUsagePlanIdC3D4: 'plan-1',
      RestApiId: 'a1b2c3d4e5',
      StageName: 'prod',
    }));
    expect(await locateTable({ env: {}, stateFile: missingFile(), readStackOutputs })).toEqual({
      kind: 'aws',
      tableName: 'table-in-aws',
      stackName: DEFAULT_STACK_NAME,
      gateway: { usagePlanId: 'plan-1', restApiId: 'a1b2c3d4e5', stageName: 'prod' },
    });
    expect(readStackOutputs).toHaveBeenCalledWith('ScriptDistributionDeveloperApi');
  });

  it('leaves the gateway unknown for a stack deployed before it had every output, so a token command says what is missing', async () => {
    const readStackOutputs: StackOutputsReader = async () => ({ TableName: 'table-in-aws', UsagePlanId: 'plan-1' });
    expect(await locateTable({ env: {}, stateFile: missingFile(), readStackOutputs })).toEqual({
      kind: 'aws',
      tableName: 'table-in-aws',
      stackName: DEFAULT_STACK_NAME,
    });
  });

  it('explains in one line what to do when there is neither a local stack nor a readable AWS stack', async () => {
    const failure = locateTable({ env: {}, stateFile: missingFile(), readStackOutputs: noStack });
    await expect(failure).rejects.toBeInstanceOf(CommandError);
    await expect(failure).rejects.toThrow(
      `No local stack (${missingFile()} not found) and the AWS stack ScriptDistributionDeveloperApi could not be read (Could not load credentials from any providers): run npm start, or set DYNAMODB_ENDPOINT and TABLE_NAME`,
    );
  });

  it('refuses a stack without a TableName output', async () => {
    await expect(locateTable({ env: {}, stateFile: missingFile(), readStackOutputs: async () => ({ ApiUrl: 'x' }) })).rejects.toThrow(
      'The AWS stack ScriptDistributionDeveloperApi has no output whose key contains TableName',
    );
  });
});
