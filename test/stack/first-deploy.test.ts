import { beforeAll, describe, expect, it } from 'vitest';
import type { CfnResource } from '#test-support/cdk';
import { actionsOf, synthesizeApiStack } from '#test-support/stack-template';

/**
 * Issue 31: what only a first deploy in a fresh AWS account would have shown, pinned in the default template. Each
 * rule is AWS's documented behaviour (docs/operations.md, "A first deploy"), verified here on paper only.
 */

let built: ReturnType<typeof synthesizeApiStack>;

beforeAll(() => {
  built = synthesizeApiStack();
}, 120_000);

const ofType = (type: string) => Object.entries(built.resources).filter(([, resource]) => resource.Type === type);
const logicalId = (construct: { node: { defaultChild?: unknown } }) => built.stack.getLogicalId(construct.node.defaultChild as never);

interface PolicyStatement {
  Action: string | string[];
  Condition?: Record<string, Record<string, unknown>>;
}

const statements = () => ofType('AWS::IAM::Policy').flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: PolicyStatement[] }).Statement);

describe('a create that rolls back leaves nothing behind', () => {
  it('keeps the table, both buckets, the key secret and the access-log groups (RetainExceptOnCreate); only the Region-wide API Gateway logging role stays Retain', () => {
    // AWS::ApiGateway::Account points the whole Region's API Gateway logging at this role (it may replace a role
    // another stack set): deleting it after a failed create would break that setting, so it is kept even then.
    const regionWide = ofType('AWS::ApiGateway::Account').concat(ofType('AWS::IAM::Role').filter(([id]) => id.startsWith('ApiCloudWatchRole')));
    expect(regionWide).toHaveLength(2);
    for (const [id, resource] of regionWide) expect(resource.DeletionPolicy, id).toBe('Retain');
    const kept = Object.entries(built.resources).filter(
      ([id, resource]) => resource.DeletionPolicy !== undefined && resource.DeletionPolicy !== 'Delete' && !regionWide.some(([wide]) => wide === id),
    );
    const byType = (type: string) => kept.filter(([, resource]) => resource.Type === type).length;
    expect(byType('AWS::DynamoDB::GlobalTable')).toBe(1);
    // The scripts, their access logs and the console's files.
    expect(byType('AWS::S3::Bucket')).toBe(3);
    expect(byType('AWS::SecretsManager::Secret')).toBe(1);
    expect(kept.map(([id]) => id)).toEqual(expect.arrayContaining([logicalId(built.stack.loaderApi.accessLogs), expect.stringMatching(/^ApiAccessLogs/)]));
    // The API's, the loader routes' and the console deployment's log groups with them.
    expect(kept).toHaveLength(8);
    for (const [id, resource] of kept) {
      expect(resource.DeletionPolicy, id).toBe('RetainExceptOnCreate');
      expect(resource.UpdateReplacePolicy, id).toBe('Retain');
    }
  });

  it('turns no deletion protection on, which would refuse the rollback delete of the table (ROLLBACK_FAILED)', () => {
    const [[, table]] = ofType('AWS::DynamoDB::GlobalTable') as [[string, CfnResource]];
    for (const replica of table.Properties.Replicas as Record<string, unknown>[]) expect(replica.DeletionProtectionEnabled).not.toBe(true);
  });
});

describe('IAM the way AWS reads it', () => {
  const listingAttributes = () => statements().filter((statement) => JSON.stringify(statement.Condition ?? {}).includes('dynamodb:Attributes'));

  it('pins dynamodb:ReturnValues in every grant that lists attributes, and none of them allows ALL_OLD or ALL_NEW', () => {
    expect(listingAttributes().length).toBeGreaterThanOrEqual(8);
    for (const statement of listingAttributes()) {
      const allowed = statement.Condition?.StringEqualsIfExists?.['dynamodb:ReturnValues'] as string[] | undefined;
      expect(allowed, JSON.stringify(statement)).toBeDefined();
      expect(allowed).not.toContain('ALL_OLD');
      expect(allowed).not.toContain('ALL_NEW');
    }
  });

  it('lets the loader check ask its key write for UPDATED_NEW only, and the machine reset for UPDATED_OLD only', () => {
    const returnValuesOf = (action: string, attribute: string) =>
      listingAttributes()
        .filter((statement) => actionsOf(statement as never).includes(action) && JSON.stringify(statement.Condition).includes(`"${attribute}"`))
        .map((statement) => statement.Condition?.StringEqualsIfExists?.['dynamodb:ReturnValues']);
    expect(returnValuesOf('dynamodb:UpdateItem', 'lastCheck')).toEqual([['UPDATED_NEW']]);
    // The owner API's reset-hwid and the Discord function's /resethwid.
    expect(returnValuesOf('dynamodb:UpdateItem', 'fingerprints').filter((values) => JSON.stringify(values) === '["UPDATED_OLD"]')).toHaveLength(2);
  });
});

describe('smaller things a first deploy meets', () => {
  it("lets S3's log delivery write the access-log bucket through its bucket policy, with ACLs disabled (no legacy LogDeliveryWrite ACL)", () => {
    const logsId = logicalId(built.stack.scripts.accessLogs);
    const logs = built.resources[logsId] as CfnResource;
    expect(logs.Properties.AccessControl).toBeUndefined();
    expect(logs.Properties.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
    const policies = ofType('AWS::S3::BucketPolicy').filter(([, policy]) => JSON.stringify(policy.Properties.Bucket) === JSON.stringify({ Ref: logsId }));
    expect(policies).toHaveLength(1);
    const document = JSON.stringify(policies[0]?.[1].Properties.PolicyDocument);
    expect(document).toContain('"Service":"logging.s3.amazonaws.com"');
    expect(document).toContain(`"aws:SourceArn":{"Fn::GetAtt":["${logicalId(built.stack.scripts.bucket)}","Arn"]}`);
  });

  it('acknowledges no cdk-nag rule that does not exist (AwsSolutions-SNS2)', () => {
    const acknowledged = built.stack.node.findAll().flatMap((construct) => construct.node.metadata.map((entry) => JSON.stringify(entry.data)));
    expect(acknowledged.some((data) => data.includes('AwsSolutions-SNS'))).toBe(false);
  });

  it('does not trace the loader check in X-Ray (its volume would make tracing a tenth of its price), and grants it no X-Ray writes', () => {
    const loader = built.resources[logicalId(built.stack.loaderCheck.function)] as CfnResource;
    expect(loader.Properties.TracingConfig).toBeUndefined();
    const roleId = (loader.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const loaderActions = ofType('AWS::IAM::Policy')
      .filter(([, policy]) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
      .flatMap(([, policy]) =>
        (policy.Properties.PolicyDocument as { Statement: PolicyStatement[] }).Statement.flatMap((statement) => [statement.Action].flat()),
      );
    expect(loaderActions.filter((action) => action.startsWith('xray:'))).toEqual([]);
  });
});
