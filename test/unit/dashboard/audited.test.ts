import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { awsCaller, openContext } from '#dashboard/context';

/** Who ran a dashboard command, for its audit entry: in AWS the credentials' identity, asked of STS. */
const sts = mockClient(STSClient);
const ARN = 'arn:aws:sts::123456789012:assumed-role/Publisher/alice@example.com';

beforeEach(() => {
  sts.reset();
  sts.on(GetCallerIdentityCommand).resolves({ Arn: ARN, Account: '123456789012', UserId: 'AROAEXAMPLE:alice@example.com' });
});
afterEach(() => sts.reset());

describe('the caller a dashboard command is entered with', () => {
  it('is the ARN STS GetCallerIdentity names in AWS, asked once per run', async () => {
    const opened = openContext({ kind: 'aws', tableName: 'prod-table', stackName: 'ScriptDistributionDeveloperApi' });
    try {
      expect(await opened.context.caller()).toBe(ARN);
      expect(await opened.context.caller()).toBe(ARN);
      expect(sts.commandCalls(GetCallerIdentityCommand)).toHaveLength(1);
    } finally {
      opened.close();
    }
  });

  it('refuses to go on when STS names no ARN, since the entry could not say who ran the command', async () => {
    sts.on(GetCallerIdentityCommand).resolves({});
    await expect(awsCaller(new STSClient({}))()).rejects.toThrow('STS GetCallerIdentity named no ARN');
  });

  it('is local:<OS user> on the local stack, which asks no AWS service', async () => {
    const opened = openContext({ kind: 'local', endpoint: 'http://127.0.0.1:1', tableName: 'local-table' });
    try {
      expect(await opened.context.caller()).toMatch(/^local(:.+)?$/);
      expect(sts.commandCalls(GetCallerIdentityCommand)).toHaveLength(0);
    } finally {
      opened.close();
    }
  });
});
