import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { TELEMETRY_NOT_QUEUED } from '#analytics/telemetry-queue';
import { LOADER_ROUTE, ROUTES, type Route } from '#api/routes';
import { RATE_LIMIT, RATE_LIMIT_MESSAGE } from '#domain/rate-limit';
import { AUTHORIZER_CACHE_SECONDS, parseBearer } from '#domain/tokens';
import { GATEWAY_RESPONSES, type GatewayResponseType } from '#http/gateway-responses';
import { SECURITY_HEADERS } from '#http/responses';
import { BEARER_VALIDATION_REGEX, DeveloperApiStack, FUNCTIONS_BESIDE_ROUTES, LOADER_METHOD_THROTTLE, LOADER_RESERVED_CONCURRENCY, STAGE_NAME } from '#lib/developer-api-stack';
import { createTableInput, TABLE } from '#store/table-definition';
import { type CfnResource, type GetAtt, type Statement, templateOnlyApp } from '#test-support/cdk';

type Ref = { Ref: string };

function synthesize() {
  const app = templateOnlyApp();
  const stack = new DeveloperApiStack(app, 'DeveloperApiTest');
  return { app, stack, template: Template.fromStack(stack) };
}

let built: ReturnType<typeof synthesize>;
let resources: Record<string, CfnResource>;

// Synthesis takes seconds, more on a loaded machine; the default 10 s hook timeout is too tight.
beforeAll(() => {
  built = synthesize();
  resources = built.template.toJSON().Resources as Record<string, CfnResource>;
}, 120_000);

function only(type: string): [string, CfnResource] {
  const found = Object.entries(resources).filter(([, resource]) => resource.Type === type);
  expect(found).toHaveLength(1);
  return found[0] as [string, CfnResource];
}

const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
const tableId = () => only('AWS::DynamoDB::GlobalTable')[0];
const restApiId = () => only('AWS::ApiGateway::RestApi')[0];

/** `/v1/projects/{id}/keys` of an AWS::ApiGateway::Resource, walking its parents up to the API root. */
function resourcePath(resourceId: string): string {
  const resource = resources[resourceId];
  if (!resource) throw new Error(`No resource ${resourceId}`);
  const parent = resource.Properties.ParentId as Ref | GetAtt;
  const parentPath = 'Ref' in parent ? resourcePath(parent.Ref) : '';
  return `${parentPath}/${String(resource.Properties.PathPart)}`;
}

function methodOf(route: Route): CfnResource {
  const methods = ofType('AWS::ApiGateway::Method')
    .map(([, method]) => method)
    .filter((method) => method.Properties.HttpMethod === route.method && resourcePath((method.Properties.ResourceId as Ref).Ref) === route.path);
  expect(methods, `${route.method} ${route.path}`).toHaveLength(1);
  return methods[0] as CfnResource;
}

/** Logical id of the Lambda function a method's proxy integration invokes. */
function functionIdOf(route: Route): string {
  const uri = JSON.stringify(methodOf(route).Properties.Integration);
  const ids = ofType('AWS::Lambda::Function')
    .map(([id]) => id)
    .filter((id) => uri.includes(`"${id}"`));
  expect(ids, `function behind ${route.method} ${route.path}`).toHaveLength(1);
  return ids[0] as string;
}

function authorizerFunctionId(): string {
  const [, authorizer] = only('AWS::ApiGateway::Authorizer');
  const uri = JSON.stringify(authorizer.Properties.AuthorizerUri);
  const id = ofType('AWS::Lambda::Function')
    .map(([functionId]) => functionId)
    .find((functionId) => uri.includes(`"${functionId}"`));
  if (!id) throw new Error('The authorizer invokes no function of the stack');
  return id;
}

/** Every statement of the inline policies on a function's execution role. */
function statementsOf(functionId: string): Statement[] {
  const roleId = ((resources[functionId]?.Properties.Role as GetAtt)['Fn::GetAtt'])[0];
  return ofType('AWS::IAM::Policy')
    .filter(([, policy]) => (policy.Properties.Roles as Ref[]).some((role) => role.Ref === roleId))
    .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

const actionsOf = (statement: Statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]);
const dynamoStatements = (functionId: string) => statementsOf(functionId).filter((statement) => actionsOf(statement).some((action) => action.startsWith('dynamodb:')));
const dynamoActions = (functionId: string) => new Set(dynamoStatements(functionId).flatMap(actionsOf));

/** Writes the API never makes (keys are revoked, never deleted; it puts audit entries only) and table administration. */
const FORBIDDEN_ACTIONS = ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:PartiQLInsert', 'dynamodb:PartiQLDelete', 'dynamodb:PartiQLUpdate'];
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

  it('indexes watermarks keys-only and the key order with every attribute (the key list reads its page from the index)', () => {
    built.template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      GlobalSecondaryIndexes: Match.arrayWith([
        Match.objectLike({ IndexName: TABLE.indexes.byWatermark.name, Projection: { ProjectionType: 'KEYS_ONLY' } }),
        Match.objectLike({ IndexName: TABLE.indexes.byIssueOrder.name, Projection: { ProjectionType: 'ALL' } }),
      ]),
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
  });

  it('expires rate windows and delivery ids through TTL on the definition attribute', () => {
    built.template.hasResourceProperties('AWS::DynamoDB::GlobalTable', { TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } });
  });

  it('keeps the data: point-in-time recovery, deletion protection, and retained when the stack or resource goes', () => {
    const [, table] = only('AWS::DynamoDB::GlobalTable');
    expect(table.Properties.Replicas).toEqual([
      expect.objectContaining({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true }),
    ]);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });
});

describe('the functions', () => {
  it('has one function per route, each a different function, plus the authorizer, webhook and analytics functions', () => {
    const routeFunctions = new Set(ROUTES.map(functionIdOf));
    expect(routeFunctions.size).toBe(ROUTES.length);
    expect(routeFunctions.has(authorizerFunctionId())).toBe(false);
    expect(ofType('AWS::Lambda::Function')).toHaveLength(ROUTES.length + FUNCTIONS_BESIDE_ROUTES);
  });

  it('gives the bulk revoke 28 s, inside the 29 s API Gateway waits, and every other route function 10 s', () => {
    for (const route of ROUTES) {
      const [, fn] = ofType('AWS::Lambda::Function').find(([id]) => id === functionIdOf(route)) ?? [];
      expect(fn?.Properties.Timeout, route.entry).toBe(route.entry === 'revoke-bulk' ? 28 : 10);
    }
  });

  it('runs every function on Node.js 22, arm64, traced, with the table name in TABLE_NAME', () => {
    for (const [id, fn] of ofType('AWS::Lambda::Function')) {
      expect(fn.Properties, id).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        Environment: { Variables: { TABLE_NAME: { Ref: tableId() } } },
      });
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

  it('has no method besides the routes and the loader check (no ANY, no OPTIONS), and only the loader check without the authorizer', () => {
    const methods = ofType('AWS::ApiGateway::Method');
    expect(methods).toHaveLength(ROUTES.length + 1);
    const open = methods.filter(([, method]) => method.Properties.AuthorizationType !== 'CUSTOM');
    expect(open).toHaveLength(1);
    expect(open[0]?.[1].Properties).toMatchObject({ HttpMethod: LOADER_ROUTE.method, AuthorizationType: 'NONE', ApiKeyRequired: false });
    expect(open[0]?.[1].Properties.AuthorizerId).toBeUndefined();
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
    const samples = ['Bearer sdt_abc-DEF_123.~+/', 'bearer tok', '  Bearer   dG9rZW4==  ', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearersdt', 'Bearer a b', 'Bearer ab=cd', 'Bearer abc$def', `Bearer ${'a'.repeat(513)}`];
    for (const header of samples) expect(gatewayAccepts(header), header).toBe(parseBearer(header) !== undefined);
    const headerPart = fc.constantFrom('Bearer', 'bEaReR', 'Basic', ' ', '  ', 'sdt_', 'Zx9', '-._~+/', '=', '==', '$', ',', '\t');
    fc.assert(
      fc.property(fc.array(headerPart, { maxLength: 8 }).map((parts) => parts.join('')), (header) => gatewayAccepts(header) === (parseBearer(header) !== undefined)),
    );
  });
});

describe('the usage plan', () => {
  it('throttles per token and is attached to the deployed stage', () => {
    const [stageId] = only('AWS::ApiGateway::Stage');
    built.template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 2, BurstLimit: 100 },
      ApiStages: [Match.objectLike({ ApiId: { Ref: restApiId() }, Stage: { Ref: stageId } })],
    });
  });

  it('never refuses a client that keeps to the spec limit of 100 requests per minute', () => {
    const [, plan] = only('AWS::ApiGateway::UsagePlan');
    const { RateLimit, BurstLimit } = plan.Properties.Throttle as { RateLimit: number; BurstLimit: number };
    // A token bucket: the whole minute's allowance fits in the burst, and a minute refills at least that much.
    expect(BurstLimit).toBeGreaterThanOrEqual(RATE_LIMIT.requests);
    expect(RateLimit * RATE_LIMIT.windowSeconds).toBeGreaterThanOrEqual(RATE_LIMIT.requests);
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
    const template = (response?.Properties.ResponseTemplates as Record<string, string>)['application/json'] ?? '';
    const serverSide = type === 'DEFAULT_5XX' || (status !== undefined && status >= 500);
    expect(JSON.parse(template)).toEqual(serverSide ? { error, request_id: '$context.requestId' } : { error });
    const headers = response?.Properties.ResponseParameters as Record<string, string>;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(headers[`gatewayresponse.header.${name}`]).toBe(`'${value}'`);
  });

  it.each(['THROTTLED', 'QUOTA_EXCEEDED'] as const)('%s is a 429 with the spec message and Retry-After: 60', (type) => {
    built.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: type,
      StatusCode: '429',
      ResponseTemplates: { 'application/json': JSON.stringify({ error: RATE_LIMIT_MESSAGE }) },
      ResponseParameters: Match.objectLike({ 'gatewayresponse.header.Retry-After': `'${RATE_LIMIT.windowSeconds}'` }),
    });
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

  it('throttles its method in API Gateway, for all clients together', () => {
    const [, stage] = only('AWS::ApiGateway::Stage');
    expect(stage.Properties.MethodSettings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          HttpMethod: LOADER_ROUTE.method,
          ResourcePath: `/${LOADER_ROUTE.path.replaceAll('/', '~1')}`,
          ThrottlingRateLimit: LOADER_METHOD_THROTTLE.rateLimit,
          ThrottlingBurstLimit: LOADER_METHOD_THROTTLE.burstLimit,
        }),
      ]),
    );
  });

  it('runs in its own function with reserved concurrency, so a flood of checks cannot take the instances other functions need', () => {
    expect(resources[loaderFunctionId()]?.Properties.ReservedConcurrentExecutions).toBe(LOADER_RESERVED_CONCURRENCY);
  });

  it('may update key items and rate windows only, and send to the telemetry queue', () => {
    const roleId = (resources[loaderFunctionId()]?.Properties.Role as GetAtt)['Fn::GetAtt'][0];
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, policy]) => (policy.Properties.Roles as Ref[]).some((role) => role.Ref === roleId))
      .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const actions = statements.flatMap((statement) => [statement.Action].flat());
    expect(actions.filter((action) => action.startsWith('dynamodb:'))).toEqual(['dynamodb:UpdateItem']);
    const dynamo = statements.find((statement) => [statement.Action].flat().includes('dynamodb:UpdateItem'));
    expect(dynamo?.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys']).toEqual(['KEY#*', 'RATE#*']);
    expect(actions.filter((action) => action.startsWith('sqs:')).sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
  });

  it('counts checks whose telemetry could not be queued, with an alarm', () => {
    const [, filter] = only('AWS::Logs::MetricFilter');
    expect(filter.Properties).toMatchObject({ FilterPattern: `{ $.message = "${TELEMETRY_NOT_QUEUED}" }` });
  });
});

describe('least privilege on the table', () => {
  const readRoutes = ROUTES.filter((route) => route.access === 'read');
  const writeRoutes = ROUTES.filter((route) => route.access === 'write');

  it.each(readRoutes.map((route) => [route.entry, route] as const))('%s (read) reads, updates only rate-limit windows, and puts nothing', (_entry, route) => {
    const fn = functionIdOf(route);
    const actions = dynamoActions(fn);
    for (const action of ['dynamodb:GetItem', 'dynamodb:Query']) expect(actions.has(action), action).toBe(true);
    for (const action of [...FORBIDDEN_ACTIONS, 'dynamodb:PutItem']) expect(actions.has(action), action).toBe(false);
    const updates = dynamoStatements(fn).filter((statement) => actionsOf(statement).includes('dynamodb:UpdateItem'));
    expect(updates).toHaveLength(1);
    expect(updates[0]?.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RATE#*'] } });
  });

  it.each(writeRoutes.map((route) => [route.entry, route] as const))(
    '%s (write) reads, updates keys, projects, rate windows and audit entries, puts audit entries only, and never deletes or batch-writes',
    (_entry, route) => {
      const fn = functionIdOf(route);
      const actions = dynamoActions(fn);
      for (const action of ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem']) expect(actions.has(action), action).toBe(true);
      for (const action of FORBIDDEN_ACTIONS) expect(actions.has(action), action).toBe(false);
      const grantsOf = (action: string) => dynamoStatements(fn).filter((statement) => actionsOf(statement).includes(action));
      expect(grantsOf('dynamodb:UpdateItem').map((statement) => statement.Condition)).toEqual([
        { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['KEY#*', 'PROJECT#*', 'RATE#*', 'AUDIT#PROJECT#*'] } },
      ]);
      expect(grantsOf('dynamodb:PutItem')).toEqual([
        {
          Effect: 'Allow',
          Action: 'dynamodb:PutItem',
          Resource: { 'Fn::GetAtt': [tableId(), 'Arn'] },
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['AUDIT#PROJECT#*'] } },
        },
      ]);
    },
  );

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

  it('no function gets table administration, and DynamoDB grants name only this table, its indexes and its stream', () => {
    const table = new RegExp(`\\{"Fn::GetAtt":\\["${tableId()}","(Arn|StreamArn)"\\]\\}`);
    for (const [id] of ofType('AWS::Lambda::Function')) {
      for (const statement of dynamoStatements(id)) {
        for (const action of actionsOf(statement)) expect(action, id).not.toMatch(ADMIN_ACTION);
        const resourcesNamed = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
        for (const resource of resourcesNamed) expect(JSON.stringify(resource), id).toMatch(table);
      }
    }
  });
});

describe('outputs', () => {
  it('exports the API base URL (the stage URL, to which /v1/... is appended), the table name, the usage plan id, and the API and stage a token revoke flushes', () => {
    const outputs = built.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).toSorted()).toEqual(['ApiUrl', 'DeliveryDeadLetterQueueUrl', 'IngestFunctionName', 'RestApiId', 'StageName', 'TableName', 'UsagePlanId']);
    expect(outputs.RestApiId?.Value).toEqual({ Ref: restApiId() });
    expect(outputs.StageName?.Value).toEqual({ Ref: only('AWS::ApiGateway::Stage')[0] });
    expect(JSON.stringify(outputs.ApiUrl?.Value)).toMatch(new RegExp(`"/${STAGE_NAME}"\\]\\]\\}$`));
    expect(outputs.TableName?.Value).toEqual({ Ref: tableId() });
    expect(outputs.UsagePlanId?.Value).toEqual({ Ref: only('AWS::ApiGateway::UsagePlan')[0] });
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
