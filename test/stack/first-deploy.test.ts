import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { NO_CLOUDFRONT_LOG_REGIONS } from '#lib/constructs/front-door';
import type { CfnResource } from '#test-support/cdk';
import { conditionHolds } from '#test-support/cfn-conditions';
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
  it('keeps the table, the scripts bucket, the two log buckets, the key secret and the access-log groups (RetainExceptOnCreate); only the Region-wide API Gateway logging role stays Retain', () => {
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
    // The scripts, their access logs and the distribution's logs (the console's files are rebuilt: below).
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

  it("empties and deletes the console's bucket (its files are rebuilt at each deploy), so a rollback after the copy does not fail on it", () => {
    // "DeletionPolicy attribute", https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-deletionpolicy.html:
    // an S3 bucket is deleted only once empty; a rollback that cannot delete it ends in ROLLBACK_FAILED.
    const consoleId = logicalId(built.stack.frontDoor!.consoleBucket!);
    const consoleBucket = built.resources[consoleId] as CfnResource;
    expect(consoleBucket.DeletionPolicy).toBe('Delete');
    const emptiers = ofType('Custom::S3AutoDeleteObjects').filter(
      ([, resource]) => JSON.stringify(resource.Properties.BucketName) === JSON.stringify({ Ref: consoleId }),
    );
    expect(emptiers).toHaveLength(1);
  });

  it('copies the console files only after every other resource of the stack exists, so a failing create fails before any file is written', () => {
    const [[copyId, copy]] = ofType('Custom::CDKBucketDeployment') as [[string, CfnResource & { DependsOn?: string[] }]];
    const dependsOn = new Set(copy.DependsOn ?? []);
    const conditional = (resource: CfnResource) => 'Condition' in resource;
    const missing = Object.entries(built.resources)
      .filter(([id, resource]) => id !== copyId && !conditional(resource) && !dependsOn.has(id))
      // What the copy references is created before it without a DependsOn.
      .filter(([id]) => !JSON.stringify(copy.Properties).includes(`"${id}"`));
    expect(missing.map(([id]) => id)).toEqual([]);
  });

  it('turns no deletion protection on, which would refuse the rollback delete of the table (ROLLBACK_FAILED)', () => {
    const [[, table]] = ofType('AWS::DynamoDB::GlobalTable') as [[string, CfnResource]];
    for (const replica of table.Properties.Replicas as Record<string, unknown>[]) expect(replica.DeletionProtectionEnabled).not.toBe(true);
  });
});

describe("CloudFront's standard logs", () => {
  // "Configure standard logging (legacy)", https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logging-legacy-s3.html:
  // the bucket must have ACLs enabled, not Object Ownership "bucket owner enforced" (aws-cdk issue 25291: the create
  // fails with "The S3 bucket that you specified for CloudFront logs does not enable ACL access"), and CloudFront
  // delivers no standard log to a bucket in an opt-in Region.
  const logging = () => {
    const [[, distribution]] = ofType('AWS::CloudFront::Distribution') as [[string, CfnResource]];
    return (distribution.Properties.DistributionConfig as { Logging?: unknown }).Logging;
  };
  const conditions = () => (built.template.toJSON().Conditions ?? {}) as Record<string, unknown>;

  it('logs to a bucket of its own with ACLs enabled (Object Ownership BucketOwnerPreferred), not to the ACL-less access-log bucket', () => {
    const text = JSON.stringify(logging());
    const [bucketId] = ofType('AWS::S3::Bucket').find(([id]) => text.includes(`"${id}","RegionalDomainName"`)) ?? [];
    expect(bucketId, text).toBeDefined();
    expect(bucketId).not.toBe(logicalId(built.stack.scripts.accessLogs));
    const bucket = built.resources[bucketId as string] as CfnResource;
    expect(bucket.Properties.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerPreferred' }] });
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
  });

  it('logs, and has its log bucket, only in a Region CloudFront delivers standard logs to (never an opt-in Region)', () => {
    const guarded = logging() as { 'Fn::If'?: [string, { Prefix: string }, unknown] };
    expect(guarded['Fn::If']?.[2]).toEqual({ Ref: 'AWS::NoValue' });
    const [condition, enabled] = guarded['Fn::If'] as [string, { Prefix: string }, unknown];
    expect(enabled.Prefix).toBe('cloudfront/');
    const logBucketId = logicalId(built.stack.frontDoor!.logBucket);
    expect(built.resources[logBucketId]).toMatchObject({ Condition: condition });
    const policies = ofType('AWS::S3::BucketPolicy').filter(([, policy]) => JSON.stringify(policy.Properties.Bucket).includes(`"${logBucketId}"`));
    expect(policies.map(([, policy]) => (policy as CfnResource & { Condition?: string }).Condition)).toEqual([condition]);
    for (const region of ['us-east-1', 'eu-west-1', 'ap-northeast-1', 'sa-east-1'])
      expect(conditionHolds(conditions(), condition, { region }), region).toBe(true);
    for (const region of ['af-south-1', 'eu-south-1', 'me-south-1', 'ap-east-1', 'eu-central-2', 'il-central-1', 'mx-central-1']) {
      expect(NO_CLOUDFRONT_LOG_REGIONS).toContain(region);
      expect(conditionHolds(conditions(), condition, { region }), region).toBe(false);
    }
  });
});

describe('an account CloudFront has not verified yet (-c frontDoor=false)', () => {
  // CloudFront refuses a new distribution until AWS has verified the account ("Your account must be verified before
  // you can add new CloudFront resources"), which rolled back the whole stack: without the front door the APIs come up.
  let direct: ReturnType<typeof synthesizeApiStack>;
  beforeAll(() => {
    direct = synthesizeApiStack({ frontDoor: 'false' });
  }, 120_000);

  it('creates no CloudFront resource and no console, and outputs the APIs own URLs instead of ServiceUrl', () => {
    const types = new Set(Object.values(direct.resources).map((resource) => resource.Type));
    expect([...types].filter((type) => type.startsWith('AWS::CloudFront::'))).toEqual([]);
    expect(types.has('Custom::CDKBucketDeployment')).toBe(false);
    expect(direct.stack.consoleApi).toBeUndefined();
    const outputs = Object.keys(direct.template.toJSON().Outputs as Record<string, unknown>);
    expect(outputs).toEqual(expect.arrayContaining(['ApiUrl', 'LoaderUrl']));
    expect(outputs).not.toContain('ServiceUrl');
    expect(outputs).not.toContain('ConsoleUrl');
  });

  it("names the loader routes' own URL in the hosted stub and the Discord replies", () => {
    const loader = direct.resources[direct.stack.getLogicalId(direct.stack.loaderCheck.function.node.defaultChild as never)] as CfnResource;
    const url = (loader.Properties.Environment as { Variables: Record<string, unknown> }).Variables.LOADER_BASE_URL;
    expect(JSON.stringify(url)).toContain(direct.stack.getLogicalId(direct.stack.loaderApi.httpApi.node.defaultChild as never));
  });

  it('refuses the console or the web ACL without the front door that carries them, naming the setting', () => {
    expect(() => synthesizeApiStack({ frontDoor: 'false', console: 'true' })).toThrow('-c console=true needs the front door');
    expect(() => synthesizeApiStack({ frontDoor: 'false', waf: 'true' }, { account: '123456789012', region: 'us-east-1' })).toThrow(
      '-c waf=true puts the web ACL on the front door',
    );
  });

  it('passes the AwsSolutions cdk-nag checks', () => {
    const report = new AwsSolutionsChecks(direct.app, { verbose: true }).validateScope(direct.stack);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
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
