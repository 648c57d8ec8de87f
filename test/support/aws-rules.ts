import type { App } from 'aws-cdk-lib';
import { NO_CLOUDFRONT_LOG_REGIONS } from '#lib/constructs/front-door';
import { EDGE_FIREWALL_REGION } from '#lib/context';
import { conditionHolds } from './cfn-conditions';

/**
 * AWS's documented constraints that `cdk synth`, cdk-nag and cfn-lint do not check, as rules over synthesized
 * templates: each names the page it encodes, and test/stack/aws-rules.test.ts proves each one fails on a template
 * that breaks it. What a rule cannot see (an account's verification, a quota) is in docs/operations.md.
 */

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
  Condition?: string;
  DeletionPolicy?: string;
  DependsOn?: string | string[];
}

/** One stack of a synthesized app: its template, and its Region when the stack names one. */
export interface SynthesizedStack {
  name: string;
  region: string | undefined;
  template: { Resources: Record<string, Resource>; Conditions?: Record<string, unknown> };
}

/** What the rules read beside the templates. */
export interface RuleContext {
  /** The Region the CLI deploys an environment-agnostic stack to (the profile's). */
  cliRegion: string;
  /** The Regions bootstrapped for this deploy (`regionsToBootstrap` of scripts/deploy.ts). */
  bootstrapped: readonly string[];
  /** The largest request body a function reads and the largest answer it returns, in bytes (lambdas/ constants). */
  payloads: { requestBytes: number; responseBytes: number };
}

export interface AwsRule {
  id: string;
  /** The constraint, in AWS's words where they are short. */
  constraint: string;
  source: string;
  violations(stacks: readonly SynthesizedStack[], context: RuleContext): string[];
}

/** Every stack of an app as `cdk synth` writes it. */
export function synthesizedStacks(app: App): SynthesizedStack[] {
  return app.synth().stacks.map((stack) => ({
    name: stack.stackName,
    region: stack.environment.region === 'unknown-region' ? undefined : stack.environment.region,
    template: stack.template as SynthesizedStack['template'],
  }));
}

const resourcesOf = (stack: SynthesizedStack, type: string) => Object.entries(stack.template.Resources).filter(([, resource]) => resource.Type === type);
const mentions = (value: unknown, logicalId: string) => JSON.stringify(value ?? null).includes(`"${logicalId}"`);
const NO_VALUE = { Ref: 'AWS::NoValue' };

/** A property as CloudFormation sees it in a Region: Fn::If resolved, AWS::NoValue as absent. */
function inRegion(stack: SynthesizedStack, value: unknown, region: string): unknown {
  const guarded = (value as { 'Fn::If'?: [string, unknown, unknown] } | undefined)?.['Fn::If'];
  const chosen = guarded ? (conditionHolds(stack.template.Conditions ?? {}, guarded[0], { region }) ? guarded[1] : guarded[2]) : value;
  return JSON.stringify(chosen) === JSON.stringify(NO_VALUE) ? undefined : chosen;
}

/** Every branch a property may take (both of an Fn::If), AWS::NoValue left out. */
function branchesOf(value: unknown): unknown[] {
  const guarded = (value as { 'Fn::If'?: [string, unknown, unknown] } | undefined)?.['Fn::If'];
  const branches = guarded ? [guarded[1], guarded[2]] : [value];
  return branches.filter((branch) => branch !== undefined && JSON.stringify(branch) !== JSON.stringify(NO_VALUE));
}

interface DistributionConfig {
  Logging?: unknown;
  WebACLId?: unknown;
  Origins?: { Id: string; DomainName: unknown; OriginAccessControlId?: unknown; OriginCustomHeaders?: { HeaderName: string; HeaderValue: unknown }[] }[];
}
const distributionsOf = (stack: SynthesizedStack) =>
  resourcesOf(stack, 'AWS::CloudFront::Distribution').map(([id, resource]) => [id, resource.Properties?.DistributionConfig as DistributionConfig] as const);

const CLOUDFRONT_LOGS = 'https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logging-legacy-s3.html';
const CLOUDFRONT_QUOTAS = 'https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/cloudfront-limits.html';

const cloudFrontLogBucketAcls: AwsRule = {
  id: 'cloudfront-log-bucket-acls',
  constraint:
    'A bucket receiving CloudFront standard logs must have ACLs enabled: not S3 Object Ownership "bucket owner enforced", which is also the default of a bucket that does not set it (April 2023).',
  source: `${CLOUDFRONT_LOGS} (aws-cdk issue 25291)`,
  violations: (stacks) =>
    stacks.flatMap((stack) =>
      distributionsOf(stack).flatMap(([distributionId, config]) =>
        branchesOf(config.Logging).flatMap((logging) => {
          const target = (logging as { Bucket?: { 'Fn::GetAtt'?: [string, string] } }).Bucket?.['Fn::GetAtt']?.[0];
          const bucket = target ? stack.template.Resources[target] : undefined;
          if (!target || bucket?.Type !== 'AWS::S3::Bucket') return [];
          const ownership = (bucket.Properties?.OwnershipControls as { Rules?: { ObjectOwnership?: string }[] } | undefined)?.Rules?.[0]?.ObjectOwnership;
          return ownership === 'BucketOwnerPreferred' || ownership === 'ObjectWriter'
            ? []
            : [`${stack.name}: ${distributionId} logs to ${target}, whose ACLs are disabled (ObjectOwnership ${ownership ?? 'unset: BucketOwnerEnforced'})`];
        }),
      ),
    ),
};

const cloudFrontLogsOutsideOptInRegions: AwsRule = {
  id: 'cloudfront-logs-opt-in-regions',
  constraint: 'CloudFront delivers no standard (legacy) log to a bucket in an opt-in Region: the logging setting must be absent there.',
  source: CLOUDFRONT_LOGS,
  violations: (stacks) =>
    stacks.flatMap((stack) => {
      const regions = stack.region ? [stack.region] : [...NO_CLOUDFRONT_LOG_REGIONS];
      return distributionsOf(stack).flatMap(([distributionId, config]) =>
        regions
          .filter((region) => (NO_CLOUDFRONT_LOG_REGIONS as readonly string[]).includes(region) && inRegion(stack, config.Logging, region) !== undefined)
          .map((region) => `${stack.name}: ${distributionId} has standard logging in ${region}, an opt-in Region`),
      );
    }),
};

const functionUrlsBehindCloudFront: AwsRule = {
  id: 'function-url-origin-access-control',
  constraint:
    'A Lambda function URL origin with origin access control must have auth type AWS_IAM and a resource policy letting cloudfront.amazonaws.com lambda:InvokeFunctionUrl with the distribution as source; an AWS_IAM function URL behind CloudFront needs that origin access control to be signed for at all.',
  source: 'https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-restricting-access-to-lambda.html',
  violations: (stacks) =>
    stacks.flatMap((stack) =>
      distributionsOf(stack).flatMap(([distributionId, config]) =>
        (config.Origins ?? []).flatMap((origin) => {
          const [urlId, url] = resourcesOf(stack, 'AWS::Lambda::Url').find(([id]) => mentions(origin.DomainName, id)) ?? [];
          if (!urlId || !url) return [];
          const oacId = (origin.OriginAccessControlId as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];
          const oac = oacId ? stack.template.Resources[oacId] : undefined;
          const signed =
            (oac?.Properties?.OriginAccessControlConfig as { OriginAccessControlOriginType?: string } | undefined)?.OriginAccessControlOriginType === 'lambda';
          const iam = url.Properties?.AuthType === 'AWS_IAM';
          if (!signed) return iam ? [`${stack.name}: origin ${origin.Id} is an AWS_IAM function URL (${urlId}) without a lambda origin access control`] : [];
          const found: string[] = [];
          if (!iam)
            found.push(
              `${stack.name}: origin ${origin.Id} signs with origin access control for ${urlId}, whose auth type is ${String(url.Properties?.AuthType)}, not AWS_IAM`,
            );
          const allowed = resourcesOf(stack, 'AWS::Lambda::Permission').some(
            ([, permission]) =>
              permission.Properties?.Principal === 'cloudfront.amazonaws.com' &&
              permission.Properties?.Action === 'lambda:InvokeFunctionUrl' &&
              JSON.stringify(permission.Properties?.FunctionName) === JSON.stringify(url.Properties?.TargetFunctionArn) &&
              mentions(permission.Properties?.SourceArn, distributionId),
          );
          if (!allowed) found.push(`${stack.name}: no permission lets ${distributionId} (cloudfront.amazonaws.com) invoke the function URL ${urlId}`);
          return found;
        }),
      ),
    ),
};

const rollbackDeletesEmptyBuckets: AwsRule = {
  id: 'rollback-deletes-only-empty-buckets',
  constraint:
    'CloudFormation deletes an S3 bucket only when it is empty: a bucket filled during the create (a BucketDeployment) and deleted by a rollback must be emptied first, or kept (Retain), else the stack ends in ROLLBACK_FAILED.',
  source: 'https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-deletionpolicy.html',
  violations: (stacks) =>
    stacks.flatMap((stack) =>
      resourcesOf(stack, 'Custom::CDKBucketDeployment').flatMap(([copyId, copy]) => {
        const bucketId = (copy.Properties?.DestinationBucketName as { Ref?: string } | undefined)?.Ref;
        const bucket = bucketId ? stack.template.Resources[bucketId] : undefined;
        if (!bucketId || !bucket || bucket.DeletionPolicy === 'Retain') return [];
        const emptied = resourcesOf(stack, 'Custom::S3AutoDeleteObjects').some(([, emptier]) => mentions(emptier.Properties?.BucketName, bucketId));
        return emptied
          ? []
          : [`${stack.name}: ${copyId} fills ${bucketId}, which a rollback deletes (${bucket.DeletionPolicy ?? 'Delete'}) without emptying it`];
      }),
    ),
};

const wafScopeAndRegion: AwsRule = {
  id: 'waf-cloudfront-scope-us-east-1',
  constraint: 'A web ACL for CloudFront has scope CLOUDFRONT and is created in US East (N. Virginia); a distribution takes only such a web ACL (its ARN).',
  source: 'https://docs.aws.amazon.com/waf/latest/APIReference/API_CreateWebACL.html',
  violations: (stacks) =>
    stacks.flatMap((stack) => [
      ...resourcesOf(stack, 'AWS::WAFv2::WebACL')
        .filter(([, acl]) => acl.Properties?.Scope === 'CLOUDFRONT' && stack.region !== EDGE_FIREWALL_REGION)
        .map(([id]) => `${stack.name}: the CLOUDFRONT web ACL ${id} is in ${stack.region ?? 'a Region set only at deploy'}, not ${EDGE_FIREWALL_REGION}`),
      ...distributionsOf(stack).flatMap(([distributionId, config]) => {
        const aclId = (config.WebACLId as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];
        const acl = aclId ? stack.template.Resources[aclId] : undefined;
        return acl?.Type === 'AWS::WAFv2::WebACL' && acl.Properties?.Scope !== 'CLOUDFRONT'
          ? [`${stack.name}: ${distributionId} uses the ${String(acl.Properties?.Scope)} web ACL ${aclId}`]
          : [];
      }),
    ]),
};

const bootstrapEveryEnvironment: AwsRule = {
  id: 'bootstrap-every-environment',
  constraint:
    'Every environment (account and Region) a stack deploys to must be bootstrapped: the deploy uses its roles and uploads the template and assets to its bucket.',
  source: 'https://docs.aws.amazon.com/cdk/v2/guide/bootstrapping-env.html',
  violations: (stacks, context) =>
    stacks
      .filter((stack) => !context.bootstrapped.includes(stack.region ?? context.cliRegion))
      .map(
        (stack) => `${stack.name} deploys to ${stack.region ?? context.cliRegion}, which this deploy does not bootstrap (${context.bootstrapped.join(', ')})`,
      ),
};

/** CloudFront's quotas on headers and functions ("Quotas", CLOUDFRONT_QUOTAS). */
const CLOUDFRONT_HEADER_QUOTAS = { originCustomHeaders: 10, headerName: 256, headerValue: 1_783, cspValue: 1_783, functionCodeBytes: 10_240 } as const;

/** The longest value a header may take: a literal's length, or the generated length of the secret a dynamic reference names. */
function headerValueLength(stack: SynthesizedStack, value: unknown): number | undefined {
  if (typeof value === 'string') return value.length;
  const secret = resourcesOf(stack, 'AWS::SecretsManager::Secret').find(([id]) => mentions(value, id));
  return (secret?.[1].Properties?.GenerateSecretString as { PasswordLength?: number } | undefined)?.PasswordLength;
}

const cloudFrontHeaderQuotas: AwsRule = {
  id: 'cloudfront-header-quotas',
  constraint: `Custom headers to an origin: at most ${CLOUDFRONT_HEADER_QUOTAS.originCustomHeaders}, names of at most ${CLOUDFRONT_HEADER_QUOTAS.headerName} characters, values of at most ${CLOUDFRONT_HEADER_QUOTAS.headerValue}; a response headers policy's Content-Security-Policy of at most ${CLOUDFRONT_HEADER_QUOTAS.cspValue} characters; a CloudFront function of at most 10 KB.`,
  source: CLOUDFRONT_QUOTAS,
  violations: (stacks) =>
    stacks.flatMap((stack) => [
      ...distributionsOf(stack).flatMap(([, config]) =>
        (config.Origins ?? []).flatMap((origin) => {
          const headers = origin.OriginCustomHeaders ?? [];
          return [
            ...(headers.length > CLOUDFRONT_HEADER_QUOTAS.originCustomHeaders
              ? [`${stack.name}: origin ${origin.Id} adds ${headers.length} custom headers`]
              : []),
            ...headers
              .filter((header) => header.HeaderName.length > CLOUDFRONT_HEADER_QUOTAS.headerName)
              .map((header) => `${stack.name}: origin ${origin.Id} header name ${header.HeaderName.slice(0, 20)}... is too long`),
            ...headers
              .filter((header) => (headerValueLength(stack, header.HeaderValue) ?? 0) > CLOUDFRONT_HEADER_QUOTAS.headerValue)
              .map(
                (header) =>
                  `${stack.name}: origin ${origin.Id} header ${header.HeaderName} may be longer than ${CLOUDFRONT_HEADER_QUOTAS.headerValue} characters`,
              ),
          ];
        }),
      ),
      ...resourcesOf(stack, 'AWS::CloudFront::ResponseHeadersPolicy').flatMap(([id, policy]) => {
        const csp = (
          policy.Properties?.ResponseHeadersPolicyConfig as { SecurityHeadersConfig?: { ContentSecurityPolicy?: { ContentSecurityPolicy?: string } } }
        )?.SecurityHeadersConfig?.ContentSecurityPolicy?.ContentSecurityPolicy;
        return csp && csp.length > CLOUDFRONT_HEADER_QUOTAS.cspValue ? [`${stack.name}: ${id}'s Content-Security-Policy is ${csp.length} characters`] : [];
      }),
      ...resourcesOf(stack, 'AWS::CloudFront::Function').flatMap(([id, fn]) => {
        const bytes = Buffer.byteLength(String(fn.Properties?.FunctionCode ?? ''), 'utf8');
        return bytes > CLOUDFRONT_HEADER_QUOTAS.functionCodeBytes ? [`${stack.name}: the CloudFront function ${id} is ${bytes} bytes`] : [];
      }),
    ]),
};

/** Lambda's synchronous invocation payload, each way, and API Gateway's payload (REST and HTTP APIs). */
const PAYLOAD_QUOTAS = { lambdaBufferedBytes: 6 * 1024 * 1024, apiGatewayBytes: 10 * 1024 * 1024 } as const;

const payloadLimits: AwsRule = {
  id: 'lambda-and-api-gateway-payloads',
  constraint:
    'A synchronous Lambda invocation carries at most 6 MB each way (a function URL in BUFFERED mode too); API Gateway at most 10 MB: the largest body a function reads and the largest answer it returns must fit the smaller.',
  source:
    'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html and https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html',
  violations: (stacks, { payloads }) => {
    const limit = Math.min(PAYLOAD_QUOTAS.lambdaBufferedBytes, PAYLOAD_QUOTAS.apiGatewayBytes);
    const streaming = stacks.flatMap((stack) =>
      resourcesOf(stack, 'AWS::Lambda::Url')
        .filter(([, url]) => (url.Properties?.InvokeMode ?? 'BUFFERED') !== 'BUFFERED')
        .map(([id]) => `${stack.name}: the function URL ${id} streams, which this rule's 6 MB does not describe`),
    );
    return [
      ...streaming,
      ...(payloads.requestBytes > limit ? [`a request body of ${payloads.requestBytes} bytes is past ${limit}`] : []),
      ...(payloads.responseBytes > limit ? [`an answer of ${payloads.responseBytes} bytes is past ${limit}`] : []),
    ];
  },
};

export const AWS_RULES: readonly AwsRule[] = [
  cloudFrontLogBucketAcls,
  cloudFrontLogsOutsideOptInRegions,
  functionUrlsBehindCloudFront,
  rollbackDeletesEmptyBuckets,
  wafScopeAndRegion,
  bootstrapEveryEnvironment,
  cloudFrontHeaderQuotas,
  payloadLimits,
];

/** Every violation of every rule, each prefixed with its rule's id. */
export const violationsOf = (stacks: readonly SynthesizedStack[], context: RuleContext) =>
  AWS_RULES.flatMap((rule) => rule.violations(stacks, context).map((violation) => `${rule.id}: ${violation}`));
