import { type CfnElement, CfnOutput, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ORIGIN_VERIFY_HEADER } from '#http/http-api';
import { KEEP_UNLESS_JUST_CREATED } from './keep';

/** The console's files and, once its function exists, the origin of `/console/api/*` (contract §2). */
interface ConsoleHosting {
  /** What `buildConsole(outDir)` wrote (index.html and its assets), deployed under `console/` in a private bucket. */
  files: s3deploy.ISource;
  /** The console API (`lambdas/functions/console-api.ts`): its function URL or HTTP API as an origin. */
  apiOrigin?: cloudfront.IOrigin;
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
  /** Where the distribution's and the console bucket's access logs go (a bucket with ACLs enabled, as CloudFront's logging needs). */
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
 * What a browser may load on the console: its own files and its own API, nothing inline (the build writes no inline
 * script or style), nothing framing it. The API answers carry it too, where it forbids everything they never use.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Two years, the HSTS preload list's floor. */
export const HSTS_SECONDS = 63_072_000;

/**
 * The path patterns of the distribution, most specific first (CloudFront takes the first that matches). Everything
 * else (the default behaviour) goes to the owner API, whose gateway responses answer an unknown path in JSON.
 */
export const BEHAVIOURS = {
  consoleApi: '/console/api/*',
  console: '/console*',
  ownerApi: '/v1/projects/*',
  stub: '/v1/loader/stub/*',
  loader: '/v1/loader/*',
  discord: '/v1/discord/*',
  shops: '/v1/shops/*',
} as const;

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
  readonly responseHeaders: cloudfront.ResponseHeadersPolicy;

  constructor(scope: Construct, id: string, props: FrontDoorProps) {
    super(scope, id);
    const stack = Stack.of(this);

    this.responseHeaders = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: 'Script Distribution: CSP without inline script, HSTS, no framing, no sniffing',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: CONTENT_SECURITY_POLICY, override: true },
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
      // A dynamic reference: the template holds the secret's ARN, CloudFormation puts its value in the header.
      customHeaders: { [ORIGIN_VERIFY_HEADER]: props.originSecret.secretValue.unsafeUnwrap() },
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
        // Rebuilt from the repository at every deployment; kept when the stack goes, like the stack's other buckets
        // (an emptying custom resource would be one more function to run and review for a few files), but not after
        // a create that rolled back, so a retry makes no duplicate.
        removalPolicy: KEEP_UNLESS_JUST_CREATED,
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
          functionAssociations: [{ eventType: cloudfront.FunctionEventType.VIEWER_REQUEST, function: this.forwardedHost() }],
        };
      }
      additionalBehaviors[BEHAVIOURS.console] = {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.consoleBucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: consoleCache,
        responseHeadersPolicy: this.responseHeaders,
        functionAssociations: [{ eventType: cloudfront.FunctionEventType.VIEWER_REQUEST, function: this.consolePaths() }],
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

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Script Distribution: console, owner API, loader and Discord routes on one URL',
      defaultBehavior: {
        ...api,
        origin: ownerApi,
        // `GET /` is a person at the bare URL: the console, when there is one.
        ...(props.console ? { functionAssociations: [{ eventType: cloudfront.FunctionEventType.VIEWER_REQUEST, function: this.rootToConsole() }] } : {}),
      },
      additionalBehaviors,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      // Every edge location: the buyers far from the Region are the point (docs/loader.md, "Latency").
      priceClass: cloudfront.PriceClass.PRICE_CLASS_ALL,
      enableIpv6: true,
      enableLogging: true,
      logBucket: props.accessLogs,
      logFilePrefix: 'cloudfront/',
      ...(props.webAclArn ? { webAclId: props.webAclArn } : {}),
    });
    this.serviceUrl = `https://${this.distribution.distributionDomainName}`;

    if (props.console && this.consoleBucket) {
      const deployment = new s3deploy.BucketDeployment(this, 'ConsoleDeployment', {
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
      acknowledgeDeploymentHandler(deployment, this.consoleBucket);
      new CfnOutput(stack, 'ConsoleUrl', { description: 'The publisher console (sign in with an API token)', value: `${this.serviceUrl}/console/` });
    }
    new CfnOutput(stack, 'ServiceUrl', {
      description: 'The one URL: the owner API (<ServiceUrl>/v1/projects/...), the loader routes (<ServiceUrl>/v1/loader/...) and the console',
      value: this.serviceUrl,
    });
    this.acknowledgeReviewedFindingsOfTheDistribution(props);
  }

  /** `/console` to `/console/`, and a path without a file name to the page: one page serves every console route. */
  private consolePaths(): cloudfront.Function {
    return this.viewerRequestFunction('ConsolePaths', 'The console page for /console/ and its routes', [
      'var request = event.request;',
      "if (request.uri === '/console') return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '/console/' } } };",
      "var name = request.uri.slice(request.uri.lastIndexOf('/') + 1);",
      "if (name.indexOf('.') === -1) request.uri = '/console/index.html';",
      'return request;',
    ]);
  }

  /** The viewer's Host as `x-forwarded-host`, set here so no client's header of that name reaches the console API. */
  private forwardedHost(): cloudfront.Function {
    return this.viewerRequestFunction('ForwardedHost', "The console's host for the console API's Origin check", [
      'var request = event.request;',
      "request.headers['x-forwarded-host'] = { value: request.headers.host.value };",
      'return request;',
    ]);
  }

  private rootToConsole(): cloudfront.Function {
    return this.viewerRequestFunction('RootToConsole', 'GET / to the console', [
      "if (event.request.uri === '/') return { statusCode: 302, statusDescription: 'Found', headers: { location: { value: '/console/' } } };",
      'return event.request;',
    ]);
  }

  /** A CloudFront function (JavaScript runtime 2.0) whose `handler(event)` runs `body`, one statement a line. */
  private viewerRequestFunction(id: string, comment: string, body: readonly string[]): cloudfront.Function {
    return new cloudfront.Function(this, id, {
      comment,
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(['function handler(event) {', ...body.map((line) => `  ${line}`), '}'].join('\n')),
    });
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
  Validations.of(handler).acknowledge({
    id: 'AwsSolutions-L1',
    reason: "CDK pins the BucketDeployment handler's runtime (Python); it runs only at deployment.",
  });
}
