import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct, Node } from 'constructs';
import { KEY_ATTRIBUTE_TYPES, TABLE } from '#adapters/table-definition';
import { AUDIT_UNSETTLED } from '#domain/audit';
import { AUTHORIZER_CACHE_SECONDS, AUTHORIZER_TIMEOUT_SECONDS } from '#domain/tokens';
import { isQuiet, ROUTES, type Route, timeoutSecondsOf } from '#http/routes';
import { EVERY_ROUTE } from '#http/table-grants';
import {
  FUNCTIONS_PER_GROUP,
  planReservations,
  QUIET_ROUTE_THROTTLE,
  RESERVED_CONCURRENCY,
  type ReservationPlan,
  STAGE_METHOD_THROTTLE,
  USAGE_PLAN_THROTTLE,
  WAF_DEFAULT_REQUESTS_PER_MINUTE,
  WAF_MIN_REQUESTS_PER_MINUTE,
} from '#lib/capacity';
import { Analytics } from '#lib/constructs/analytics';
import { ConsoleApi } from '#lib/constructs/console-api';
import { DiscordInteractions } from '#lib/constructs/discord-interactions';
import { FreeKeys } from '#lib/constructs/free-keys';
import { FrontDoor } from '#lib/constructs/front-door';
import { addJsonGatewayResponses } from '#lib/constructs/json-gateway-responses';
import { KEEP_UNLESS_JUST_CREATED } from '#lib/constructs/keep';
import { LoaderApi } from '#lib/constructs/loader-api';
import { LoaderCheck } from '#lib/constructs/loader-check';
import { logLineAlarm } from '#lib/constructs/log-line-alarm';
import { Monitoring } from '#lib/constructs/monitoring';
import { EdgeFirewallStack, PerAddressFirewall } from '#lib/constructs/per-address-firewall';
import { ScriptBucket } from '#lib/constructs/script-bucket';
import { ServiceFunction } from '#lib/constructs/service-function';
import { ShopReceiver } from '#lib/constructs/shop-receiver';
import { bindTable, TOKEN_LOOKUP } from '#lib/constructs/table-access';
import { WebhookDelivery } from '#lib/constructs/webhook-delivery';
import { booleanContext, customDomainContext, EDGE_FIREWALL_REGION, emailContext, integerContext, principalArnContext } from '#lib/context';

/**
 * What API Gateway lets through to the authorizer: `Bearer <token68>` exactly as `parseBearer` reads it (scheme in
 * any case, surrounding whitespace ignored). Anything else is refused with 401 before a Lambda runs.
 */
export const BEARER_VALIDATION_REGEX = '^\\s*[Bb][Ee][Aa][Rr][Ee][Rr] +[A-Za-z0-9._~+/-]{1,512}=*\\s*$';

export const STAGE_NAME = 'prod';

/**
 * The authorizer, webhook fan-out and delivery, telemetry ingest (invoked, queued and streamed), the daily detector,
 * the alert digest, the loader check, the Discord interactions, the shop receiver, the free keys' page.
 */
export const FUNCTIONS_BESIDE_ROUTES = 12;

/** The most `-c reservableConcurrency` may say: Lambda's concurrency quota can be raised to tens of thousands. */
const MAX_RESERVABLE_CONCURRENCY = 1_000_000;

const ATTRIBUTE_TYPES = { S: dynamodb.AttributeType.STRING, N: dynamodb.AttributeType.NUMBER } as const;

function keyAttribute(name: string): dynamodb.Attribute {
  const type = KEY_ATTRIBUTE_TYPES[name];
  if (!type) throw new Error(`KEY_ATTRIBUTE_TYPES has no type for key attribute "${name}"`);
  return { name, type: ATTRIBUTE_TYPES[type] };
}

/** `list-keys` → `ListKeys` */
const pascalCase = (entry: string) => entry.replace(/(?:^|-)([a-z])/g, (_, letter: string) => letter.toUpperCase());

export interface DeveloperApiStackProps extends StackProps {
  /**
   * The console's built files (`buildConsole(outDir)` of console/build.ts; bin/app.ts builds them before synth).
   * Needed unless `-c console=false`.
   */
  consoleFiles?: s3deploy.ISource;
  /** The console API's origin (`/console/api/*`), once its function exists (lib/constructs/console-api.ts). */
  consoleApiOrigin?: cloudfront.IOrigin;
}

/**
 * The Developer API: the one table, one Lambda per route behind a REST API with a token authorizer, a usage
 * plan that throttles per token, the loader routes behind their own HTTP API (docs/loader.md), and API Gateway's own responses rewritten to `{"error"}` JSON; the table's
 * stream feeds webhook delivery, and the analytics detectors write their events into the same table.
 */
export class DeveloperApiStack extends Stack {
  readonly table: dynamodb.TableV2;
  readonly api: apigateway.RestApi;
  readonly webhooks: WebhookDelivery;
  readonly analytics: Analytics;
  readonly loaderCheck: LoaderCheck;
  /** Buyers' Discord commands, on the loader routes' front door (docs/discord.md). */
  readonly discord: DiscordInteractions;
  /** Shops' webhooks, on the public routes' front door (docs/selling-keys.md). */
  readonly shops: ShopReceiver;
  /** The free keys' key page, on the loader routes' front door (docs/free-keys.md). */
  readonly freeKeys: FreeKeys;
  /** The loader routes' own front door (an HTTP API), and the custom domain when one is given. */
  readonly loaderApi: LoaderApi;
  readonly scripts: ScriptBucket;
  readonly authorizerFunction: ServiceFunction;
  /** Each owner API route's function, by its entry (`list-keys`, ...). */
  readonly routeFunctions: Readonly<Record<Route['entry'], ServiceFunction>>;
  /**
   * The secret a shop order's keys derive from (docs/selling-keys.md): only the issue function may read it. Kept
   * when the stack is deleted, like the table: without it, no order recorded in the table can be answered again.
   */
  readonly keySecret: secretsmanager.Secret;
  /** Present when synthesized with `-c waf=true`: in this stack in us-east-1, else in `edgeFirewallStack`. */
  readonly firewall?: PerAddressFirewall;
  /** The web ACL's own stack in us-east-1, when `-c waf=true` and this stack is in another Region. */
  readonly edgeFirewallStack?: EdgeFirewallStack;
  /** The publisher console's API function (`/console/api/*` on the front door); absent with `-c console=false`. */
  readonly consoleApi?: ConsoleApi;
  /**
   * The one CloudFront distribution in front of everything: its URL is the output ServiceUrl. Absent with
   * `-c frontDoor=false` (an account CloudFront has not verified yet): the APIs then answer at ApiUrl and LoaderUrl.
   */
  readonly frontDoor?: FrontDoor;
  /** The value of the front door's secret origin header, by which the loader function knows a request came through it. */
  readonly originSecret: secretsmanager.Secret;
  readonly monitoring: Monitoring;
  /** Which concurrency groups this synth reserves (`-c reservableConcurrency`; none by default). */
  readonly reservations: ReservationPlan;

  constructor(scope: Construct, id: string, props: DeveloperApiStackProps = {}) {
    const { consoleFiles, consoleApiOrigin, ...stackProps } = props;
    const { frontDoor, console: withConsole } = frontDoorContext(scope.node);
    const firewalled = booleanContext(scope.node, 'waf', false);
    // The web ACL may live in us-east-1 beside a stack elsewhere: its ARN then crosses Regions.
    super(scope, id, { ...stackProps, crossRegionReferences: stackProps.crossRegionReferences ?? firewalled });

    this.table = new dynamodb.TableV2(this, 'Table', {
      partitionKey: keyAttribute(TABLE.partitionKey),
      sortKey: keyAttribute(TABLE.sortKey),
      globalSecondaryIndexes: Object.values(TABLE.indexes).map((index) => ({
        indexName: index.name,
        partitionKey: keyAttribute(index.partitionKey),
        sortKey: keyAttribute(index.sortKey),
        projectionType: dynamodb.ProjectionType[index.projection],
      })),
      billing: dynamodb.Billing.onDemand(),
      dynamoStream: dynamodb.StreamViewType[TABLE.stream],
      timeToLiveAttribute: TABLE.ttlAttribute,
      // A deleted table leaves a system backup for 35 days. No deletion protection: it would refuse CloudFormation's
      // delete when a first create rolls back, leaving the stack in ROLLBACK_FAILED (docs/operations.md, "A first deploy").
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // Keys, projects and tokens are the publisher's data: they outlive the stack, but not a create that rolled back.
      removalPolicy: KEEP_UNLESS_JUST_CREATED,
    });

    // Kept after the stack is gone: it is the record of who revoked which keys and rolled back which versions.
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: KEEP_UNLESS_JUST_CREATED });
    this.api = new apigateway.RestApi(this, 'Api', {
      restApiName: 'script-distribution-developer-api',
      description: 'Script Distribution Developer API (paths start with /v1)',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      // The authorizer's usageIdentifierKey (the token's SHA-256) is the usage-plan key: throttling is per token.
      apiKeySourceType: apigateway.ApiKeySourceType.AUTHORIZER,
      // API Gateway writes access and execution logs only once the account has its CloudWatch role.
      cloudWatchRole: true,
      deployOptions: {
        stageName: STAGE_NAME,
        tracingEnabled: true,
        accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
        accessLogFormat: accessLogFormat(),
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        // Full request logging would write the Authorization header, i.e. raw API tokens, to CloudWatch.
        dataTraceEnabled: false,
        throttlingRateLimit: STAGE_METHOD_THROTTLE.rateLimit,
        throttlingBurstLimit: STAGE_METHOD_THROTTLE.burstLimit,
        methodOptions: Object.fromEntries(
          ROUTES.filter(isQuiet).map((route) => [
            `${route.path}/${route.method}`,
            { throttlingRateLimit: QUIET_ROUTE_THROTTLE.rateLimit, throttlingBurstLimit: QUIET_ROUTE_THROTTLE.burstLimit },
          ]),
        ),
      },
    });
    addJsonGatewayResponses(this.api);

    this.authorizerFunction = new ServiceFunction(this, 'AuthorizerFunction', {
      entry: 'functions/authorizer.ts',
      description: 'Developer API token authorizer: Bearer token -> owner',
      // A token revoke flushes the cache again once every run that could have read the token before has ended.
      timeout: Duration.seconds(AUTHORIZER_TIMEOUT_SECONDS),
    });
    bindTable(this.authorizerFunction, this.table, TOKEN_LOOKUP);
    const authorizer = new apigateway.TokenAuthorizer(this, 'TokenAuthorizer', {
      handler: this.authorizerFunction,
      identitySource: apigateway.IdentitySource.header('Authorization'),
      validationRegex: BEARER_VALIDATION_REGEX,
      // One token lookup per token per 30 s instead of per request keeps the authorizer off most requests' path.
      // `token revoke` flushes the stage's cache, so a revoked token stops at once; should the flush fail, the
      // cache lets it through for at most this long. The cached policy covers the whole API (the handlers
      // enforce the token's scope), so one cached answer serves every route.
      resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_SECONDS),
    });

    this.routeFunctions = Object.fromEntries(ROUTES.map((route) => [route.entry, this.addRoute(route, authorizer)])) as Record<Route['entry'], ServiceFunction>;
    // A bulk revoke answered 200 but its audit entry stayed `started`: its log line holds the outcome, the alarm says to look.
    logLineAlarm(this, 'BulkRevokeAuditUnsettled', {
      logGroup: this.routeFunctions['revoke-bulk'].logGroup,
      message: AUDIT_UNSETTLED,
      description: "A bulk revoke's audit entry could not be completed: the revoke-bulk log line holds its revoked_count.",
    });
    this.keySecret = new secretsmanager.Secret(this, 'KeySecret', {
      description: "HMAC secret shop orders' key values derive from; rotating it makes recorded orders unanswerable",
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: KEEP_UNLESS_JUST_CREATED,
    });
    this.keySecret.grantRead(this.routeFunctions['issue-keys']);
    this.routeFunctions['issue-keys'].addEnvironment('KEY_SECRET_ARN', this.keySecret.secretArn);
    Validations.of(this.keySecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Order keys derive from this secret: rotating it would make every recorded order answer other keys than it issued. Only the issue function, the shop receiver and the console (which seals shop secrets) read it.',
    });

    const usagePlan = this.api.addUsagePlan('UsagePlan', {
      name: 'developer-api-per-token',
      description: 'One API key per API token (value: the token SHA-256 hex), created with the token',
      throttle: USAGE_PLAN_THROTTLE,
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });

    // RestApi adds its own `Endpoint` output (stage URL with a trailing slash, hashed output name); ApiUrl replaces it.
    this.api.node.tryRemoveChild('Endpoint');
    new CfnOutput(this, 'ApiUrl', {
      description: 'Base URL of the owner API; requests go to <ApiUrl>/v1/projects/{id}/... (the loader routes are at LoaderUrl)',
      value: `https://${this.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${STAGE_NAME}`,
    });
    new CfnOutput(this, 'TableName', { description: 'The service table (TABLE_NAME for the dashboard CLI)', value: this.table.tableName });
    this.webhooks = new WebhookDelivery(this, 'Webhooks', { table: this.table });
    this.analytics = new Analytics(this, 'Analytics', { table: this.table });
    this.scripts = new ScriptBucket(this, 'ScriptStorage', { dashboardPrincipalArn: principalArnContext(this.node, 'dashboardPrincipalArn') });
    new CfnOutput(this, 'ScriptBucketName', {
      description: 'Bucket of the version scripts (SCRIPT_BUCKET for the dashboard CLI)',
      value: this.scripts.bucket.bucketName,
    });
    new CfnOutput(this, 'ScriptUploadPolicyArn', {
      description: "Attach to the dashboard's role or user: it may upload scripts",
      value: this.scripts.uploadPolicy.managedPolicyArn,
    });
    this.loaderCheck = new LoaderCheck(this, 'LoaderCheck', {
      table: this.table,
      telemetryQueue: this.analytics.telemetryQueue,
      scripts: this.scripts.bucket,
    });
    const loaderRole = this.loaderCheck.function.role;
    if (!loaderRole) throw new Error('The loader function has no role to let read the scripts');
    this.scripts.readableOnlyBy(loaderRole);
    this.discord = new DiscordInteractions(this, 'Discord', { table: this.table });
    this.shops = new ShopReceiver(this, 'Shops', { table: this.table, keySecret: this.keySecret });
    this.freeKeys = new FreeKeys(this, 'FreeKeys', { table: this.table, keySecret: this.keySecret });
    this.loaderApi = new LoaderApi(this, 'LoaderApi', {
      function: this.loaderCheck.function,
      discordFunction: this.discord.function,
      shopFunction: this.shops.function,
      freeKeysFunction: this.freeKeys.function,
      restApi: this.api,
      domain: customDomainContext(this.node),
    });
    // The console's own API (issue 27) behind the front door's /console/api/*. Its Loader page names the loader routes'
    // own URL: a function the distribution points at cannot be told the distribution's name (a dependency cycle).
    this.consoleApi = withConsole
      ? new ConsoleApi(this, 'ConsoleApi', {
          table: this.table,
          scripts: this.scripts,
          restApi: this.api,
          usagePlan,
          loaderBaseUrl: this.loaderApi.httpApi.apiEndpoint,
        })
      : undefined;
    if (this.consoleApi) {
      // The console seals a shop's signing secret when it connects one (lambdas/adapters/secret-sealer.ts).
      this.keySecret.grantRead(this.consoleApi.function);
      this.consoleApi.function.addEnvironment('KEY_SECRET_ARN', this.keySecret.secretArn);
    }
    this.reservations = this.reserveConcurrency();

    this.originSecret = new secretsmanager.Secret(this, 'OriginSecret', {
      description:
        'Sent by the front door to the loader origin (x-origin-verify): a request carrying it came through CloudFront, whose viewer address is then the buyer\'s. JSON {"current", "previous" while rotating}',
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'current', passwordLength: 48, excludePunctuation: true },
      // Nothing outlives the stack that reads it: a new stack makes a new one.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(this.originSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotated by hand in two steps (docs/operations.md, "Rotating the origin secret"): the loader accepts the current and the previous value, and a deploy with -c originSecretVersion points CloudFront at the new one; a rotation Lambda could not update the distribution in step.',
    });
    // The loader and Discord functions read the secret at their cold start (lambdas/runtime/aws.ts readOriginSecrets); no value in its configuration.
    const originSecretVersion = originSecretVersionContext(this.node);
    // The Discord function counts refused signatures per viewer address too (lambdas/domain/unsigned-refusals.ts).
    // The free keys' page binds a session to the viewer's address (lambdas/domain/free-keys/session.ts).
    for (const fn of [this.loaderCheck.function, this.discord.function, this.freeKeys.function]) {
      fn.addEnvironment('ORIGIN_SECRET_ARN', this.originSecret.secretArn);
      // A new version in the configuration replaces every running container, so none keeps a value read before the rotation.
      if (originSecretVersion) fn.addEnvironment('ORIGIN_SECRET_VERSION', originSecretVersion);
      this.originSecret.grantRead(fn);
    }
    if (firewalled) {
      const requestsPerMinute = integerContext(this.node, 'wafRateLimit', WAF_DEFAULT_REQUESTS_PER_MINUTE, {
        min: WAF_MIN_REQUESTS_PER_MINUTE,
        max: 2_000_000_000,
      });
      if (Token.isUnresolved(this.region)) {
        throw new Error(
          `-c waf=true: CloudFront's web ACL lives in ${EDGE_FIREWALL_REGION}, so the stack's Region must be known at synth: set AWS_REGION or a profile with a Region`,
        );
      }
      if (this.region === EDGE_FIREWALL_REGION) this.firewall = new PerAddressFirewall(this, 'Firewall', { requestsPerMinute });
      else {
        this.edgeFirewallStack = new EdgeFirewallStack(scope, `${id}EdgeFirewall`, {
          env: { account: this.account, region: EDGE_FIREWALL_REGION },
          description: `Script Distribution: the front door's per-address web ACL (CloudFront's web ACLs live in ${EDGE_FIREWALL_REGION})`,
          requestsPerMinute,
        });
        this.firewall = this.edgeFirewallStack.firewall;
        Annotations.of(this).acknowledgeWarning(
          '@aws-cdk/core:crossStackReferencesDefaultStrong',
          'A strong reference is what is wanted: the web ACL cannot be deleted while the distribution uses it.',
        );
      }
    }
    this.frontDoor = frontDoor
      ? new FrontDoor(this, 'FrontDoor', {
          restApi: this.api,
          loaderApi: this.loaderApi.httpApi,
          originSecret: this.originSecret,
          ...(originSecretVersion ? { originSecretVersion } : {}),
          accessLogs: this.scripts.accessLogs,
          ...(withConsole
            ? {
                console: {
                  files: requiredConsoleFiles(consoleFiles),
                  apiOrigin: consoleApiOrigin ?? this.consoleApi?.origin,
                  ...(this.consoleApi ? { uploadBucket: this.scripts.bucket } : {}),
                },
              }
            : {}),
          ...(this.firewall ? { webAclArn: this.firewall.webAcl.attrArn } : {}),
        })
      : undefined;
    // The hosted stub and the Discord replies name the URL buyers reach: the front door's, else the loader routes' own.
    const loaderBaseUrl = this.frontDoor?.serviceUrl ?? this.loaderApi.httpApi.apiEndpoint;
    for (const fn of [this.loaderCheck.function, this.discord.function]) fn.addEnvironment('LOADER_BASE_URL', loaderBaseUrl);
    new CfnOutput(this, 'IngestFunctionName', {
      description: 'Lambda the loader side invokes with telemetry batches ({"records": [...]})',
      value: this.analytics.ingestFunction.functionName,
    });
    new CfnOutput(this, 'DeliveryDeadLetterQueueUrl', { description: 'Deliveries that never got through', value: this.webhooks.deadLetterQueue.queueUrl });

    new CfnOutput(this, 'UsagePlanId', { description: "Usage plan each API token's API key is added to", value: usagePlan.usagePlanId });
    // What `token revoke` needs to flush the authorizer cache (FlushStageAuthorizersCache takes the API and the stage).
    new CfnOutput(this, 'RestApiId', { description: 'The REST API, whose stage authorizer cache a token revoke flushes', value: this.api.restApiId });
    new CfnOutput(this, 'StageName', { description: 'The deployed stage of the REST API', value: this.api.deploymentStage.stageName });

    // Last, so that every alarm of the stack is there to be pointed at the topic.
    this.monitoring = new Monitoring(this, 'Monitoring', {
      stage: this.api.deploymentStage,
      accessLogs,
      functions: this.functionGroups().map(([fn]) => fn),
      authorizerFunction: this.authorizerFunction,
      fanoutFunction: this.webhooks.fanoutFunction,
      revokeBulkFunction: this.routeFunctions['revoke-bulk'],
      deliveryFunction: this.webhooks.deliveryFunction,
      deliveryQueue: this.webhooks.queue,
      deliveryDeadLetterQueue: this.webhooks.deadLetterQueue,
      loaderCheckFunction: this.loaderCheck.function,
      telemetryNotQueued: this.loaderCheck.telemetryNotQueuedAlarm.metric,
      dailySchedule: this.analytics.dailySchedule,
      alertDigestSchedule: this.analytics.alertDigestSchedule,
      alarmEmail: emailContext(this.node, 'alarmEmail'),
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic every alarm notifies; subscribe to it (or deploy with -c alarmEmail=...)',
      value: this.monitoring.topic.topicArn,
    });

    acknowledgeReviewedApiFindings(this.api);
    this.frontDoor?.deployConsoleLast();
  }

  /** A route's own function, granted what its route needs of the table (EVERY_ROUTE's and its own), behind the token authorizer. */
  private addRoute(route: Route, authorizer: apigateway.IAuthorizer): ServiceFunction {
    const fn = new ServiceFunction(this, `${pascalCase(route.entry)}Function`, {
      entry: `functions/${route.entry}.ts`,
      description: `Developer API ${route.method} ${route.path}`,
      timeout: Duration.seconds(timeoutSecondsOf(route)),
    });
    bindTable(fn, this.table, [...EVERY_ROUTE, ...route.tableAccess]);
    this.api.root.resourceForPath(route.path).addMethod(route.method, new apigateway.LambdaIntegration(fn, { allowTestInvoke: false }), {
      authorizer,
      apiKeyRequired: true,
    });
    return fn;
  }

  /** Every function of the stack with its group (RESERVED_CONCURRENCY's keys). */
  functionGroups(): [ServiceFunction, keyof typeof RESERVED_CONCURRENCY][] {
    return [
      ...ROUTES.map((route): [ServiceFunction, 'route' | 'quietRoute'] => [this.routeFunctions[route.entry], isQuiet(route) ? 'quietRoute' : 'route']),
      [this.authorizerFunction, 'authorizer'],
      ...(this.consoleApi ? [[this.consoleApi.function, 'console'] as [ServiceFunction, 'console']] : []),
      [this.loaderCheck.function, 'loaderCheck'],
      [this.webhooks.fanoutFunction, 'fanout'],
      [this.webhooks.deliveryFunction, 'delivery'],
      [this.analytics.ingestFunction, 'ingest'],
      [this.analytics.queueIngestFunction, 'queueIngest'],
      [this.analytics.streamIngestFunction, 'streamIngest'],
      [this.analytics.dailyDetectorFunction, 'dailyDetector'],
      [this.analytics.alertDigestFunction, 'alertDigest'],
      [this.discord.function, 'discord'],
      [this.shops.function, 'shops'],
      [this.freeKeys.function, 'freeKeys'],
    ];
  }

  /**
   * Each function's reserved concurrency by its group, for the groups `-c reservableConcurrency=N` holds (N: what the
   * stack may reserve in all; `npm run deploy` reads it from the account first). Without it nothing is reserved, so
   * the default template deploys in a new account whose concurrency quota is 10 (docs/operations.md).
   */
  private reserveConcurrency(): ReservationPlan {
    if (this.node.tryGetContext('reservedConcurrency') !== undefined) {
      throw new Error(
        '-c reservedConcurrency is replaced by -c reservableConcurrency=N (what the stack may reserve in all; 0 reserves nothing): npm run deploy sets it from the account',
      );
    }
    const groups = this.functionGroups();
    // The deploy's preflight plans with FUNCTIONS_PER_GROUP; test/stack/floods.test.ts pins it to these groups.
    const plan = planReservations(FUNCTIONS_PER_GROUP, integerContext(this.node, 'reservableConcurrency', 0, { min: 0, max: MAX_RESERVABLE_CONCURRENCY }));
    for (const [fn, group] of groups) {
      if (plan.reserved.includes(group)) (fn.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions = RESERVED_CONCURRENCY[group];
    }
    return plan;
  }
}

/**
 * cdk-nag AwsSolutions findings on the API that were reviewed and accepted, each with its reason. They are
 * acknowledged on the API only, so any other resource of the stack is still checked for them.
 */
function acknowledgeReviewedApiFindings(api: apigateway.RestApi): void {
  Validations.of(api).acknowledge(
    {
      id: 'AwsSolutions-APIG3',
      reason:
        'The web ACL (-c waf=true) is on the CloudFront distribution in front of the API, where it sees the viewer address; a regional one here would see only CloudFront. Every route is throttled per method, per token by the usage plan and exactly per token in DynamoDB.',
    },
    {
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated in the Lambda handlers with zod, which names the offending field in the 400 message; an API Gateway validator would answer with a generic one.',
    },
    {
      id: 'AwsSolutions-COG4',
      reason: 'Callers are script publishers with API tokens, not Cognito users; every method uses the token authorizer.',
    },
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        "API Gateway's account-level CloudWatch role, which it needs to write the access and execution logs; the managed policy only allows writing to CloudWatch Logs.",
    },
  );
}

/**
 * `-c frontDoor=false` leaves the CloudFront distribution out, for an account CloudFront refuses until AWS has
 * verified it ("Your account must be verified before you can add new CloudFront resources"): the APIs come up at
 * ApiUrl and LoaderUrl, and a later deploy without the setting adds the front door. The console is served only
 * through it, and the web ACL sits on it, so neither can be asked for without it.
 */
export function frontDoorContext(node: Node): { frontDoor: boolean; console: boolean } {
  const frontDoor = booleanContext(node, 'frontDoor', true);
  const withConsole = booleanContext(node, 'console', frontDoor);
  if (!frontDoor && withConsole)
    throw new Error('-c console=true needs the front door, which serves it: leave out -c frontDoor=false, or give -c console=false');
  if (!frontDoor && booleanContext(node, 'waf', false))
    throw new Error('-c waf=true puts the web ACL on the front door: leave out -c frontDoor=false, or -c waf=true');
  return { frontDoor, console: withConsole };
}

/**
 * `-c originSecretVersion=<VersionId>`: the Secrets Manager version of the origin secret CloudFront sends, given
 * after a rotation's put-secret-value (docs/operations.md). CloudFormation resolves a dynamic reference only when
 * the resource's template changes, so naming the version is what makes the distribution take the new value.
 */
function originSecretVersionContext(node: Node): string | undefined {
  const value: unknown = node.tryGetContext('originSecretVersion');
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^[A-Za-z0-9-]{32,64}$/.test(value)) {
    throw new Error(`-c originSecretVersion=${String(value)}: give the VersionId aws secretsmanager put-secret-value printed`);
  }
  return value;
}

function requiredConsoleFiles(files: s3deploy.ISource | undefined): s3deploy.ISource {
  if (!files) {
    throw new Error(
      "The console's files were not given: bin/app.ts builds them with console/build.ts before synth; without a console, synthesize with -c console=false",
    );
  }
  return files;
}

/** One JSON line per request; the token is never logged, only the owner and the token id the authorizer resolved it to. */
function accessLogFormat(): apigateway.AccessLogFormat {
  const field = apigateway.AccessLogField;
  return apigateway.AccessLogFormat.custom(
    JSON.stringify({
      requestId: field.contextRequestId(),
      requestTime: field.contextRequestTimeEpoch(),
      ip: field.contextIdentitySourceIp(),
      userAgent: field.contextIdentityUserAgent(),
      method: field.contextHttpMethod(),
      resource: field.contextResourcePath(),
      path: field.contextPath(),
      status: field.contextStatus(),
      responseLength: field.contextResponseLength(),
      responseLatency: field.contextResponseLatency(),
      integrationLatency: field.contextIntegrationLatency(),
      ownerId: field.contextAuthorizer('ownerId'),
      // The token's id, as audit entries name it (never the token, nor its hash).
      tokenId: field.contextAuthorizer('tokenId'),
      authorizerError: field.contextAuthorizerError(),
      errorType: field.contextErrorResponseType(),
      errorMessage: field.contextErrorMessage(),
      xrayTraceId: field.contextXrayTraceId(),
    }),
  );
}
