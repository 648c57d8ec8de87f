import { CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  DISCORD_ROUTE,
  FREE_KEY_ROUTES,
  mappedPathOf,
  PUBLIC_MAPPING_KEYS,
  PUBLIC_ROUTES,
  type PublicRoute,
  SHOP_ROUTE,
  STUB_ROUTE,
} from '#http/public-routes';
import {
  DISCORD_ROUTE_THROTTLE,
  FREE_KEY_ROUTE_THROTTLE,
  LOADER_429_ALARM,
  LOADER_ROUTE_THROTTLE,
  SHOP_ROUTE_THROTTLE,
  STUB_ROUTE_THROTTLE,
} from '#lib/capacity';
import { KEEP_UNLESS_JUST_CREATED } from './keep';
import { SERVER_ERROR_RATE_ALARM } from './monitoring';

/** A publisher's own domain for the API: one base URL for the owner API and the loader routes. */
interface CustomDomain {
  domainName: string;
  /** An ACM certificate of `domainName` in the stack's Region (a regional domain). */
  certificateArn: string;
}

export interface LoaderApiProps {
  /** The loader's function (the key check, the script and the hosted stub). */
  function: lambda.IFunction;
  /** The Discord interactions' own function. */
  discordFunction: lambda.IFunction;
  /** The shop receiver's own function. */
  shopFunction: lambda.IFunction;
  /** The free keys' key page function (FREE_KEY_ROUTES). */
  freeKeysFunction: lambda.IFunction;
  /** The owner API, mapped at the custom domain's root when there is one. */
  restApi: apigateway.RestApi;
  domain?: CustomDomain;
}

/**
 * The loader's front door: an API Gateway HTTP API (payload format 2.0) with the two public routes and nothing
 * else. It has no usage plan, API key or authorizer to pay for, which only the owner API needs; at $1.00 a million
 * requests it is the cheaper door ($3.50 for REST). Each route is throttled on the stage (LOADER_ROUTE_THROTTLE), the
 * function keeps its reserved concurrency, and an alarm watches the share of requests answered 429. An HTTP API
 * cannot carry AWS WAF: a single address is limited in the function, in memory, before any DynamoDB request
 * (docs/loader.md says what that gives up). With a custom domain, `v1/loader` maps to this API and the rest of the
 * domain to the REST API, so one base URL serves both.
 */
export class LoaderApi extends Construct {
  readonly httpApi: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;
  readonly accessLogs: logs.LogGroup;
  readonly throttledAlarm: cloudwatch.Alarm;
  readonly serverErrorAlarm: cloudwatch.Alarm;
  readonly domain?: apigwv2.DomainName;

  constructor(scope: Construct, id: string, props: LoaderApiProps) {
    super(scope, id);
    this.httpApi = new apigwv2.HttpApi(this, 'HttpApi', {
      apiName: 'script-distribution-loader',
      description: `Script Distribution loader routes ${PUBLIC_ROUTES.map((route) => `${route.method} ${route.path}`).join(', ')} (public)`,
      createDefaultStage: false,
    });
    // Kept after the stack is gone, like the owner API's: the record of who checked which key from where.
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: KEEP_UNLESS_JUST_CREATED });
    this.stage = new apigwv2.HttpStage(this, 'Stage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      // The stage's default route throttle applies to each route on its own.
      throttle: { rateLimit: LOADER_ROUTE_THROTTLE.rateLimit, burstLimit: LOADER_ROUTE_THROTTLE.burstLimit },
      accessLogSettings: { destination: new apigwv2.LogGroupLogDestination(this.accessLogs), format: accessLogFormat() },
    });

    const integration = new HttpLambdaIntegration('LoaderIntegration', props.function, { payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0 });
    const discordIntegration = new HttpLambdaIntegration('DiscordIntegration', props.discordFunction, {
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
    });
    const shopIntegration = new HttpLambdaIntegration('ShopIntegration', props.shopFunction, {
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
    });
    const freeKeysIntegration = new HttpLambdaIntegration('FreeKeysIntegration', props.freeKeysFunction, {
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
    });
    const integrationOf = (route: PublicRoute) =>
      route === DISCORD_ROUTE
        ? discordIntegration
        : route === SHOP_ROUTE
          ? shopIntegration
          : (FREE_KEY_ROUTES as readonly PublicRoute[]).includes(route)
            ? freeKeysIntegration
            : integration;
    const addRoute = (route: PublicRoute, path: string) =>
      new apigwv2.HttpRoute(this, `Route${path.replace(/[^A-Za-z0-9]/g, '')}`, {
        httpApi: this.httpApi,
        routeKey: apigwv2.HttpRouteKey.with(path, route.method === 'GET' ? apigwv2.HttpMethod.GET : apigwv2.HttpMethod.POST),
        integration: integrationOf(route),
      });
    const routes = PUBLIC_ROUTES.map((route: PublicRoute) => addRoute(route, route.path));

    if (props.domain) {
      this.domain = new apigwv2.DomainName(this, 'Domain', {
        domainName: props.domain.domainName,
        certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
        endpointType: apigwv2.EndpointType.REGIONAL,
        securityPolicy: apigwv2.SecurityPolicy.TLS_1_2,
      });
      // API Gateway strips the mapping key before routing: through the domain the routes are /validate, /script,
      // /stub/{project_id} (under v1/loader) and /interactions/{project_id} (under v1/discord).
      routes.push(...PUBLIC_ROUTES.map((route) => addRoute(route, mappedPathOf(route))));
      for (const mappingKey of PUBLIC_MAPPING_KEYS) {
        new apigwv2.ApiMapping(this, mappingKey === 'v1/loader' ? 'LoaderMapping' : `Mapping${mappingKey.replace(/[^A-Za-z0-9]/g, '')}`, {
          api: this.httpApi,
          domainName: this.domain,
          stage: this.stage,
          apiMappingKey: mappingKey,
        });
      }
      // The rest of the domain is the owner API; the longest matching key wins, so v1/loader/* never reaches it.
      new apigwv2.CfnApiMapping(this, 'OwnerApiMapping', {
        apiId: props.restApi.restApiId,
        domainName: this.domain.name,
        stage: props.restApi.deploymentStage.stageName,
      }).node.addDependency(this.domain);
      new CfnOutput(Stack.of(this), 'CustomDomainUrl', {
        description: 'One base URL for both APIs: <CustomDomainUrl>/v1/projects/... and <CustomDomainUrl>/v1/loader/...',
        value: `https://${props.domain.domainName}`,
      });
      new CfnOutput(Stack.of(this), 'CustomDomainTarget', {
        description: "Point the domain's DNS (CNAME or alias) at this name",
        value: this.domain.regionalDomainName,
      });
    }
    // The stub, Discord, the shops and the key page have throttles of their own (the stage's default is the key checks').
    const ownThrottles = [
      [STUB_ROUTE, STUB_ROUTE_THROTTLE],
      [DISCORD_ROUTE, DISCORD_ROUTE_THROTTLE],
      [SHOP_ROUTE, SHOP_ROUTE_THROTTLE],
      ...FREE_KEY_ROUTES.map((route) => [route, FREE_KEY_ROUTE_THROTTLE] as const),
    ] as const;
    // A JSON property, passed to CloudFormation as written: its names are CloudFormation's own.
    const routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};
    for (const [route, throttle] of ownThrottles) {
      const paths = props.domain ? [route.path, mappedPathOf(route)] : [route.path];
      for (const path of paths)
        routeSettings[`${route.method} ${path}`] = { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit };
    }
    (this.stage.node.defaultChild as apigwv2.CfnStage).routeSettings = routeSettings;
    // A stage's route settings name routes that must exist when it is deployed.
    for (const route of routes) this.stage.node.addDependency(route);
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          "Public by design (DESIGN.md): a buyer's loader has no API token; the key in the body is the credential, checked by the function, which is limited per key and per address. The hosted stub is public text; Discord's interactions carry the linked application's Ed25519 signature, checked by their function.",
      });
    }

    new CfnOutput(Stack.of(this), 'LoaderUrl', {
      description:
        "Base URL of the loader routes: <LoaderUrl>/v1/loader/validate, /script and /stub/{project_id} (the buyers' loaders call it), <LoaderUrl>/v1/discord/interactions/{project_id} (Discord calls it)",
      value: `https://${this.httpApi.apiId}.execute-api.${Stack.of(this).region}.${Stack.of(this).urlSuffix}`,
    });

    // HTTP APIs publish no 429 metric of their own: the access log's status is counted, against the stage's requests.
    const throttled = new logs.MetricFilter(this, 'Responses429', {
      logGroup: this.accessLogs,
      filterPattern: logs.FilterPattern.stringValue('$.status', '=', '429'),
      metricNamespace: 'ScriptDistribution',
      metricName: 'LoaderResponses429',
      metricValue: '1',
      defaultValue: 0,
    }).metric({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM });
    const requests = new cloudwatch.Metric({
      namespace: 'AWS/ApiGateway',
      metricName: 'Count',
      dimensionsMap: { ApiId: this.httpApi.apiId, Stage: '$default' },
      period: Duration.minutes(5),
      statistic: cloudwatch.Stats.SUM,
    });
    this.throttledAlarm = new cloudwatch.MathExpression({
      expression: 'IF(requests > 0, 100 * throttled / requests, 0)',
      usingMetrics: { throttled, requests },
      period: Duration.minutes(5),
      label: 'Loader routes: % of requests answered 429',
    }).createAlarm(this, 'Responses429Alarm', {
      alarmDescription: `More than ${LOADER_429_ALARM.percent}% of loader requests answered 429 for ${LOADER_429_ALARM.periods} × 5 minutes: a flood at the route's throttle, or buyers meeting a limit (docs/loader.md).`,
      threshold: LOADER_429_ALARM.percent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: LOADER_429_ALARM.periods,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    // The REST stage's 5xx alarm no longer sees the loader routes: the same rule on their own stage.
    this.serverErrorAlarm = this.stage
      .metricServerError({ period: Duration.minutes(5), statistic: cloudwatch.Stats.AVERAGE })
      .createAlarm(this, 'ServerErrorRate', {
        alarmDescription: `More than ${SERVER_ERROR_RATE_ALARM * 100}% of the loader routes' answers were 5xx for 10 minutes.`,
        threshold: SERVER_ERROR_RATE_ALARM,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
  }
}

/** One JSON line per request; `status` is what the 429 alarm counts, `ip` what a flood is traced by. */
function accessLogFormat(): apigateway.AccessLogFormat {
  return apigateway.AccessLogFormat.custom(
    JSON.stringify({
      requestId: '$context.requestId',
      requestTime: '$context.requestTimeEpoch',
      ip: '$context.identity.sourceIp',
      userAgent: '$context.identity.userAgent',
      routeKey: '$context.routeKey',
      status: '$context.status',
      responseLength: '$context.responseLength',
      responseLatency: '$context.responseLatency',
      integrationLatency: '$context.integrationLatency',
      integrationStatus: '$context.integrationStatus',
      errorMessage: '$context.error.message',
    }),
  );
}
