import { Aws, CfnCondition, type CfnElement, CfnOutput, CfnResource, Duration, Fn, RemovalPolicy, SecretValue, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ORIGIN_VERIFY_HEADER } from '#http/origin-verify';
import { BEHAVIOURS, contentSecurityPolicy, FUNCTION_OF, HSTS_SECONDS, regionalBucketOrigin, VIEWER_REQUEST_FUNCTIONS } from '../front-door-rules';
import { KEEP_UNLESS_JUST_CREATED } from './keep';

/** The console's files and, once its function exists, the origin of `/console/api/*` (contract §2). */
interface ConsoleHosting {
  /** What `buildConsole(outDir)` wrote (index.html and its assets), deployed under `console/` in a private bucket. */
  files: s3deploy.ISource;
  /** The console API (`lambdas/functions/console-api.ts`): its function URL or HTTP API as an origin. */
  apiOrigin?: cloudfront.IOrigin;
  /** Where the console's uploads go (presigned PUTs from the page): the CSP lets the page reach its regional endpoint. */
  uploadBucket?: s3.IBucket;
}

export interface FrontDoorProps {
  /** The owner API (`/v1/projects/*`), reached at its stage. */
  restApi: apigateway.RestApi;
  /** The loader routes' HTTP API (`/v1/loader/*`, `/v1/discord/*`). */
  loaderApi: apigwv2.HttpApi;
  /**
   * Sent to the loader origin in ORIGIN_VERIFY_HEADER on every request: the loader function trusts the viewer's
   * address CloudFront forwards only on a request that carries it.
   */
  originSecret: secretsmanager.ISecret;
  /** The secret's version CloudFront sends (its `current` field); the version Secrets Manager marks current when absent. */
  originSecretVersion?: string;
  /** Where the console bucket's server access logs go (S3's log delivery, by bucket policy; ACLs disabled). */
  accessLogs: s3.IBucket;
  /** Left out with `-c console=false`. */
  console?: ConsoleHosting;
  /** A CLOUDFRONT-scope web ACL (`-c waf=true`, lib/constructs/per-address-firewall.ts). */
  webAclArn?: string;
}

/** The loader routes' hosted stub (issue 30): the only API answer CloudFront keeps, as long as this. */
export const STUB_CACHE_SECONDS = { default: 60, max: 300 } as const;
/** The console's files: every deployment invalidates them, and the page names its assets with a content hash. */
export const CONSOLE_CACHE_SECONDS = 86_400;

/**
 * The Regions CloudFront delivers no standard (legacy) log to: the opt-in Regions ("Configure standard logging
 * (legacy)", https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logging-legacy-s3.html,
 * "Choose an Amazon S3 bucket"; the opt-in Regions are those of "Enable or disable AWS Regions in your account",
 * https://docs.aws.amazon.com/accounts/latest/reference/manage-acct-regions.html). A stack in one of them runs
 * without the distribution's logs (the APIs' own access logs still record every request that reaches the Region).
 */
export const NO_CLOUDFRONT_LOG_REGIONS = [
  'af-south-1',
  'ap-east-1',
  'ap-east-2',
  'ap-south-2',
  'ap-southeast-3',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ca-west-1',
  'eu-central-2',
  'eu-south-1',
  'eu-south-2',
  'il-central-1',
  'me-central-1',
  'me-south-1',
  'mx-central-1',
] as const;

/** The distribution's request logs: kept as long as the APIs' access logs. */
const CLOUDFRONT_LOG_DAYS = 90;

/**
 * The one front door (docs/operations.md, "The front door"): a CloudFront distribution serving, on one HTTPS name,
 * the console's files from a private bucket (origin access control), `/console/api/*` from the console's function,
 * the owner API from its REST stage and the loader and Discord routes from their HTTP API. TLS ends at the edge
 * nearest the buyer and one pooled connection crosses to the Region (docs/loader.md, "Latency"). Nothing is cached
 * but the console's files and the hosted stub; a key check, a script fetch and every owner call reach the Region.
 */
export class FrontDoor extends Construct {
  readonly distribution: cloudfront.Distribution;
  /** `https://<distribution>.cloudfront.net`: the URL every client is given. */
  readonly serviceUrl: string;
  readonly consoleBucket?: s3.Bucket;
  /** The distribution's standard logs (ACLs enabled, as CloudFront needs); created only where CloudFront delivers them. */
  readonly logBucket: s3.Bucket;
  /** True in the Regions CloudFront delivers standard logs to: the log bucket and the distribution's logging exist only there. */
  readonly logsDeliverable: CfnCondition;
  readonly responseHeaders: cloudfront.ResponseHeadersPolicy;
  /** What copies the console's files into their bucket, at deployment (see `deployConsoleLast`). */
  readonly consoleDeployment?: s3deploy.BucketDeployment;

  constructor(scope: Construct, id: string, props: FrontDoorProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const uploads = props.console?.uploadBucket;
    const uploadOrigin = uploads ? regionalBucketOrigin(uploads.bucketName, stack.region, stack.urlSuffix) : undefined;

    this.responseHeaders = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: 'Script Distribution: CSP without inline script, HSTS, no framing, no sniffing',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: contentSecurityPolicy(uploadOrigin), override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.seconds(HSTS_SECONDS), includeSubdomains: true, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
      },
    });

    // Every API answer is made per request: nothing cached, every viewer header, query and cookie passed on but
    // Host (API Gateway routes by its own name), and CloudFront's own headers, CloudFront-Viewer-Address among them.
    const api = {
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      responseHeadersPolicy: this.responseHeaders,
    } satisfies Partial<cloudfront.BehaviorOptions>;

    const ownerApi = new origins.RestApiOrigin(props.restApi);
    const loader = new origins.HttpOrigin(`${props.loaderApi.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`, {
      protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
      originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
      // A dynamic reference: the template holds the secret's ARN, CloudFormation puts its `current` value in the header.
      customHeaders: {
        [ORIGIN_VERIFY_HEADER]: SecretValue.secretsManager(props.originSecret.secretArn, {
          jsonField: 'current',
          ...(props.originSecretVersion ? { versionId: props.originSecretVersion } : {}),
        }).unsafeUnwrap(),
      },
    });
    const stubCache = new cloudfront.CachePolicy(this, 'StubCache', {
      comment: 'The hosted stub: one per project (the path), the same for every buyer',
      defaultTtl: Duration.seconds(STUB_CACHE_SECONDS.default),
      maxTtl: Duration.seconds(STUB_CACHE_SECONDS.max),
      minTtl: Duration.seconds(0),
      headerBehavior: cloudfront.CacheHeaderBehavior.none(),
      queryStringBehavior: cloudfront.CacheQueryStringBehavior.none(),
      cookieBehavior: cloudfront.CacheCookieBehavior.none(),
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    });

    const additionalBehaviors: Record<string, cloudfront.BehaviorOptions> = {};
    if (props.console) {
      this.consoleBucket = new s3.Bucket(this, 'ConsoleFiles', {
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        encryption: s3.BucketEncryption.S3_MANAGED,
        enforceSSL: true,
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        serverAccessLogsBucket: props.accessLogs,
        serverAccessLogsPrefix: 'console/',
        // Rebuilt from the repository at every deployment, so emptied and deleted with the stack. Above all when a
        // create rolls back: CloudFormation cannot delete a bucket that holds objects, and one the deployment had
        // filled would leave the stack in ROLLBACK_FAILED ("DeletionPolicy attribute",
        // https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-deletionpolicy.html: "you
        // must delete all objects in the bucket for deletion to succeed"). CDK's emptying custom resource runs first.
        removalPolicy: RemovalPolicy.DESTROY,
        autoDeleteObjects: true,
      });
      const consoleCache = new cloudfront.CachePolicy(this, 'ConsoleCache', {
        comment: "The console's files: the page names each asset with its content hash in the query",
        defaultTtl: Duration.seconds(CONSOLE_CACHE_SECONDS),
        maxTtl: Duration.seconds(CONSOLE_CACHE_SECONDS),
        minTtl: Duration.seconds(0),
        headerBehavior: cloudfront.CacheHeaderBehavior.none(),
        queryStringBehavior: cloudfront.CacheQueryStringBehavior.all(),
        cookieBehavior: cloudfront.CacheCookieBehavior.none(),
        enableAcceptEncodingGzip: true,
        enableAcceptEncodingBrotli: true,
      });
      if (props.console.apiOrigin) {
        additionalBehaviors[BEHAVIOURS.consoleApi] = {
          ...api,
          origin: props.console.apiOrigin,
          // The console API checks a change's Origin against the host the browser asked for, which its function URL
          // origin does not see (the Host header goes to the origin as the function URL's own).
          functionAssociations: [
            { eventType: cloudfront.FunctionEventType.VIEWER_REQUEST, function: this.viewerRequestFunction('ForwardedHost', 'consoleApi') },
          ],
        };
      }
      additionalBehaviors[BEHAVIOURS.console] = {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.consoleBucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: consoleCache,
        responseHeadersPolicy: this.responseHeaders,
        functionAssociations: [{ eventType: cloudfront.FunctionEventType.VIEWER_REQUEST, function: this.viewerRequestFunction('ConsolePaths', 'console') }],
      };
    }
    additionalBehaviors[BEHAVIOURS.ownerApi] = { ...api, origin: ownerApi };
    additionalBehaviors[BEHAVIOURS.stub] = {
      ...api,
      origin: loader,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
      cachePolicy: stubCache,
      originRequestPolicy: undefined,
    };
    additionalBehaviors[BEHAVIOURS.loader] = { ...api, origin: loader };
    additionalBehaviors[BEHAVIOURS.discord] = { ...api, origin: loader };
    additionalBehaviors[BEHAVIOURS.shops] = { ...api, origin: loader };
    additionalBehaviors[BEHAVIOURS.free] = { ...api, origin: loader };

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Script Distribution: console, owner API, loader and Discord routes on one URL',
      defaultBehavior: {
        ...api,
        origin: ownerApi,
        // `GET /` is a person at the bare URL: the console, when there is one.
        ...(props.console
          ? {
              functionAssociations: [
                { eventType: cloudfront.FunctionEventType.VIEWER_REQUEST, function: this.viewerRequestFunction('RootToConsole', 'default') },
              ],
            }
          : {}),
      },
      additionalBehaviors,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      // Every edge location: the buyers far from the Region are the point (docs/loader.md, "Latency").
      priceClass: cloudfront.PriceClass.PRICE_CLASS_ALL,
      enableIpv6: true,
      ...(props.webAclArn ? { webAclId: props.webAclArn } : {}),
    });
    this.serviceUrl = `https://${this.distribution.distributionDomainName}`;
    ({ bucket: this.logBucket, deliverable: this.logsDeliverable } = this.standardLogs());

    if (props.console && this.consoleBucket) {
      this.consoleDeployment = new s3deploy.BucketDeployment(this, 'ConsoleDeployment', {
        sources: [props.console.files],
        destinationBucket: this.consoleBucket,
        destinationKeyPrefix: 'console/',
        // A new page reaches browsers at once; its assets change name with their content.
        distribution: this.distribution,
        distributionPaths: ['/console*'],
        memoryLimit: 256,
        // Its own log group, not CDK's default one (retained even after a create that rolled back).
        logGroup: new logs.LogGroup(this, 'ConsoleDeploymentLogs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: KEEP_UNLESS_JUST_CREATED }),
      });
      acknowledgeDeploymentHandler(this.consoleDeployment, this.consoleBucket);
      new CfnOutput(stack, 'ConsoleUrl', { description: 'The publisher console (sign in with an API token)', value: `${this.serviceUrl}/console/` });
    }
    new CfnOutput(stack, 'ServiceUrl', {
      description: 'The one URL: the owner API (<ServiceUrl>/v1/projects/...), the loader routes (<ServiceUrl>/v1/loader/...) and the console',
      value: this.serviceUrl,
    });
    this.acknowledgeReviewedFindingsOfTheDistribution(props);
  }

  /**
   * Copy the console's files only once every other resource of the stack exists (call last): a create that fails
   * does so before any file is written, so the console bucket is still empty when the rollback deletes it, and its
   * server access log has written nothing into the access-log bucket, which the rollback deletes too.
   */
  deployConsoleLast(): void {
    const copy = this.consoleDeployment?.node
      .findAll()
      .find((construct) => construct instanceof CfnResource && construct.cfnResourceType === 'Custom::CDKBucketDeployment');
    if (!copy) return;
    const stack = Stack.of(this);
    // Not the resources under a condition (a DependsOn on one that is not created fails the template), nor the copy's
    // own handler and layer, which it needs first anyway.
    const others = stack.node
      .findAll()
      .filter((construct): construct is CfnResource => construct instanceof CfnResource && construct !== copy && Stack.of(construct) === stack)
      .filter((resource) => !resource.cfnOptions.condition && !copy.node.dependencies.includes(resource));
    copy.node.addDependency(...others);
  }

  /**
   * The distribution's standard logs, in a bucket of their own. CloudFront's standard logging (legacy) writes with
   * ACLs: "Your bucket must have access control list (ACL) enabled" and not "S3 Object Ownership set to bucket owner
   * enforced" (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logging-legacy-s3.html;
   * aws-cdk issue 25291), so the scripts' access-log bucket (ACLs disabled) refused the create. Here Object
   * Ownership is BucketOwnerPreferred: ACLs are enabled, CloudFront grants its log delivery account what it needs
   * when the distribution is created, and the objects it writes are the bucket owner's. In an opt-in Region,
   * where CloudFront delivers no standard log, neither the bucket nor the logging setting is created (a condition
   * on the Region, so a template synthesized without a Region is right too).
   */
  private standardLogs(): { bucket: s3.Bucket; deliverable: CfnCondition } {
    // CDK nests Fn::Or in groups of ten, the most one takes.
    const deliverable = new CfnCondition(this, 'LogsDeliverable', {
      expression: Fn.conditionNot(Fn.conditionOr(...NO_CLOUDFRONT_LOG_REGIONS.map((region) => Fn.conditionEquals(Aws.REGION, region)))),
    });
    const bucket = new s3.Bucket(this, 'Logs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(CLOUDFRONT_LOG_DAYS) }],
      removalPolicy: KEEP_UNLESS_JUST_CREATED,
    });
    (bucket.node.defaultChild as s3.CfnBucket).cfnOptions.condition = deliverable;
    const policy = bucket.policy?.node.defaultChild as s3.CfnBucketPolicy | undefined;
    if (!policy) throw new Error('The log bucket has no policy to put under its condition');
    policy.cfnOptions.condition = deliverable;
    (this.distribution.node.defaultChild as cloudfront.CfnDistribution).addPropertyOverride(
      'DistributionConfig.Logging',
      Fn.conditionIf(deliverable.logicalId, { Bucket: bucket.bucketRegionalDomainName, Prefix: 'cloudfront/', IncludeCookies: false }, Aws.NO_VALUE),
    );
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR3',
      reason:
        'Logging is on under a condition on the Region (cdk-nag reads only a literal setting): every Region but the opt-in ones, where CloudFront delivers no standard log.',
    });
    Validations.of(bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: "It holds the distribution's request logs; logging each read of them would log the logs.",
    });
    return { bucket, deliverable };
  }

  /** The CloudFront function a behaviour runs on the viewer request (lib/front-door-rules.ts, which the local front door runs too). */
  private viewerRequestFunction(id: string, behaviour: keyof typeof FUNCTION_OF): cloudfront.Function {
    const name = FUNCTION_OF[behaviour];
    if (!name) throw new Error(`The ${behaviour} behaviour runs no function`);
    const { comment, code } = VIEWER_REQUEST_FUNCTIONS[name];
    return new cloudfront.Function(this, id, { comment, runtime: cloudfront.FunctionRuntime.JS_2_0, code: cloudfront.FunctionCode.fromInline(code) });
  }

  private acknowledgeReviewedFindingsOfTheDistribution(props: FrontDoorProps): void {
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason: "Buyers run the publishers' scripts from every country; the service has no country to refuse.",
    });
    if (!props.webAclArn) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          'WAF is opt-in (-c waf=true, docs/operations.md): the loader function limits each address in memory, the owner API each token, and each function group has reserved concurrency.',
      });
    }
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR4',
      reason:
        "The distribution's own *.cloudfront.net name is served with CloudFront's certificate, whose policy CloudFront sets; the minimum protocol version (TLS 1.2 2021) applies to a custom domain.",
    });
  }
}

/**
 * CDK's own BucketDeployment handler (a singleton function at the stack's root) copies the console's files from the
 * CDK asset bucket and invalidates the distribution: its findings are CDK's choices, reviewed here.
 */
function acknowledgeDeploymentHandler(deployment: s3deploy.BucketDeployment, bucket: s3.Bucket): void {
  const reason =
    "CDK's BucketDeployment handler, which runs only at deployment: it reads the CDK asset bucket, writes the console bucket and invalidates the distribution, as CDK grants it.";
  Validations.of(deployment.handlerRole).acknowledge(
    { id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', reason },
    ...['s3:GetBucket*', 's3:GetObject*', 's3:List*', 's3:Abort*', 's3:DeleteObject*'].map((action) => ({
      id: `AwsSolutions-IAM5[Action::${action}]`,
      reason,
    })),
    { id: 'AwsSolutions-IAM5[Resource::*]', reason: `${reason} CloudFront's CreateInvalidation takes no narrower resource in CDK's grant.` },
  );
  const stack = Stack.of(deployment);
  // cdk-nag names the asset bucket as the template has it: pseudo parameters in a stack of no set environment.
  const literal = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<${pseudo}>` : value);
  const assets = `arn:${literal(stack.partition, 'AWS::Partition')}:s3:::cdk-hnb659fds-assets-${literal(stack.account, 'AWS::AccountId')}-${literal(stack.region, 'AWS::Region')}/*`;
  Validations.of(deployment.handlerRole).acknowledge({ id: `AwsSolutions-IAM5[Resource::${assets}]`, reason });
  const bucketId = stack.resolve(stack.getLogicalId(bucket.node.defaultChild as CfnElement)) as string;
  Validations.of(deployment.handlerRole).acknowledge({ id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`, reason });
  const handler = stack.node.children.find((child) => child.node.id.startsWith('Custom::CDKBucketDeployment'));
  if (!handler) throw new Error("BucketDeployment's handler is not where CDK puts it");
  const runtime = "CDK pins the BucketDeployment handler's runtime (Python); it runs only at deployment.";
  Validations.of(handler).acknowledge(
    { id: 'AwsSolutions-L1', reason: runtime },
    { id: 'Serverless-LambdaLatestVersion', reason: runtime },
    {
      id: 'Serverless-LambdaDLQ',
      reason: "CloudFormation invokes CDK's BucketDeployment handler synchronously and reads its answer; a failure fails the deployment.",
    },
    { id: 'Serverless-LambdaTracing', reason: "CDK's BucketDeployment handler runs once per deployment; its log group holds what it did." },
  );
}
