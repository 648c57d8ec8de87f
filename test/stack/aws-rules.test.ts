import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_SERVED_SCRIPT_BYTES } from '#domain/scripts';
import { MAX_BODY_BYTES } from '#http/middlewares';
import { LAMBDA_RESPONSE_BYTES } from '#http/responses';
import { EDGE_FIREWALL_REGION } from '#lib/context';
import { AWS_RULES, type AwsRule, type RuleContext, type SynthesizedStack, synthesizedStacks, violationsOf } from '#test-support/aws-rules';
import { synthesizeApiStack } from '#test-support/stack-template';
import { regionsToBootstrap } from '../../scripts/deploy';

/**
 * AWS's documented constraints as rules over the synthesized templates (test/support/aws-rules.ts), beside cdk-nag's
 * AwsSolutions and Serverless packs and cfn-lint (test/stack/cfn-lint.test.ts). Each rule names its AWS page; each is
 * shown to fail on a small template that breaks it. Verified on paper: no template here has been deployed.
 */

const ACCOUNT = '123456789012';
const payloads = { requestBytes: MAX_BODY_BYTES, responseBytes: LAMBDA_RESPONSE_BYTES } as const;
const contextFor = (cliRegion: string, args: readonly string[]): RuleContext => ({ cliRegion, bootstrapped: regionsToBootstrap(cliRegion, args), payloads });

interface Deploy {
  name: string;
  args: string[];
  cliRegion: string;
  build(): ReturnType<typeof synthesizeApiStack>;
}

/** The deploys the docs describe, each as `npm run deploy` would synthesize it. */
const DEPLOYS: Deploy[] = [
  { name: 'the default deploy (environment-agnostic)', args: [], cliRegion: 'eu-west-1', build: () => synthesizeApiStack() },
  {
    name: 'an opt-in Region (af-south-1)',
    args: [],
    cliRegion: 'af-south-1',
    build: () => synthesizeApiStack({}, { account: ACCOUNT, region: 'af-south-1' }),
  },
  {
    name: '-c waf=true outside us-east-1 (two stacks)',
    args: ['-c', 'waf=true'],
    cliRegion: 'sa-east-1',
    build: () => synthesizeApiStack({ waf: 'true' }, { account: ACCOUNT, region: 'sa-east-1' }),
  },
  {
    name: '-c waf=true in us-east-1',
    args: ['-c', 'waf=true'],
    cliRegion: EDGE_FIREWALL_REGION,
    build: () => synthesizeApiStack({ waf: 'true' }, { account: ACCOUNT, region: EDGE_FIREWALL_REGION }),
  },
  { name: '-c frontDoor=false', args: ['-c', 'frontDoor=false'], cliRegion: 'eu-west-1', build: () => synthesizeApiStack({ frontDoor: 'false' }) },
];

const built = new Map<string, { app: ReturnType<typeof synthesizeApiStack>['app']; stacks: SynthesizedStack[] }>();
beforeAll(() => {
  for (const deploy of DEPLOYS) {
    const { app } = deploy.build();
    built.set(deploy.name, { app, stacks: synthesizedStacks(app) });
  }
}, 600_000);

describe.each(DEPLOYS)('$name', (deploy) => {
  it('breaks none of the AWS rules', () => {
    const { stacks } = built.get(deploy.name)!;
    expect(violationsOf(stacks, contextFor(deploy.cliRegion, deploy.args))).toEqual([]);
  });

  it("passes cdk-nag's AwsSolutions and Serverless packs in every stack, findings acknowledged only with reasons", () => {
    const { app } = built.get(deploy.name)!;
    for (const stack of app.node.children.filter((child) => child.node.id.startsWith('DeveloperApiTest'))) {
      for (const pack of [new AwsSolutionsChecks(app, { verbose: true }), new ServerlessChecks(app, { verbose: true })]) {
        const report = pack.validateScope(stack);
        expect(report.violations.map((violation) => `${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual(
          [],
        );
      }
    }
  });
});

it('checks the app the way npm run deploy deploys it: two stacks with -c waf=true outside us-east-1, both bootstrapped', () => {
  const stacks = built.get('-c waf=true outside us-east-1 (two stacks)')!.stacks;
  expect(stacks.map((stack) => stack.region).toSorted()).toEqual(['sa-east-1', 'us-east-1']);
  // Without -c waf=true among the bootstrap's settings, us-east-1 is left out, and the rule says so.
  expect(AWS_RULES.find((rule) => rule.id === 'bootstrap-every-environment')!.violations(stacks, contextFor('sa-east-1', []))).toEqual([
    'DeveloperApiTestEdgeFirewall deploys to us-east-1, which this deploy does not bootstrap (sa-east-1)',
  ]);
});

/** A one-stack app of the given resources, in `region` when given. */
const templateOf = (resources: Record<string, unknown>, region?: string, conditions?: Record<string, unknown>): SynthesizedStack[] => [
  { name: 'Bad', region, template: { Resources: resources as SynthesizedStack['template']['Resources'], ...(conditions ? { Conditions: conditions } : {}) } },
];
const rule = (id: string): AwsRule => {
  const found = AWS_RULES.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no rule ${id}`);
  return found;
};
const anyContext = contextFor('eu-west-1', []);
const distribution = (config: Record<string, unknown>) => ({ Type: 'AWS::CloudFront::Distribution', Properties: { DistributionConfig: config } });
const logsTo = (bucketId: string) => ({ Bucket: { 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] }, Prefix: 'cloudfront/' });

describe('each rule fails on a template that breaks it', () => {
  it('names its AWS page', () => {
    for (const each of AWS_RULES) expect(each.source, each.id).toMatch(/^https:\/\/(docs\.aws\.amazon\.com)\//);
    expect(new Set(AWS_RULES.map((each) => each.id)).size).toBe(AWS_RULES.length);
  });

  it('cloudfront-log-bucket-acls: logs to a bucket with ACLs disabled, explicitly or by default (the create that rolled back)', () => {
    const enforced = { Type: 'AWS::S3::Bucket', Properties: { OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } } };
    expect(
      rule('cloudfront-log-bucket-acls').violations(templateOf({ Logs: enforced, Cdn: distribution({ Logging: logsTo('Logs') }) }), anyContext),
    ).toHaveLength(1);
    expect(
      rule('cloudfront-log-bucket-acls').violations(
        templateOf({ Logs: { Type: 'AWS::S3::Bucket', Properties: {} }, Cdn: distribution({ Logging: logsTo('Logs') }) }),
        anyContext,
      ),
    ).toHaveLength(1);
    const preferred = { Type: 'AWS::S3::Bucket', Properties: { OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerPreferred' }] } } };
    expect(rule('cloudfront-log-bucket-acls').violations(templateOf({ Logs: preferred, Cdn: distribution({ Logging: logsTo('Logs') }) }), anyContext)).toEqual(
      [],
    );
  });

  it('cloudfront-logs-opt-in-regions: logs in an opt-in Region, or unconditionally in a stack of no set Region', () => {
    const logging = { Cdn: distribution({ Logging: logsTo('Logs') }) };
    expect(rule('cloudfront-logs-opt-in-regions').violations(templateOf(logging, 'me-south-1'), anyContext)).toHaveLength(1);
    expect(rule('cloudfront-logs-opt-in-regions').violations(templateOf(logging), anyContext).length).toBeGreaterThan(10);
    expect(rule('cloudfront-logs-opt-in-regions').violations(templateOf(logging, 'eu-west-1'), anyContext)).toEqual([]);
    const guarded = { Cdn: distribution({ Logging: { 'Fn::If': ['Deliverable', logsTo('Logs'), { Ref: 'AWS::NoValue' }] } }) };
    const onlyUsEast = { Deliverable: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] } };
    expect(rule('cloudfront-logs-opt-in-regions').violations(templateOf(guarded, undefined, onlyUsEast), anyContext)).toEqual([]);
  });

  it('function-url-origin-access-control: a signed origin whose URL is public or lacks the permission, and an AWS_IAM URL nobody signs for', () => {
    const url = (auth: string) => ({ Type: 'AWS::Lambda::Url', Properties: { AuthType: auth, TargetFunctionArn: { 'Fn::GetAtt': ['Fn', 'Arn'] } } });
    const oac = { Type: 'AWS::CloudFront::OriginAccessControl', Properties: { OriginAccessControlConfig: { OriginAccessControlOriginType: 'lambda' } } };
    const origin = (signed: boolean) =>
      distribution({
        Origins: [
          {
            Id: 'Console',
            DomainName: { 'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::GetAtt': ['Url', 'FunctionUrl'] }] }] },
            ...(signed ? { OriginAccessControlId: { 'Fn::GetAtt': ['Oac', 'Id'] } } : {}),
          },
        ],
      });
    const permission = {
      Type: 'AWS::Lambda::Permission',
      Properties: {
        Action: 'lambda:InvokeFunctionUrl',
        Principal: 'cloudfront.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': ['Fn', 'Arn'] },
        SourceArn: { 'Fn::Join': ['', ['arn:aws:cloudfront::', { Ref: 'AWS::AccountId' }, ':distribution/', { Ref: 'Cdn' }]] },
      },
    };
    const check = (resources: Record<string, unknown>) => rule('function-url-origin-access-control').violations(templateOf(resources), anyContext);
    expect(check({ Url: url('NONE'), Oac: oac, Cdn: origin(true), Allow: permission })).toHaveLength(1);
    expect(check({ Url: url('AWS_IAM'), Oac: oac, Cdn: origin(true) })).toHaveLength(1);
    expect(check({ Url: url('AWS_IAM'), Cdn: origin(false) })).toHaveLength(1);
    expect(check({ Url: url('AWS_IAM'), Oac: oac, Cdn: origin(true), Allow: permission })).toEqual([]);
  });

  it('rollback-deletes-only-empty-buckets: a BucketDeployment fills a bucket a rollback deletes unemptied', () => {
    const copy = { Type: 'Custom::CDKBucketDeployment', Properties: { DestinationBucketName: { Ref: 'Site' } } };
    const check = (resources: Record<string, unknown>) => rule('rollback-deletes-only-empty-buckets').violations(templateOf(resources), anyContext);
    expect(check({ Site: { Type: 'AWS::S3::Bucket', DeletionPolicy: 'RetainExceptOnCreate' }, Copy: copy })).toHaveLength(1);
    expect(check({ Site: { Type: 'AWS::S3::Bucket', DeletionPolicy: 'Delete' }, Copy: copy })).toHaveLength(1);
    const emptier = { Type: 'Custom::S3AutoDeleteObjects', Properties: { BucketName: { Ref: 'Site' } } };
    expect(check({ Site: { Type: 'AWS::S3::Bucket', DeletionPolicy: 'Delete' }, Copy: copy, Empty: emptier })).toEqual([]);
  });

  it('waf-cloudfront-scope-us-east-1: a CLOUDFRONT web ACL outside us-east-1, and a REGIONAL one on a distribution', () => {
    const acl = (scope: string) => ({ Type: 'AWS::WAFv2::WebACL', Properties: { Scope: scope } });
    const check = (resources: Record<string, unknown>, region?: string) =>
      rule('waf-cloudfront-scope-us-east-1').violations(templateOf(resources, region), anyContext);
    expect(check({ Acl: acl('CLOUDFRONT') }, 'eu-west-1')).toHaveLength(1);
    expect(check({ Acl: acl('CLOUDFRONT') })).toHaveLength(1);
    expect(check({ Acl: acl('REGIONAL'), Cdn: distribution({ WebACLId: { 'Fn::GetAtt': ['Acl', 'Arn'] } }) }, 'eu-west-1')).toHaveLength(1);
    expect(check({ Acl: acl('CLOUDFRONT'), Cdn: distribution({ WebACLId: { 'Fn::GetAtt': ['Acl', 'Arn'] } }) }, 'us-east-1')).toEqual([]);
  });

  it('bootstrap-every-environment: a stack in a Region the deploy does not bootstrap', () => {
    const stacks: SynthesizedStack[] = [
      { name: 'Main', region: 'eu-west-1', template: { Resources: {} } },
      { name: 'Edge', region: 'us-east-1', template: { Resources: {} } },
    ];
    expect(rule('bootstrap-every-environment').violations(stacks, contextFor('eu-west-1', []))).toHaveLength(1);
    expect(rule('bootstrap-every-environment').violations(stacks, contextFor('eu-west-1', ['-c', 'waf=true']))).toEqual([]);
  });

  it('cloudfront-header-quotas: too many origin headers, a long secret header, a long CSP, a function past 10 KB', () => {
    const check = (resources: Record<string, unknown>) => rule('cloudfront-header-quotas').violations(templateOf(resources), anyContext);
    const headers = Array.from({ length: 11 }, (_, i) => ({ HeaderName: `x-h${i}`, HeaderValue: 'v' }));
    expect(check({ Cdn: distribution({ Origins: [{ Id: 'O', DomainName: 'example.com', OriginCustomHeaders: headers }] }) })).toHaveLength(1);
    const secret = { Type: 'AWS::SecretsManager::Secret', Properties: { GenerateSecretString: { PasswordLength: 2_000 } } };
    const fromSecret = [
      { HeaderName: 'x-origin-verify', HeaderValue: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: 'Secret' }, ':SecretString:::}}']] } },
    ];
    expect(check({ Secret: secret, Cdn: distribution({ Origins: [{ Id: 'O', DomainName: 'example.com', OriginCustomHeaders: fromSecret }] }) })).toHaveLength(
      1,
    );
    const csp = {
      Type: 'AWS::CloudFront::ResponseHeadersPolicy',
      Properties: { ResponseHeadersPolicyConfig: { SecurityHeadersConfig: { ContentSecurityPolicy: { ContentSecurityPolicy: 'a'.repeat(1_784) } } } },
    };
    expect(check({ Csp: csp })).toHaveLength(1);
    expect(check({ Fn: { Type: 'AWS::CloudFront::Function', Properties: { FunctionCode: 'x'.repeat(10_241) } } })).toHaveLength(1);
  });

  it('lambda-and-api-gateway-payloads: an answer past 6 MB, a body past it, a streaming function URL', () => {
    const check = (resources: Record<string, unknown>, sizes: RuleContext['payloads']) =>
      rule('lambda-and-api-gateway-payloads').violations(templateOf(resources), { ...anyContext, payloads: sizes });
    expect(check({}, { requestBytes: MAX_BODY_BYTES, responseBytes: MAX_SERVED_SCRIPT_BYTES + 2 * 1024 * 1024 })).toHaveLength(1);
    expect(check({}, { requestBytes: 7 * 1024 * 1024, responseBytes: 1 })).toHaveLength(1);
    expect(check({ Url: { Type: 'AWS::Lambda::Url', Properties: { InvokeMode: 'RESPONSE_STREAM' } } }, payloads)).toHaveLength(1);
    expect(check({}, payloads)).toEqual([]);
  });
});
