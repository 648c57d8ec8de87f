import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { discordLinkAttributes, INDEX_PARTITION, keyIndexAttributes } from '#adapters/layout';
import { createTableInput, KEY_ATTRIBUTE_TYPES, TABLE } from '#adapters/table-definition';
import { TELEMETRY_NOT_QUEUED } from '#adapters/telemetry-queue';
import { AUDIT_UNSETTLED } from '#domain/audit';
import { newId } from '#domain/ids';
import { RATE_LIMIT, RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { AUTHORIZER_CACHE_SECONDS, parseBearer } from '#domain/tokens';
import { GATEWAY_RESPONSES, type GatewayResponseType } from '#http/gateway-responses';
import {
  DISCORD_ROUTE,
  FREE_KEY_ROUTES,
  LOADER_MAPPING_KEY,
  mappedPathOf,
  PUBLIC_ROUTES,
  type PublicRoute,
  SCRIPT_ROUTE,
  SHOP_ROUTE,
  STUB_ROUTE,
  VALIDATE_ROUTE,
} from '#http/public-routes';
import { SECURITY_HEADERS } from '#http/responses';
import { ROUTES } from '#http/routes';
import {
  DISCORD_ROUTE_THROTTLE,
  FREE_KEY_ROUTE_THROTTLE,
  FUNCTIONS_PER_GROUP,
  LOADER_429_ALARM,
  LOADER_RESERVED_CONCURRENCY,
  LOADER_ROUTE_THROTTLE,
  planReservations,
  SHOP_ROUTE_THROTTLE,
  STUB_ROUTE_THROTTLE,
  USAGE_PLAN_THROTTLE,
} from '#lib/capacity';
import { BEARER_VALIDATION_REGEX, FUNCTIONS_BESIDE_ROUTES, STAGE_NAME } from '#lib/developer-api-stack';
import { admitsEveryCompliantClient } from '#lib/token-bucket';
import { countEarlierRequests, invoke, memoryApi, PROJECT_ID } from '#test-support/api-harness';
import { apiEvent, type RouteEntry } from '#test-support/fixtures';
import { actionsOf, synthesizeApiStack, templateLookups } from '#test-support/stack-template';

let built: ReturnType<typeof synthesizeApiStack>;

// Synthesis takes seconds, more on a loaded machine; the default 10 s hook timeout is too tight.
beforeAll(() => {
  built = synthesizeApiStack();
}, 120_000);

const { ofType, serviceFunctions, only, methodOf, functionIdOf, authorizerFunctionId, statementsOf, dynamoStatements } = templateLookups(() => built.resources);
const resources = () => built.resources;
const tableId = () => only('AWS::DynamoDB::GlobalTable')[0];
const restApiId = () => only('AWS::ApiGateway::RestApi')[0];

/** Table administration, which no function gets. */
const ADMIN_ACTION = /^dynamodb:(\*|(Create|Delete|Update|Restore)Table|UpdateTimeToLive|UpdateContinuousBackups|.*Backup)/;

describe('the table', () => {
  it('has the keys, indexes, stream and billing of the definition the local stack creates its table from', () => {
    const [, table] = only('AWS::DynamoDB::GlobalTable');
    const local = createTableInput('local');
    const byName = (a: { AttributeName?: string }, b: { AttributeName?: string }) => String(a.AttributeName).localeCompare(String(b.AttributeName));
    expect((table.Properties.AttributeDefinitions as { AttributeName: string }[]).toSorted(byName)).toEqual(local.AttributeDefinitions?.toSorted(byName));
    expect(table.Properties.KeySchema).toEqual(local.KeySchema);
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(local.GlobalSecondaryIndexes);
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: local.StreamSpecification?.StreamViewType });
    expect(table.Properties.BillingMode).toBe(local.BillingMode);
  });

  it('indexes watermarks and the key order keys-only (key pages and bulk revokes read the keys themselves by id)', () => {
    built.template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      GlobalSecondaryIndexes: Match.arrayWith([
        Match.objectLike({ IndexName: TABLE.indexes.byWatermark.name, Projection: { ProjectionType: 'KEYS_ONLY' } }),
        Match.objectLike({ IndexName: TABLE.indexes.byIssueOrder.name, Projection: { ProjectionType: 'KEYS_ONLY' } }),
      ]),
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
  });

  it('expires rate windows and delivery ids through TTL on the definition attribute', () => {
    built.template.hasResourceProperties('AWS::DynamoDB::GlobalTable', { TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } });
  });

  it('keeps the data: point-in-time recovery, and retained when the stack or resource goes, unless the create that made it rolls back', () => {
    const [, table] = only('AWS::DynamoDB::GlobalTable');
    expect(table.Properties.Replicas).toEqual([expect.objectContaining({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })]);
    // Deletion protection would refuse the rollback's delete and leave the stack in ROLLBACK_FAILED.
    expect((table.Properties.Replicas as Record<string, unknown>[])[0]?.DeletionProtectionEnabled).not.toBe(true);
    expect(table.DeletionPolicy).toBe('RetainExceptOnCreate');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });
});

describe('the functions', () => {
  it('has one function per route, each a different function, plus the authorizer, webhook, analytics and console API functions', () => {
    const routeFunctions = new Set(ROUTES.map(functionIdOf));
    expect(routeFunctions.size).toBe(ROUTES.length);
    expect(routeFunctions.has(authorizerFunctionId())).toBe(false);
    // FUNCTIONS_BESIDE_ROUTES counts a stack without the console (-c console=false); the console adds its API's.
    expect(serviceFunctions()).toHaveLength(ROUTES.length + FUNCTIONS_BESIDE_ROUTES + 1);
  });

  it('gives the bulk revoke and the leak trace 28 s, inside the 29 s API Gateway waits, and every other route function 10 s', () => {
    for (const route of ROUTES) {
      const [, fn] = serviceFunctions().find(([id]) => id === functionIdOf(route)) ?? [];
      expect(fn?.Properties.Timeout, route.entry).toBe(route.entry === 'revoke-bulk' || route.entry === 'trace-leak' ? 28 : 10);
    }
  });

  it('runs every function on Node.js 22, arm64, with the table name in TABLE_NAME; traced, but for the loader check', () => {
    for (const [id, fn] of serviceFunctions()) {
      expect(fn.Properties, id).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Environment: { Variables: { TABLE_NAME: { Ref: tableId() } } },
      });
      // The loader check's volume would make X-Ray a tenth of its price (docs/cost.md): it is not traced.
      const loaderCheck = id === built.stack.getLogicalId(built.stack.loaderCheck.function.node.defaultChild as never);
      expect(fn.Properties.TracingConfig, id).toEqual(loaderCheck ? undefined : { Mode: 'Active' });
    }
  });
});

describe('the REST API', () => {
  it('takes the usage-plan API key from the authorizer', () => {
    built.template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
  });

  it.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: a Lambda proxy integration behind the token authorizer, API key required',
    (_name, route) => {
      const [authorizerId] = only('AWS::ApiGateway::Authorizer');
      expect(methodOf(route).Properties).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
        ApiKeyRequired: true,
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
      });
    },
  );

  it('has no method besides the owner routes (no ANY, no OPTIONS, no loader route), every one behind the authorizer', () => {
    const methods = ofType('AWS::ApiGateway::Method');
    expect(methods).toHaveLength(ROUTES.length);
    expect(methods.filter(([, method]) => method.Properties.AuthorizationType !== 'CUSTOM')).toEqual([]);
  });

  it(`checks the Authorization header with a TOKEN authorizer whose answer is cached for ${AUTHORIZER_CACHE_SECONDS} seconds`, () => {
    const [, authorizer] = only('AWS::ApiGateway::Authorizer');
    expect(authorizer.Properties).toMatchObject({
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      IdentityValidationExpression: BEARER_VALIDATION_REGEX,
      AuthorizerResultTtlInSeconds: AUTHORIZER_CACHE_SECONDS,
    });
  });

  it('bounds how long a revoked token can outlive a failed cache flush: the cache keeps an answer 30 s at most, API Gateway would default to 300', () => {
    const [, authorizer] = only('AWS::ApiGateway::Authorizer');
    expect(authorizer.Properties.AuthorizerResultTtlInSeconds).toBeGreaterThan(0);
    expect(authorizer.Properties.AuthorizerResultTtlInSeconds).toBeLessThanOrEqual(30);
  });

  it("refuses before the authorizer runs exactly the headers the authorizer's parseBearer refuses", () => {
    const gatewayAccepts = (header: string) => new RegExp(BEARER_VALIDATION_REGEX).test(header);
    const samples = [
      'Bearer sdt_abc-DEF_123.~+/',
      'bearer tok',
      '  Bearer   dG9rZW4==  ',
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      'Bearersdt',
      'Bearer a b',
      'Bearer ab=cd',
      'Bearer abc$def',
      `Bearer ${'a'.repeat(513)}`,
    ];
    for (const header of samples) expect(gatewayAccepts(header), header).toBe(parseBearer(header) !== undefined);
    const headerPart = fc.constantFrom('Bearer', 'bEaReR', 'Basic', ' ', '  ', 'sdt_', 'Zx9', '-._~+/', '=', '==', '$', ',', '\t');
    fc.assert(
      fc.property(
        fc.array(headerPart, { maxLength: 8 }).map((parts) => parts.join('')),
        (header) => gatewayAccepts(header) === (parseBearer(header) !== undefined),
      ),
    );
  });
});

describe('the usage plan', () => {
  it('throttles per token with USAGE_PLAN_THROTTLE and is attached to the deployed stage', () => {
    const [stageId] = only('AWS::ApiGateway::Stage');
    built.template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: USAGE_PLAN_THROTTLE.rateLimit, BurstLimit: USAGE_PLAN_THROTTLE.burstLimit },
      ApiStages: [Match.objectLike({ ApiId: { Ref: restApiId() }, Stage: { Ref: stageId } })],
    });
  });

  it('never refuses a client that keeps to the spec limit of 100 requests per fixed minute (test/stack/usage-plan-sizing.test.ts simulates it)', () => {
    const [, plan] = only('AWS::ApiGateway::UsagePlan');
    const { RateLimit, BurstLimit } = plan.Properties.Throttle as { RateLimit: number; BurstLimit: number };
    expect(admitsEveryCompliantClient({ rateLimit: RateLimit, burstLimit: BurstLimit }, RATE_LIMIT, 59, 7 * 24 * 3600)).toBe(true);
  });

  it('sets no quota: the exact per-minute limit is the DynamoDB window, a quota would lock a token out for a day', () => {
    const [, plan] = only('AWS::ApiGateway::UsagePlan');
    expect(plan.Properties.Quota).toBeUndefined();
  });
});

describe('gateway responses', () => {
  const types = Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[];

  it('installs one gateway response per entry of GATEWAY_RESPONSES and no other', () => {
    const installed = ofType('AWS::ApiGateway::GatewayResponse').map(([, response]) => response.Properties.ResponseType);
    expect(installed.toSorted()).toEqual(types.toSorted());
  });

  it.each(types)('%s answers with its status and {"error"} JSON, private and not sniffable', (type) => {
    const { status, error } = GATEWAY_RESPONSES[type];
    const response = ofType('AWS::ApiGateway::GatewayResponse').find(([, r]) => r.Properties.ResponseType === type)?.[1];
    expect(response?.Properties.StatusCode).toBe(status === undefined ? undefined : String(status));
    const template = (response!.Properties.ResponseTemplates as Record<string, string>)['application/json'] ?? '';
    const serverSide = type === 'DEFAULT_5XX' || (status !== undefined && status >= 500);
    expect(JSON.parse(template)).toEqual(serverSide ? { error, request_id: '$context.requestId' } : { error });
    const headers = response?.Properties.ResponseParameters as Record<string, string>;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(headers[`gatewayresponse.header.${name}`]).toBe(`'${value}'`);
  });

  it.each(['THROTTLED', 'QUOTA_EXCEEDED'] as const)("%s is a 429 with the handlers' 429 error, Retry-After and RateLimit headers", async (type) => {
    const response = ofType('AWS::ApiGateway::GatewayResponse').find(([, r]) => r.Properties.ResponseType === type)?.[1];
    expect(response?.Properties.StatusCode).toBe('429');
    expect(JSON.parse((response!.Properties.ResponseTemplates as Record<string, string>)['application/json'] ?? '')).toEqual({ error: RATE_LIMIT_MESSAGE });
    const mapped = Object.fromEntries(
      Object.entries(response?.Properties.ResponseParameters as Record<string, string>).map(([name, value]) => [
        name.replace('gatewayresponse.header.', ''),
        value.slice(1, -1),
      ]),
    );
    // A handler's 429: the caller's 101st request of the window.
    const { store, handlers } = memoryApi();
    await countEarlierRequests(store, RATE_LIMIT.requests);
    const handler429 = await invoke(handlers['list-versions'], apiEvent('list-versions', { projectId: PROJECT_ID }));
    expect(handler429.status).toBe(429);
    expect(handler429.body).toEqual({ error: RATE_LIMIT_MESSAGE });
    expect(Object.keys(mapped).toSorted()).toEqual(Object.keys(handler429.headers).toSorted());
    // Static where API Gateway cannot compute them: the policy exactly, nothing left, and a whole window to wait.
    expect(mapped['RateLimit-Policy']).toBe(handler429.headers['RateLimit-Policy']);
    expect(mapped).toMatchObject({ 'Retry-After': String(RATE_LIMIT.windowSeconds), RateLimit: `"per-token";r=0;t=${RATE_LIMIT.windowSeconds}` });
  });

  it('quotes every header value as a literal, as gateway response mappings require', () => {
    for (const [, response] of ofType('AWS::ApiGateway::GatewayResponse')) {
      for (const value of Object.values(response.Properties.ResponseParameters as Record<string, string>)) expect(value).toMatch(/^'[^']*'$/);
    }
  });
});

describe('the stage', () => {
  it(`is "${STAGE_NAME}", traced, with JSON access logs in a log group and error-level execution logs without bodies`, () => {
    const [, stage] = only('AWS::ApiGateway::Stage');
    const [logGroupId] = ofType('AWS::Logs::LogGroup').find(([id]) => JSON.stringify(stage.Properties.AccessLogSetting).includes(`"${id}"`)) ?? [];
    expect(logGroupId).toBeDefined();
    expect(stage.Properties).toMatchObject({
      StageName: STAGE_NAME,
      TracingEnabled: true,
    });
    expect(stage.Properties.MethodSettings).toEqual(
      expect.arrayContaining([expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false })]),
    );
    const format = JSON.parse((stage.Properties.AccessLogSetting as { Format: string }).Format) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      ownerId: '$context.authorizer.ownerId',
      tokenId: '$context.authorizer.tokenId',
    });
    expect(format).not.toHaveProperty('tokenHash');
  });

  it('never logs the token: no access log field reads the Authorization header or the API key value', () => {
    const [, stage] = only('AWS::ApiGateway::Stage');
    const format = (stage.Properties.AccessLogSetting as { Format: string }).Format;
    expect(format).not.toMatch(/authorization/i);
    // `$context.identity.apiKey` is the usage-plan key value, i.e. the token's hash; `apiKeyId` would be harmless.
    expect(format).not.toMatch(/\$context\.identity\.apiKey(?!Id)/);
  });
});

describe('the loader key check', () => {
  const loaderFunctionId = () => built.stack.getLogicalId(built.stack.loaderCheck.function.node.defaultChild as never);

  const httpApiId = () => only('AWS::ApiGatewayV2::Api')[0];
  const routeKeys = (resourcesOf: Record<string, { Type: string; Properties: Record<string, unknown> }>) =>
    Object.values(resourcesOf)
      .filter((resource) => resource.Type === 'AWS::ApiGatewayV2::Route')
      .map((route) => route.Properties.RouteKey)
      .toSorted();

  it("serves the public routes from an HTTP API with payload format 2.0, no other route; Discord's from its own function", () => {
    const [, api] = only('AWS::ApiGatewayV2::Api');
    expect(api.Properties.ProtocolType).toBe('HTTP');
    expect(routeKeys(resources())).toEqual(PUBLIC_ROUTES.map((route) => `${route.method} ${route.path}`).toSorted());
    for (const [, route] of ofType('AWS::ApiGatewayV2::Route')) {
      expect(route.Properties.ApiId).toEqual({ Ref: httpApiId() });
      expect(route.Properties.AuthorizationType ?? 'NONE').toBe('NONE');
    }
    const integrations = ofType('AWS::ApiGatewayV2::Integration');
    // The loader's, Discord's, the shops' and the key page's functions.
    expect(integrations).toHaveLength(4);
    for (const [, integration] of integrations) expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
    const discordFunctionId = built.stack.getLogicalId(built.stack.discord.function.node.defaultChild as never);
    const targetOf = (route: PublicRoute) => {
      const [, found] = ofType('AWS::ApiGatewayV2::Route').find(([, candidate]) => candidate.Properties.RouteKey === `${route.method} ${route.path}`) ?? [];
      const [integrationId] = String(JSON.stringify(found?.Properties.Target)).match(/LoaderApi\w+Integration\w+/) ?? [];
      return JSON.stringify(integrations.find(([id]) => id === integrationId)?.[1].Properties.IntegrationUri);
    };
    for (const route of [VALIDATE_ROUTE, SCRIPT_ROUTE, STUB_ROUTE]) expect(targetOf(route)).toContain(loaderFunctionId());
    expect(targetOf(DISCORD_ROUTE)).toContain(discordFunctionId);
    expect(targetOf(SHOP_ROUTE)).toContain(built.stack.getLogicalId(built.stack.shops.function.node.defaultChild as never));
    const freeFunctionId = built.stack.getLogicalId(built.stack.freeKeys.function.node.defaultChild as never);
    for (const route of FREE_KEY_ROUTES) expect(targetOf(route)).toContain(freeFunctionId);
  });

  it("throttles the hosted stub, Discord's interactions, the shop receiver and the key page with throttles of their own", () => {
    const [, stage] = only('AWS::ApiGatewayV2::Stage');
    expect(stage.Properties.RouteSettings).toEqual({
      [`GET ${STUB_ROUTE.path}`]: { ThrottlingRateLimit: STUB_ROUTE_THROTTLE.rateLimit, ThrottlingBurstLimit: STUB_ROUTE_THROTTLE.burstLimit },
      [`POST ${DISCORD_ROUTE.path}`]: { ThrottlingRateLimit: DISCORD_ROUTE_THROTTLE.rateLimit, ThrottlingBurstLimit: DISCORD_ROUTE_THROTTLE.burstLimit },
      [`POST ${SHOP_ROUTE.path}`]: { ThrottlingRateLimit: SHOP_ROUTE_THROTTLE.rateLimit, ThrottlingBurstLimit: SHOP_ROUTE_THROTTLE.burstLimit },
      ...Object.fromEntries(
        FREE_KEY_ROUTES.map((route) => [
          `${route.method} ${route.path}`,
          { ThrottlingRateLimit: FREE_KEY_ROUTE_THROTTLE.rateLimit, ThrottlingBurstLimit: FREE_KEY_ROUTE_THROTTLE.burstLimit },
        ]),
      ),
    });
  });

  it('throttles each loader route on the $default stage, auto-deployed, with JSON access logs holding the status', () => {
    const [, stage] = only('AWS::ApiGatewayV2::Stage');
    expect(stage.Properties).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: LOADER_ROUTE_THROTTLE.rateLimit, ThrottlingBurstLimit: LOADER_ROUTE_THROTTLE.burstLimit },
    });
    const format = JSON.parse(String((stage.Properties.AccessLogSettings as { Format: string }).Format)) as Record<string, string>;
    expect(format).toMatchObject({ status: '$context.status', ip: '$context.identity.sourceIp', routeKey: '$context.routeKey' });
  });

  it(`alarms when more than ${LOADER_429_ALARM.percent}% of loader requests are answered 429, counted from the access log`, () => {
    const filters = ofType('AWS::Logs::MetricFilter').filter(([, filter]) => filter.Properties.FilterPattern === '{ $.status = "429" }');
    expect(filters).toHaveLength(1);
    const alarms = ofType('AWS::CloudWatch::Alarm').filter(([, alarm]) => JSON.stringify(alarm.Properties.Metrics ?? []).includes('LoaderResponses429'));
    expect(alarms).toHaveLength(1);
    expect(alarms[0]?.[1].Properties).toMatchObject({
      Threshold: LOADER_429_ALARM.percent,
      EvaluationPeriods: LOADER_429_ALARM.periods,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(JSON.stringify(alarms[0]?.[1].Properties.AlarmActions)).toContain('AlarmTopic');
  });

  it('outputs the loader URL apart from the owner API URL when there is no custom domain, and maps no domain', () => {
    const outputs = built.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(JSON.stringify(outputs.LoaderUrl?.Value)).toContain(httpApiId());
    expect(outputs.CustomDomainUrl).toBeUndefined();
    expect(ofType('AWS::ApiGatewayV2::DomainName')).toEqual([]);
    expect(ofType('AWS::ApiGatewayV2::ApiMapping')).toEqual([]);
  });

  describe('with -c domainName and -c certificateArn', () => {
    const CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
    let withDomain: ReturnType<typeof synthesizeApiStack>;
    beforeAll(() => {
      withDomain = synthesizeApiStack({ domainName: 'api.example.com', certificateArn: CERTIFICATE });
    });
    const ofTypeIn = (type: string) => Object.entries(withDomain.resources).filter(([, resource]) => resource.Type === type);

    it('maps v1/loader, v1/discord, v1/shops and v1/free to the HTTP API and the rest of the domain to the REST API, one regional TLS 1.2 domain', () => {
      const [[domainId, domain]] = ofTypeIn('AWS::ApiGatewayV2::DomainName') as [[string, (typeof withDomain.resources)[string]]];
      expect(domain.Properties).toMatchObject({
        DomainName: 'api.example.com',
        DomainNameConfigurations: [{ CertificateArn: CERTIFICATE, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' }],
      });
      const mappings = ofTypeIn('AWS::ApiGatewayV2::ApiMapping').map(([, mapping]) => mapping.Properties);
      const [httpId] = ofTypeIn('AWS::ApiGatewayV2::Api')[0] ?? [];
      const [restId] = ofTypeIn('AWS::ApiGateway::RestApi')[0] ?? [];
      // v1/loader, v1/discord, v1/shops and v1/free to the HTTP API, the rest to the REST API.
      expect(mappings).toHaveLength(5);
      for (const mappingKey of ['v1/free', 'v1/shops'])
        expect(mappings).toContainEqual(expect.objectContaining({ ApiId: { Ref: httpId }, ApiMappingKey: mappingKey, DomainName: { Ref: domainId } }));
      expect(mappings).toContainEqual(expect.objectContaining({ ApiId: { Ref: httpId }, ApiMappingKey: LOADER_MAPPING_KEY, DomainName: { Ref: domainId } }));
      expect(mappings).toContainEqual(
        expect.objectContaining({ ApiId: { Ref: httpId }, ApiMappingKey: DISCORD_ROUTE.mappingKey, DomainName: { Ref: domainId } }),
      );
      const owner = mappings.find((mapping) => JSON.stringify(mapping.ApiId) === JSON.stringify({ Ref: restId }));
      expect(owner).toMatchObject({ DomainName: { Ref: domainId } });
      expect(owner?.ApiMappingKey).toBeUndefined();
    });

    it('also routes the paths the mapping leaves (/validate, /script), throttled like the others', () => {
      const expected = PUBLIC_ROUTES.flatMap((route) => [`${route.method} ${route.path}`, `${route.method} ${mappedPathOf(route)}`]).toSorted();
      expect(routeKeys(withDomain.resources)).toEqual(expected);
    });

    it('outputs the one base URL and the name DNS must point at', () => {
      const outputs = withDomain.template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(outputs.CustomDomainUrl?.Value).toBe('https://api.example.com');
      expect(outputs.CustomDomainTarget).toBeDefined();
    });

    it('refuses a domain without its certificate, and a certificate that is no ACM ARN', () => {
      expect(() => synthesizeApiStack({ domainName: 'api.example.com' })).toThrow('-c certificateArn=undefined');
      expect(() => synthesizeApiStack({ domainName: 'api.example.com', certificateArn: 'cert' })).toThrow('-c certificateArn=cert');
      expect(() => synthesizeApiStack({ certificateArn: CERTIFICATE })).toThrow('-c domainName=undefined');
    });

    it('passes the AwsSolutions cdk-nag checks', () => {
      const report = new AwsSolutionsChecks(withDomain.app, { verbose: true }).validateScope(withDomain.stack);
      expect(report.violations.map((violation) => `${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
      expect(report.success).toBe(true);
    });
  });

  it('runs in its own function, the first to get its reserved concurrency when the account allows any, so a flood of checks cannot take the instances other functions need', () => {
    expect(loaderFunctionId()).toMatch(/^LoaderCheckFunction/);
    expect(planReservations(FUNCTIONS_PER_GROUP, LOADER_RESERVED_CONCURRENCY).reserved).toEqual(['loaderCheck']);
  });

  it("may update key items and rate windows naming only the attributes a check writes or tests, record a binding's machine and read its blacklist reason, read key and project items, read script objects, and send to the telemetry queue: nothing else", () => {
    const statements = statementsOf(loaderFunctionId());
    const actions = statements.flatMap((statement) => [statement.Action].flat());
    expect(actions.filter((action) => action.startsWith('dynamodb:'))).toEqual([
      'dynamodb:UpdateItem',
      'dynamodb:UpdateItem',
      'dynamodb:PutItem',
      'dynamodb:GetItem',
      'dynamodb:GetItem',
    ]);
    // Before a binding (buyer blacklist): the machine's record of its key, and the reason of the machine's entry, nothing else of either.
    const bindingGrants = statements.filter((statement) =>
      (statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? []).some((keys) => keys === 'MACHINE#*' || keys === 'BLACKLIST#*'),
    );
    expect(bindingGrants.map((statement) => [statement.Action, statement.Condition?.['ForAllValues:StringEquals']?.['dynamodb:Attributes']])).toEqual([
      ['dynamodb:PutItem', [...Object.keys(KEY_ATTRIBUTE_TYPES), 'entity', 'bound_at']],
      ['dynamodb:GetItem', [...Object.keys(KEY_ATTRIBUTE_TYPES), 'reason']],
    ]);
    const updates = statements.filter((statement) => [statement.Action].flat().includes('dynamodb:UpdateItem'));
    expect(updates.map((statement) => statement.Condition)).toEqual([
      {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['KEY#*'] },
        'ForAllValues:StringEquals': {
          'dynamodb:Attributes': [
            ...Object.keys(KEY_ATTRIBUTE_TYPES),
            'current_uses',
            'last_check_at',
            'lastCheck',
            'checkWindow',
            'checkCount',
            'fingerprints',
            'keyHash',
            'projectId',
            'revoked',
            'ban_reason',
            'ban_until',
            'expires_at',
            'max_uses',
            'max_fingerprints',
          ],
        },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': ['UPDATED_NEW'] },
      },
      {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RATE#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...Object.keys(KEY_ATTRIBUTE_TYPES), 'requests', 'ttl', 'entity'] },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': ['UPDATED_NEW'] },
      },
    ]);
    const reads = statements.find(
      (statement) => [statement.Action].flat().includes('dynamodb:GetItem') && statement.Condition?.['ForAllValues:StringEquals'] === undefined,
    );
    expect(reads?.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys']).toEqual(['KEY#*', 'PROJECT#*']);
    expect(actions.filter((action) => action.startsWith('s3:'))).toEqual(['s3:GetObject']);
    const s3Statement = statements.find((statement) => [statement.Action].flat().includes('s3:GetObject'));
    expect(JSON.stringify(s3Statement?.Resource)).toContain('/scripts/*/*.luau');
    expect(actions.filter((action) => action.startsWith('sqs:')).sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
  });

  it("may not name a key's owner-side attributes: a check's grant leaves out note, discord_id, watermark, tier and issue fields", () => {
    const named = statementsOf(loaderFunctionId()).flatMap((statement) => statement.Condition?.['ForAllValues:StringEquals']?.['dynamodb:Attributes'] ?? []);
    for (const attribute of ['note', 'discord_id', 'watermark', 'tier', 'issued_at', 'ownerId', 'plan']) expect(named).not.toContain(attribute);
  });

  it("counts bulk revokes whose audit entry could not be completed, from the revoke-bulk function's log, with an alarm", () => {
    const filters = ofType('AWS::Logs::MetricFilter').filter(([, filter]) => filter.Properties.FilterPattern === `{ $.message = "${AUDIT_UNSETTLED}" }`);
    expect(filters).toHaveLength(1);
    const metricName = (filters[0]![1].Properties.MetricTransformations as { MetricName: string }[])[0]?.MetricName;
    const alarms = ofType('AWS::CloudWatch::Alarm').filter(([, alarm]) => alarm.Properties.MetricName === metricName);
    expect(alarms).toHaveLength(1);
    expect(alarms[0]?.[1].Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
  });

  it('counts checks whose telemetry could not be queued, with an alarm', () => {
    const filters = ofType('AWS::Logs::MetricFilter').filter(([, filter]) => filter.Properties.FilterPattern === `{ $.message = "${TELEMETRY_NOT_QUEUED}" }`);
    expect(filters).toHaveLength(1);
  });
});

describe('least privilege on the table', () => {
  /** What a statement's resource names: the table, one of its indexes, or its stream. */
  function resourceName(resource: unknown): string {
    const text = JSON.stringify(resource);
    const index = /"\/index\/([^"]+)"/.exec(text);
    if (index) return `index/${index[1]}`;
    if (text === JSON.stringify({ 'Fn::GetAtt': [tableId(), 'Arn'] })) return 'table';
    if (text === JSON.stringify({ 'Fn::GetAtt': [tableId(), 'StreamArn'] })) return 'stream';
    return text;
  }

  /**
   * A function's DynamoDB permissions, one line per action and resource:
   * `<action> <table|index/name|stream> <LeadingKeys patterns>[ only <attributes it may name besides the keys>]`.
   */
  function tableGrantsOf(functionId: string): string[] {
    return dynamoStatements(functionId)
      .flatMap((statement) => {
        const leadingKeys = statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? [];
        const attributes = statement.Condition?.['ForAllValues:StringEquals']?.['dynamodb:Attributes']?.filter((name) => !(name in KEY_ATTRIBUTE_TYPES));
        const scope = `${leadingKeys.join(',')}${attributes ? ` only ${attributes.join(',')}` : ''}`;
        return actionsOf(statement).flatMap((action) => [statement.Resource].flat().map((resource) => `${action} ${resourceName(resource)} ${scope}`.trim()));
      })
      .toSorted();
  }

  const READ_PROJECT = 'dynamodb:GetItem table PROJECT#*';
  const COUNT_REQUEST = 'dynamodb:UpdateItem table RATE#* only requests,ttl,entity';
  const AUDIT = 'dynamodb:PutItem table AUDIT#PROJECT#*';
  /** Written out rather than derived from each route's tableAccess, so a change to a route's grant shows here. */
  const EXPECTED: Record<RouteEntry, string[]> = {
    'list-keys': [
      READ_PROJECT,
      COUNT_REQUEST,
      'dynamodb:Query index/byIssueOrderKeys prj_*',
      'dynamodb:Query index/byWatermark prj_*',
      'dynamodb:BatchGetItem table KEY#*',
    ],
    'revoke-key': [READ_PROJECT, COUNT_REQUEST, 'dynamodb:UpdateItem table KEY#*', AUDIT],
    'revoke-bulk': [
      READ_PROJECT,
      COUNT_REQUEST,
      'dynamodb:Query index/byWatermark prj_*',
      'dynamodb:BatchGetItem table KEY#*',
      'dynamodb:UpdateItem table KEY#*',
      AUDIT,
      'dynamodb:UpdateItem table AUDIT#PROJECT#* only status,outcome',
    ],
    'list-versions': [READ_PROJECT, COUNT_REQUEST, 'dynamodb:Query table PROJECT#*'],
    'trace-leak': [
      READ_PROJECT,
      COUNT_REQUEST,
      'dynamodb:Query table PROJECT#*',
      'dynamodb:Query index/byWatermark prj_*',
      'dynamodb:BatchGetItem table KEY#*',
    ],
    rollback: [READ_PROJECT, COUNT_REQUEST, 'dynamodb:ConditionCheckItem table PROJECT#*', 'dynamodb:UpdateItem table PROJECT#* only currentVersionId', AUDIT],
    'list-webhooks': [READ_PROJECT, COUNT_REQUEST, 'dynamodb:Query table PROJECT#*'],
    'get-stats': [READ_PROJECT, COUNT_REQUEST, 'dynamodb:Query table STATS#*'],
    'add-to-blacklist': [
      READ_PROJECT,
      COUNT_REQUEST,
      'dynamodb:GetItem table BLACKLIST#*',
      'dynamodb:PutItem table BLACKLIST#*',
      'dynamodb:UpdateItem table BLACKLIST#*',
      'dynamodb:Query table MACHINE#*',
      'dynamodb:Query index/byDiscordId prj_*',
      'dynamodb:UpdateItem table KEY#* only ban_reason,ban_until,projectId,revoked',
      AUDIT,
    ],
    'list-blacklist': [READ_PROJECT, COUNT_REQUEST, 'dynamodb:GetItem table BLACKLIST#*', 'dynamodb:Query table BLACKLIST#*'],
    'remove-from-blacklist': [
      READ_PROJECT,
      COUNT_REQUEST,
      'dynamodb:GetItem table BLACKLIST#*',
      'dynamodb:PutItem table BLACKLIST#*',
      'dynamodb:UpdateItem table BLACKLIST#*',
      'dynamodb:DeleteItem table BLACKLIST#*',
      AUDIT,
    ],
    'issue-keys': [
      READ_PROJECT,
      COUNT_REQUEST,
      'dynamodb:PutItem table SEQUENCE#*',
      'dynamodb:DeleteItem table SEQUENCE#*',
      'dynamodb:UpdateItem table PROJECT#* only keyCount',
      'dynamodb:GetItem table ORDER#*',
      'dynamodb:PutItem table ORDER#*',
      'dynamodb:BatchWriteItem table KEY#*,NOTE#*',
      'dynamodb:BatchGetItem table KEY#*,NOTE#*',
      'dynamodb:PutItem table KEY#*,NOTE#*',
      AUDIT,
    ],
    'get-key': [READ_PROJECT, COUNT_REQUEST, 'dynamodb:GetItem table KEY#*'],
    'reset-hwid': [
      READ_PROJECT,
      COUNT_REQUEST,
      'dynamodb:UpdateItem table KEY#* only fingerprints,projectId',
      'dynamodb:GetItem table KEY#* only projectId',
      AUDIT,
    ],
    'ban-key': [READ_PROJECT, COUNT_REQUEST, 'dynamodb:UpdateItem table KEY#* only ban_reason,ban_until,projectId', AUDIT],
    'unban-key': [READ_PROJECT, COUNT_REQUEST, 'dynamodb:UpdateItem table KEY#* only ban_reason,ban_until,projectId', AUDIT],
    'extend-key': [
      READ_PROJECT,
      COUNT_REQUEST,
      'dynamodb:UpdateItem table KEY#* only expires_at,projectId',
      'dynamodb:GetItem table KEY#* only projectId,expires_at',
      AUDIT,
    ],
    'update-key': [
      READ_PROJECT,
      COUNT_REQUEST,
      // discordKey is a key attribute (the byDiscordId index's), which every attribute condition names anyway.
      'dynamodb:UpdateItem table KEY#* only note,discord_id,max_uses,max_fingerprints,fingerprints,projectId',
      'dynamodb:GetItem table KEY#*',
      AUDIT,
    ],
  };

  it.each(ROUTES.map((route) => [route.entry, route] as const))(
    '%s may do exactly what its store calls need, each scoped to its partitions',
    (entry, route) => {
      expect(tableGrantsOf(functionIdOf(route))).toEqual(EXPECTED[entry].toSorted());
    },
  );

  it("the Discord function may count a refused signature in its address's rate window, naming only the window's attributes", () => {
    const discordFunctionId = built.stack.getLogicalId(built.stack.discord.function.node.defaultChild as never);
    expect(tableGrantsOf(discordFunctionId)).toContain(COUNT_REQUEST);
  });

  it('the authorizer may only GetItem token items', () => {
    expect(dynamoStatements(authorizerFunctionId())).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:GetItem',
        Resource: { 'Fn::GetAtt': [tableId(), 'Arn'] },
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TOKEN#*'] } },
      },
    ]);
  });

  it('queries an index in the partitions its queries name: a project id, as the index partition keys of a stored key begin', () => {
    const projectId = newId('prj');
    const attributes: Record<string, unknown> = {
      ...keyIndexAttributes(projectId, '0123456789abcdef'),
      ...discordLinkAttributes(projectId, '123456789012345678'),
    };
    for (const [name, index] of Object.entries(TABLE.indexes))
      expect(String(attributes[index.partitionKey]).startsWith(INDEX_PARTITION[name as keyof typeof TABLE.indexes])).toBe(true);
  });

  it('names every key attribute of the table and its indexes in each attribute condition, as DynamoDB requires', () => {
    for (const route of ROUTES) {
      for (const statement of dynamoStatements(functionIdOf(route))) {
        const attributes = statement.Condition?.['ForAllValues:StringEquals']?.['dynamodb:Attributes'];
        if (attributes) expect(attributes).toEqual(expect.arrayContaining(Object.keys(KEY_ATTRIBUTE_TYPES)));
      }
    }
  });

  it('no function may Scan, reach every index, or read or write the table or an index without a LeadingKeys condition', () => {
    for (const [id] of serviceFunctions()) {
      for (const grant of tableGrantsOf(id)) {
        const [action, resource = '', leadingKeys = ''] = grant.split(' ');
        expect(action, id).not.toBe('dynamodb:Scan');
        expect(resource, id).not.toBe('index/*');
        if (resource !== 'stream') expect(leadingKeys, `${id}: ${grant}`).toMatch(/^[A-Za-z_]+(#[A-Za-z_]+)*#?\*(,[A-Za-z_]+(#[A-Za-z_]+)*#?\*)*$/);
      }
    }
  });

  it('no function gets table administration, and DynamoDB grants name only this table, its indexes and its stream', () => {
    for (const [id] of serviceFunctions()) {
      for (const statement of dynamoStatements(id)) {
        for (const action of actionsOf(statement)) expect(action, id).not.toMatch(ADMIN_ACTION);
        for (const resource of [statement.Resource].flat()) expect(resourceName(resource), id).toMatch(/^(table|index\/\w+|stream)$/);
      }
    }
  });
});

describe('the key secret (selling keys: order keys derive from it)', () => {
  const secretId = () => built.stack.getLogicalId(built.stack.keySecret.node.defaultChild as never);

  it('is generated by Secrets Manager and kept when the stack or the resource goes, like the orders it answers (not after a failed create)', () => {
    const secret = resources()[secretId()];
    expect(secret?.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    expect(secret).toMatchObject({ DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
  });

  it('is readable by the issue function, the shop receiver, the console and the free keys page alone, which get its ARN in KEY_SECRET_ARN', () => {
    const issueFunction = functionIdOf(ROUTES.find((route) => route.entry === 'issue-keys')!);
    // The loader and Discord functions read the front door's origin secret, a secret of its own
    // (test/stack/front-door.test.ts); this one is read by the issue function, the shops' receiver and the console only.
    const shopFunction = built.stack.getLogicalId(built.stack.shops.function.node.defaultChild as never);
    const consoleFunction = built.stack.getLogicalId(built.stack.consoleApi?.function.node.defaultChild as never);
    const readers = serviceFunctions()
      .map(([id]) => id)
      .filter((id) =>
        statementsOf(id).some(
          (statement) => actionsOf(statement).includes('secretsmanager:GetSecretValue') && JSON.stringify(statement.Resource).includes(`"${secretId()}"`),
        ),
      );
    const freeFunction = built.stack.getLogicalId(built.stack.freeKeys.function.node.defaultChild as never);
    expect(readers.toSorted()).toEqual([issueFunction, shopFunction, consoleFunction, freeFunction].toSorted());
    for (const reader of readers) {
      const reads = statementsOf(reader).filter(
        (statement) => actionsOf(statement).includes('secretsmanager:GetSecretValue') && JSON.stringify(statement.Resource).includes(`"${secretId()}"`),
      );
      // The secret itself (the free keys' page reads the origin secret in the same statement: CDK merges them).
      expect(reads.flatMap((statement) => [statement.Resource].flat())).toContainEqual({ Ref: secretId() });
      expect(resources()[reader]?.Properties).toMatchObject({ Environment: { Variables: { KEY_SECRET_ARN: { Ref: secretId() } } } });
    }
  });
});

describe('outputs', () => {
  it('exports the API base URL (the stage URL, to which /v1/... is appended), the loader URL, the table name, the usage plan id, the alarm topic, and the API and stage a token revoke flushes', () => {
    const outputs = built.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).toSorted()).toEqual([
      'AlarmTopicArn',
      'ApiUrl',
      'ConsoleUrl',
      'DeliveryDeadLetterQueueUrl',
      'IngestFunctionName',
      'LoaderUrl',
      'RestApiId',
      'ScriptBucketName',
      'ScriptUploadPolicyArn',
      'ServiceUrl',
      'StageName',
      'TableName',
      'UsagePlanId',
    ]);
    expect(outputs.RestApiId?.Value).toEqual({ Ref: restApiId() });
    expect(outputs.StageName?.Value).toEqual({ Ref: only('AWS::ApiGateway::Stage')[0] });
    expect(JSON.stringify(outputs.ApiUrl?.Value)).toMatch(new RegExp(`"/${STAGE_NAME}"\\]\\]\\}$`));
    expect(outputs.TableName?.Value).toEqual({ Ref: tableId() });
    expect(outputs.UsagePlanId?.Value).toEqual({ Ref: only('AWS::ApiGateway::UsagePlan')[0] });
  });
});

describe('the scripts bucket', () => {
  const scriptsBucketId = () => built.stack.getLogicalId(built.stack.scripts.bucket.node.defaultChild as never);

  it('is private, encrypted, versioned, logs its access, and is exported for the dashboard', () => {
    expect(resources()[scriptsBucketId()]?.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      VersioningConfiguration: { Status: 'Enabled' },
      LoggingConfiguration: { LogFilePrefix: 'scripts/' },
    });
    const outputs = built.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.ScriptBucketName?.Value).toEqual({ Ref: scriptsBucketId() });
  });

  it('refuses any request without TLS', () => {
    const policies = ofType('AWS::S3::BucketPolicy').filter(
      ([, policy]) => JSON.stringify(policy.Properties.Bucket) === JSON.stringify({ Ref: scriptsBucketId() }),
    );
    expect(policies).toHaveLength(1);
    expect(JSON.stringify(policies[0]?.[1].Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  it("is named by the loader function's policy (it reads scripts) and the console API's (staged uploads and their commit) alone", () => {
    const named = ofType('AWS::IAM::Policy').filter(([, policy]) => JSON.stringify(policy.Properties.PolicyDocument).includes(`"${scriptsBucketId()}"`));
    expect(named.map(([id]) => id.replace(/[0-9A-F]{8}$/, '')).toSorted()).toEqual([
      'ConsoleApiFunctionServiceRoleDefaultPolicy',
      'LoaderCheckFunctionServiceRoleDefaultPolicy',
    ]);
  });

  type BucketStatement = { Sid?: string; Effect: string; Action: string | string[]; Condition?: Record<string, Record<string, unknown>> };
  const scriptBucketStatements = (template: typeof built.template, bucketId: string) =>
    Object.values(
      template.toJSON().Resources as Record<string, { Type: string; Properties: { Bucket: unknown; PolicyDocument: { Statement: BucketStatement[] } } }>,
    )
      .filter((resource) => resource.Type === 'AWS::S3::BucketPolicy' && JSON.stringify(resource.Properties.Bucket) === JSON.stringify({ Ref: bucketId }))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement);

  it("denies a script's read to every principal but the loader function's role, whatever their own IAM grants", () => {
    const deny = scriptBucketStatements(built.template, scriptsBucketId()).find((statement) => statement.Sid === 'OnlyTheLoaderReadsScripts');
    expect(deny?.Effect).toBe('Deny');
    expect([deny?.Action].flat().toSorted()).toEqual(['s3:GetObject', 's3:GetObjectVersion']);
    const loaderRole = built.stack.getLogicalId(built.stack.loaderCheck.function.role?.node.defaultChild as never);
    expect(deny?.Condition).toEqual({ ArnNotEquals: { 'aws:PrincipalArn': { 'Fn::GetAtt': [loaderRole, 'Arn'] } } });
  });

  it('exports a policy that lets the dashboard put and delete script objects only, and with dashboardPrincipalArn refuses every other writer', () => {
    const outputs = built.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const policyId = built.stack.getLogicalId(built.stack.scripts.uploadPolicy.node.defaultChild as never);
    expect(outputs.ScriptUploadPolicyArn?.Value).toEqual({ Ref: policyId });
    const document = resources()[policyId]?.Properties.PolicyDocument as { Statement: { Action: string[]; Resource: unknown }[] };
    expect(document.Statement.map((statement) => [statement.Action].flat().toSorted())).toEqual([['s3:DeleteObject', 's3:PutObject']]);
    expect(JSON.stringify(document.Statement[0]?.Resource)).toContain('/scripts/*/*.luau');
    expect(scriptBucketStatements(built.template, scriptsBucketId()).some((statement) => statement.Sid === 'OnlyTheDashboardWritesScripts')).toBe(false);

    const dashboard = 'arn:aws:iam::123456789012:role/Dashboard';
    const pinned = synthesizeApiStack({ dashboardPrincipalArn: dashboard });
    const pinnedBucket = pinned.stack.getLogicalId(pinned.stack.scripts.bucket.node.defaultChild as never);
    const onlyDashboard = scriptBucketStatements(pinned.template, pinnedBucket).find((statement) => statement.Sid === 'OnlyTheDashboardWritesScripts');
    // The console API's role commits uploads, so it is a writer beside the dashboard's principal.
    const consoleRole = pinned.stack.getLogicalId(pinned.stack.consoleApi?.function.role?.node.defaultChild as never);
    expect(onlyDashboard).toMatchObject({
      Effect: 'Deny',
      Condition: { ArnNotEquals: { 'aws:PrincipalArn': [dashboard, { 'Fn::GetAtt': [consoleRole, 'Arn'] }] } },
    });
    expect([onlyDashboard?.Action].flat().toSorted()).toEqual(['s3:DeleteObject', 's3:DeleteObjectVersion', 's3:PutObject', 's3:PutObjectAcl']);
    expect(() => synthesizeApiStack({ dashboardPrincipalArn: 'Dashboard' })).toThrow('give an IAM role or user ARN');
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('reports no violation that is not acknowledged with a reason', () => {
    const report = new AwsSolutionsChecks(built.app, { verbose: true }).validateScope(built.stack);
    expect(report.violations.map((violation) => `${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('leaves no CDK error or warning on the stack', () => {
    expect(Annotations.fromStack(built.stack).findError('*', Match.anyValue())).toEqual([]);
    expect(Annotations.fromStack(built.stack).findWarning('*', Match.anyValue())).toEqual([]);
  });
});
