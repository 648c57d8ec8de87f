import { Template } from 'aws-cdk-lib/assertions';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import { beforeAll, describe, expect, it } from 'vitest';
import { presigningS3Client, S3UploadStaging } from '#adapters/upload-staging';
import { ORIGIN_VERIFY_HEADER } from '#http/origin-verify';
import { CONSOLE_CACHE_SECONDS, STUB_CACHE_SECONDS } from '#lib/constructs/front-door';
import { DeveloperApiStack } from '#lib/developer-api-stack';
import { BEHAVIOURS, HSTS_SECONDS } from '#lib/front-door-rules';
import { type CfnResource, templateOnlyApp } from '#test-support/cdk';
import { synthesizeApiStack, TEST_CONSOLE_FILES, templateLookups } from '#test-support/stack-template';

/** The one front door: a CloudFront distribution serving every route behind one URL (docs/operations.md, "The front door"). */

type Built = ReturnType<typeof synthesizeApiStack>;
let built: Built;
let withoutConsole: Built;
let withConsoleApi: Record<string, CfnResource>;

/** CloudFront's managed policies, by the ids CloudFormation names them with. */
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

beforeAll(() => {
  built = synthesizeApiStack();
  withoutConsole = synthesizeApiStack({ console: 'false' });
  const app = templateOnlyApp();
  const stack = new DeveloperApiStack(app, 'DeveloperApiConsoleApi', {
    consoleFiles: TEST_CONSOLE_FILES(),
    consoleApiOrigin: new origins.HttpOrigin('console-api.example.com'),
  });
  withConsoleApi = Template.fromStack(stack).toJSON().Resources as Record<string, CfnResource>;
}, 300_000);

interface Behaviour {
  PathPattern?: string;
  TargetOriginId: string;
  CachePolicyId: unknown;
  OriginRequestPolicyId?: string;
  AllowedMethods: string[];
  ViewerProtocolPolicy: string;
  ResponseHeadersPolicyId: unknown;
  FunctionAssociations?: unknown[];
}
interface Origin {
  Id: string;
  DomainName: unknown;
  OriginPath?: string;
  S3OriginConfig?: unknown;
  OriginAccessControlId?: unknown;
  OriginCustomHeaders?: { HeaderName: string; HeaderValue: unknown }[];
}
interface DistributionConfig {
  DefaultCacheBehavior: Behaviour;
  CacheBehaviors: Behaviour[];
  Origins: Origin[];
  Logging?: unknown;
  WebACLId?: unknown;
}

const configOf = (resources: Record<string, CfnResource>): DistributionConfig => {
  const distributions = Object.values(resources).filter((resource) => resource.Type === 'AWS::CloudFront::Distribution');
  expect(distributions).toHaveLength(1);
  return (distributions[0] as CfnResource).Properties.DistributionConfig as DistributionConfig;
};
const lookups = templateLookups(() => built.resources);
const idOf = (construct: { node: { defaultChild?: unknown } }) => built.stack.getLogicalId(construct.node.defaultChild as never);

/** The origin a path pattern's behaviour reaches, by what it is: the REST API, the loader's HTTP API, the console bucket or another. */
function originKindOf(config: DistributionConfig, behaviour: Behaviour): string {
  const origin = config.Origins.find((candidate) => candidate.Id === behaviour.TargetOriginId);
  const domain = JSON.stringify(origin?.DomainName);
  if (domain.includes(idOf(built.stack.api))) return 'owner API';
  if (domain.includes(built.stack.getLogicalId(built.stack.loaderApi.httpApi.node.defaultChild as never))) return 'loader HTTP API';
  if (origin?.S3OriginConfig) return 'console bucket';
  if (built.stack.consoleApi && domain.includes(built.stack.getLogicalId(built.stack.consoleApi.url.node.defaultChild as never))) return 'console API';
  return domain;
}
const behaviour = (config: DistributionConfig, pattern: string) => {
  const found = config.CacheBehaviors.find((candidate) => candidate.PathPattern === pattern);
  if (!found) throw new Error(`No behaviour for ${pattern}`);
  return found;
};

describe('one distribution in front of every route', () => {
  it('routes the console API, the console, the owner API, the loader, the stub and Discord to their origins, the more specific first', () => {
    const config = configOf(built.resources);
    expect(config.CacheBehaviors.map((candidate) => [candidate.PathPattern, originKindOf(config, candidate)])).toEqual([
      [BEHAVIOURS.consoleApi, 'console API'],
      [BEHAVIOURS.console, 'console bucket'],
      [BEHAVIOURS.ownerApi, 'owner API'],
      [BEHAVIOURS.stub, 'loader HTTP API'],
      [BEHAVIOURS.loader, 'loader HTTP API'],
      [BEHAVIOURS.discord, 'loader HTTP API'],
      [BEHAVIOURS.shops, 'loader HTTP API'],
      [BEHAVIOURS.free, 'loader HTTP API'],
    ]);
    // Any other path reaches the owner API, whose gateway responses answer it in JSON.
    expect(originKindOf(config, config.DefaultCacheBehavior)).toBe('owner API');
  });

  it('reaches the owner API at its stage, and the loader origin over TLS 1.2 only', () => {
    const config = configOf(built.resources);
    const owner = config.Origins.find((origin) => origin.Id === behaviour(config, BEHAVIOURS.ownerApi).TargetOriginId);
    expect(JSON.stringify(owner?.OriginPath)).toContain(`"/",{"Ref":"${lookups.only('AWS::ApiGateway::Stage')[0]}"}`);
    const loader = config.Origins.find((origin) => origin.Id === behaviour(config, BEHAVIOURS.loader).TargetOriginId);
    expect(loader).toMatchObject({ CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] } });
  });

  it('caches nothing of the APIs and passes every viewer header but Host (CloudFront-Viewer-Address included) to them', () => {
    const config = configOf(built.resources);
    for (const api of [
      config.DefaultCacheBehavior,
      ...[BEHAVIOURS.ownerApi, BEHAVIOURS.loader, BEHAVIOURS.discord, BEHAVIOURS.shops, BEHAVIOURS.free].map((pattern) => behaviour(config, pattern)),
    ]) {
      expect(api, api.PathPattern).toMatchObject({
        CachePolicyId: CACHING_DISABLED,
        OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
        ViewerProtocolPolicy: 'https-only',
        AllowedMethods: expect.arrayContaining(['GET', 'POST', 'PATCH', 'PUT', 'DELETE']),
      });
    }
  });

  it(`keeps the hosted stub at most ${STUB_CACHE_SECONDS.max} s (a minute by default), one copy per project path, GET only`, () => {
    const stub = behaviour(configOf(built.resources), BEHAVIOURS.stub);
    expect(stub.AllowedMethods).toEqual(['GET', 'HEAD']);
    expect(stub.OriginRequestPolicyId).toBeUndefined();
    const policy = built.resources[(stub.CachePolicyId as { Ref: string }).Ref];
    expect(policy?.Properties.CachePolicyConfig).toMatchObject({
      DefaultTTL: STUB_CACHE_SECONDS.default,
      MaxTTL: STUB_CACHE_SECONDS.max,
      ParametersInCacheKeyAndForwardedToOrigin: { HeadersConfig: { HeaderBehavior: 'none' }, QueryStringsConfig: { QueryStringBehavior: 'none' } },
    });
  });

  it('answers with a CSP that allows no inline script or style and no framing, HSTS for two years, nosniff and DENY', () => {
    const config = configOf(built.resources);
    const policyIds = new Set([config.DefaultCacheBehavior, ...config.CacheBehaviors].map((candidate) => JSON.stringify(candidate.ResponseHeadersPolicyId)));
    expect(policyIds.size).toBe(1);
    const [, policy] = lookups.only('AWS::CloudFront::ResponseHeadersPolicy');
    const headers = (policy.Properties.ResponseHeadersPolicyConfig as { SecurityHeadersConfig: Record<string, Record<string, unknown>> }).SecurityHeadersConfig;
    const csp = JSON.stringify(headers.ContentSecurityPolicy?.ContentSecurityPolicy);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(headers.StrictTransportSecurity).toMatchObject({ AccessControlMaxAgeSec: HSTS_SECONDS, IncludeSubdomains: true, Override: true });
    expect(headers.ContentTypeOptions).toMatchObject({ Override: true });
    expect(headers.FrameOptions).toMatchObject({ FrameOption: 'DENY' });
  });

  it("lets the console page PUT an upload to the scripts bucket's regional endpoint, the origin its presigned URL names, and no other", async () => {
    const csp = cspOf(built.resources);
    const region = 'eu-west-1';
    const bucketName = 'scripts-bucket-name';
    const resolved = resolveJoin(csp, { [idOf(built.stack.scripts.bucket)]: bucketName, 'AWS::Region': region, 'AWS::URLSuffix': 'amazonaws.com' });
    const { url } = await new S3UploadStaging(
      presigningS3Client({ region, credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' } }),
      bucketName,
    ).presign({
      uploadId: 'u1',
      projectId: 'p1',
      sizeBytes: 1,
      sha256: '0'.repeat(64),
      notes: '',
      createdAt: 0,
    });
    // A browser allows a fetch only to a source connect-src lists (scheme and host):
    // https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Content-Security-Policy/connect-src
    expect(directive(resolved, 'connect-src')).toEqual(["'self'", new URL(url).origin]);
    expect(directive(cspOf(withoutConsole.resources) as string, 'connect-src')).toEqual(["'self'"]);
  });

  it("logs every request (the viewer's address included) to its own log bucket (test/stack/first-deploy.test.ts: ACLs, Regions)", () => {
    expect(JSON.stringify(configOf(built.resources).Logging)).toContain(`"${idOf(built.stack.frontDoor!.logBucket)}","RegionalDomainName"`);
  });

  it('prints ServiceUrl (the distribution) and ConsoleUrl, and keeps ApiUrl and LoaderUrl', () => {
    const outputs = built.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const distributionId = lookups.only('AWS::CloudFront::Distribution')[0];
    expect(outputs.ServiceUrl?.Value).toEqual({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }]] });
    expect(outputs.ConsoleUrl?.Value).toEqual({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/console/']] });
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['ApiUrl', 'LoaderUrl']));
  });
});

/** The response headers policy's CSP as the template holds it: a string, or an Fn::Join naming the upload bucket. */
function cspOf(resources: Record<string, CfnResource>): unknown {
  const policies = Object.values(resources).filter((resource) => resource.Type === 'AWS::CloudFront::ResponseHeadersPolicy');
  expect(policies).toHaveLength(1);
  const config = policies[0]?.Properties.ResponseHeadersPolicyConfig as {
    SecurityHeadersConfig: { ContentSecurityPolicy: { ContentSecurityPolicy: unknown } };
  };
  return config.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy;
}

/** An Fn::Join of strings and Refs, as CloudFormation would resolve it with these values of the Refs. */
function resolveJoin(value: unknown, refs: Record<string, string>): string {
  if (typeof value === 'string') return value;
  const [separator, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  return parts
    .map((part) => {
      if (typeof part === 'string') return part;
      const ref = (part as { Ref?: string }).Ref;
      if (ref === undefined || refs[ref] === undefined) throw new Error(`Unresolved part ${JSON.stringify(part)}`);
      return refs[ref];
    })
    .join(separator);
}

const directive = (csp: string, name: string) =>
  csp
    .split(';')
    .map((part) => part.trim().split(/\s+/))
    .find(([first]) => first === name)
    ?.slice(1);

describe("the loader origin's secret header (the function believes CloudFront's viewer address only with it)", () => {
  // Verified on paper: "Dynamic references" (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/dynamic-references-secretsmanager.html)
  // resolve a JSON key and a version id; CloudFormation resolves them only when the resource's template changes.
  /** `{{resolve:secretsmanager:<the secret's ARN>:SecretString:current::<version>}}`, as the template joins it. */
  const dynamicReference = (stack: Built['stack'], version = '') => ({
    'Fn::Join': [
      '',
      ['{{resolve:secretsmanager:', { Ref: stack.getLogicalId(stack.originSecret.node.defaultChild as never) }, `:SecretString:current::${version}}}`],
    ],
  });
  const loaderId = (stack: Built['stack']) => stack.getLogicalId(stack.loaderCheck.function.node.defaultChild as never);
  const VERSION = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
  let rotated: Built;
  beforeAll(() => {
    rotated = synthesizeApiStack({ originSecretVersion: VERSION });
  }, 120_000);

  it('is generated by Secrets Manager as {"current"} and its current value sent on the loader origin only, resolved by CloudFormation (never in the template)', () => {
    const secret = built.resources[idOf(built.stack.originSecret)];
    expect(secret?.Properties.GenerateSecretString).toMatchObject({
      ExcludePunctuation: true,
      PasswordLength: 48,
      GenerateStringKey: 'current',
      SecretStringTemplate: '{}',
    });
    const config = configOf(built.resources);
    const withHeader = config.Origins.filter((origin) => origin.OriginCustomHeaders?.some((header) => header.HeaderName === ORIGIN_VERIFY_HEADER));
    expect(withHeader.map((origin) => origin.Id)).toEqual([behaviour(config, BEHAVIOURS.loader).TargetOriginId]);
    expect(withHeader[0]?.OriginCustomHeaders?.[0]?.HeaderValue).toEqual(dynamicReference(built.stack));
  });

  it('is read by the loader, Discord and free keys functions (each counts or binds per viewer address) at their cold start: its ARN in the configuration and a grant to read it, never its value', () => {
    const holders = lookups
      .serviceFunctions()
      .filter(([, fn]) => JSON.stringify(fn.Properties.Environment ?? {}).includes(idOf(built.stack.originSecret)))
      .map(([id]) => id);
    const readers = [built.stack.loaderCheck.function, built.stack.discord.function, built.stack.freeKeys.function].map((fn) =>
      built.stack.getLogicalId(fn.node.defaultChild as never),
    );
    expect(holders.toSorted()).toEqual(readers.toSorted());
    for (const reader of readers) {
      const variables = (built.resources[reader]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.ORIGIN_SECRET_ARN).toEqual({ Ref: idOf(built.stack.originSecret) });
      expect(JSON.stringify(variables)).not.toContain('resolve:secretsmanager');
      const reads = lookups.statementsOf(reader).filter((statement) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'));
      // The secret itself (the free keys' page reads the key secret in the same statement: CDK merges them).
      expect(reads.flatMap((statement) => [statement.Resource].flat())).toContainEqual({ Ref: idOf(built.stack.originSecret) });
    }
  });

  it('rotates with -c originSecretVersion: CloudFront is pointed at that version and every loader container is replaced', () => {
    const header = configOf(rotated.resources)
      .Origins.flatMap((origin) => origin.OriginCustomHeaders ?? [])
      .find((each) => each.HeaderName === ORIGIN_VERIFY_HEADER);
    expect(header?.HeaderValue).toEqual(dynamicReference(rotated.stack, VERSION));
    const variables = (rotated.resources[loaderId(rotated.stack)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables.ORIGIN_SECRET_VERSION).toBe(VERSION);
    expect(() => synthesizeApiStack({ originSecretVersion: 'v2' })).toThrow('-c originSecretVersion=v2: give the VersionId');
  });
});

describe("the console's files", () => {
  it('are deployed under console/ in a private, TLS-only bucket that only the distribution reads, by origin access control', () => {
    const bucket = built.stack.frontDoor!.consoleBucket;
    if (!bucket) throw new Error('no console bucket');
    expect(built.resources[idOf(bucket)]?.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    });
    const [oacId, oac] = lookups.only('AWS::CloudFront::OriginAccessControl');
    expect(oac.Properties.OriginAccessControlConfig).toMatchObject({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
    const config = configOf(built.resources);
    const origin = config.Origins.find((candidate) => candidate.Id === behaviour(config, BEHAVIOURS.console).TargetOriginId);
    expect(origin?.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [oacId, 'Id'] });
    const [, deployment] = lookups.only('Custom::CDKBucketDeployment');
    expect(deployment.Properties).toMatchObject({ DestinationBucketKeyPrefix: 'console/', DistributionPaths: ['/console*'] });
    const policy = lookups.ofType('AWS::S3::BucketPolicy').find(([, candidate]) => JSON.stringify(candidate.Properties.Bucket).includes(idOf(bucket)));
    const statements = JSON.stringify(policy?.[1].Properties.PolicyDocument);
    expect(statements).toContain('"Service":"cloudfront.amazonaws.com"');
    expect(statements).toContain('aws:SecureTransport');
  });

  it('are cached a day, keyed by the query (the page names each asset with its content hash), GET only, and /console/ serves the page', () => {
    const config = configOf(built.resources);
    const files = behaviour(config, BEHAVIOURS.console);
    expect(files.AllowedMethods).toEqual(['GET', 'HEAD']);
    expect(built.resources[(files.CachePolicyId as { Ref: string }).Ref]?.Properties.CachePolicyConfig).toMatchObject({
      DefaultTTL: CONSOLE_CACHE_SECONDS,
      ParametersInCacheKeyAndForwardedToOrigin: { QueryStringsConfig: { QueryStringBehavior: 'all' } },
    });
    const functions = lookups.ofType('AWS::CloudFront::Function').map(([, fn]) => String(fn.Properties.FunctionCode));
    expect(functions.some((code) => code.includes("request.uri = '/console/index.html'"))).toBe(true);
    expect(functions.some((code) => code.includes("event.request.uri === '/'") && code.includes("'/console/'"))).toBe(true);
  });

  it('route /console/api/* to the console API when its origin is given, before the files', () => {
    const config = configOf(withConsoleApi);
    expect(config.CacheBehaviors.map((candidate) => candidate.PathPattern).slice(0, 2)).toEqual([BEHAVIOURS.consoleApi, BEHAVIOURS.console]);
    expect(config.CacheBehaviors[0]).toMatchObject({ CachePolicyId: CACHING_DISABLED, OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER });
    const origin = config.Origins.find((candidate) => candidate.Id === config.CacheBehaviors[0]?.TargetOriginId);
    expect(origin?.DomainName).toBe('console-api.example.com');
  });

  it('are left out with -c console=false: no bucket, no deployment, no ConsoleUrl, the APIs still behind one URL', () => {
    const config = configOf(withoutConsole.resources);
    expect(config.CacheBehaviors.map((candidate) => candidate.PathPattern)).toEqual([
      BEHAVIOURS.ownerApi,
      BEHAVIOURS.stub,
      BEHAVIOURS.loader,
      BEHAVIOURS.discord,
      BEHAVIOURS.shops,
      BEHAVIOURS.free,
    ]);
    expect(Object.values(withoutConsole.resources).filter((resource) => resource.Type === 'Custom::CDKBucketDeployment')).toEqual([]);
    expect(withoutConsole.stack.frontDoor!.consoleBucket).toBeUndefined();
    const outputs = withoutConsole.template.toJSON().Outputs as Record<string, unknown>;
    expect(outputs).toHaveProperty('ServiceUrl');
    expect(outputs).not.toHaveProperty('ConsoleUrl');
  });

  it('are required unless -c console=false, with a sentence saying how to synthesize without them', () => {
    expect(() => new DeveloperApiStack(templateOnlyApp(), 'NoFiles')).toThrow('synthesize with -c console=false');
  });
});
