import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOADER_LIMITS } from '#domain/key-check';
import { DISCORD_ROUTE, FREE_KEY_ROUTES, PUBLIC_ROUTES, SHOP_ROUTE, STUB_ROUTE } from '#http/public-routes';
import { SECURITY_HEADERS } from '#http/responses';
import { isQuiet, ROUTES } from '#http/routes';
import {
  ACCOUNT_API_RATE,
  ACCOUNT_CONCURRENCY,
  API_GATEWAY_ACCOUNT_THROTTLE,
  DISCORD_ROUTE_THROTTLE,
  FREE_KEY_ROUTE_THROTTLE,
  FUNCTIONS_PER_GROUP,
  LOADER_PLANNED_CHECKS_PER_SECOND,
  LOADER_RESERVED_CONCURRENCY,
  LOADER_ROUTE_THROTTLE,
  QUIET_ROUTE_THROTTLE,
  RESERVED_CONCURRENCY,
  ROUTE_BURST_CEILING,
  SHOP_ROUTE_THROTTLE,
  STAGE_METHOD_THROTTLE,
  STUB_ROUTE_THROTTLE,
  USAGE_PLAN_THROTTLE,
  WAF_DEFAULT_REQUESTS_PER_MINUTE,
  WAF_MIN_REQUESTS_PER_MINUTE,
  WAF_PATH_RATE_LIMITS,
} from '#lib/capacity';
import { EDGE_FIREWALL_REGION } from '#lib/context';
import type { CfnResource } from '#test-support/cdk';
import { synthesizeApiStack, templateLookups } from '#test-support/stack-template';

/** Unauthenticated and authenticated floods: stage and method throttles, reserved concurrency per group, the optional WAF. */

type Built = ReturnType<typeof synthesizeApiStack>;
let standard: Built;
let reserving: Built;
let partly: Built;
let firewalled: Built;
let firewalledElsewhere: Built;

// Four syntheses of a few seconds each, more on a loaded machine.
beforeAll(() => {
  standard = synthesizeApiStack();
  // As npm run deploy passes `-c reservableConcurrency=900` (a default account) and the CLI `-c wafRateLimit=2500`: strings.
  reserving = synthesizeApiStack({ reservableConcurrency: String(ACCOUNT_CONCURRENCY.total - ACCOUNT_CONCURRENCY.unreservedMinimum) });
  partly = synthesizeApiStack({ reservableConcurrency: '250' });
  firewalled = synthesizeApiStack({ waf: 'true', wafRateLimit: '2500' }, { account: '123456789012', region: EDGE_FIREWALL_REGION });
  firewalledElsewhere = synthesizeApiStack({ waf: 'true' }, { account: '123456789012', region: 'sa-east-1' });
}, 300_000);

const lookups = templateLookups(() => standard.resources);
const ofType = (built: Built, type: string) => Object.entries(built.resources).filter(([, resource]) => resource.Type === type);
/** The stack's own functions, without CDK's BucketDeployment handler (the console's files, at deployment). */
const functionsOf = (built: Built) => templateLookups(() => built.resources).serviceFunctions();

describe('API Gateway throttling', () => {
  const methodSettings = () => lookups.only('AWS::ApiGateway::Stage')[1].Properties.MethodSettings as Record<string, unknown>[];

  it('throttles every method of the stage by default, for all clients together', () => {
    expect(methodSettings()).toContainEqual(
      expect.objectContaining({
        HttpMethod: '*',
        ResourcePath: '/*',
        ThrottlingRateLimit: STAGE_METHOD_THROTTLE.rateLimit,
        ThrottlingBurstLimit: STAGE_METHOD_THROTTLE.burstLimit,
      }),
    );
  });

  it("throttles each loader route on its HTTP API's stage, not on the REST stage", () => {
    expect(methodSettings().filter((setting) => setting.HttpMethod !== '*' && String(setting.ResourcePath).includes('loader'))).toEqual([]);
    expect(lookups.only('AWS::ApiGatewayV2::Stage')[1].Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: LOADER_ROUTE_THROTTLE.rateLimit,
      ThrottlingBurstLimit: LOADER_ROUTE_THROTTLE.burstLimit,
    });
  });

  it('sizes the loader route from the per-address limit: one host must send 37 times what the function admits from it before a buyer meets a 429', () => {
    const headroomPerMinute = (LOADER_ROUTE_THROTTLE.rateLimit - LOADER_PLANNED_CHECKS_PER_SECOND) * 60;
    expect(headroomPerMinute / LOADER_LIMITS.perAddressPerMinute).toBeGreaterThanOrEqual(37);
    // Refused in memory at about 1 ms each, a whole route's flood needs a few of the reserved instances.
    expect((LOADER_ROUTE_THROTTLE.rateLimit * 2 * 1) / 1000).toBeLessThan(LOADER_RESERVED_CONCURRENCY / 10);
  });

  it("bursts no route or method past a quarter of the account's burst, which no quota request raises", () => {
    // "Amazon API Gateway quotas", https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html: the account's
    // burst "is not a quota that a customer can control or request changes to"; one route allowed all of it (the
    // loader routes had 5,000) could empty it for every API of the account in one instant of a flood.
    expect(ROUTE_BURST_CEILING).toBe(API_GATEWAY_ACCOUNT_THROTTLE.burstLimit / 4);
    const [, httpStage] = lookups.only('AWS::ApiGatewayV2::Stage');
    const httpBursts = [
      (httpStage.Properties.DefaultRouteSettings as { ThrottlingBurstLimit: number }).ThrottlingBurstLimit,
      ...Object.values((httpStage.Properties.RouteSettings ?? {}) as Record<string, { ThrottlingBurstLimit: number }>).map(
        (route) => route.ThrottlingBurstLimit,
      ),
    ];
    const restBursts = methodSettings().map((setting) => setting.ThrottlingBurstLimit as number);
    expect(httpBursts.length).toBeGreaterThanOrEqual(3);
    for (const burst of [...httpBursts, ...restBursts]) {
      expect(burst).toBeGreaterThan(0);
      expect(burst).toBeLessThanOrEqual(ROUTE_BURST_CEILING);
    }
    // The two key-check routes flooded together leave at least half of the account's burst to everything else.
    expect(2 * LOADER_ROUTE_THROTTLE.burstLimit).toBeLessThanOrEqual(API_GATEWAY_ACCOUNT_THROTTLE.burstLimit / 2);
  });

  it('sizes the Discord route, one bucket for every project, so one host at the WAF per-address limit takes at most a tenth of it', () => {
    expect(DISCORD_ROUTE_THROTTLE.rateLimit).toBeGreaterThanOrEqual((10 * WAF_DEFAULT_REQUESTS_PER_MINUTE) / 60);
    expect(DISCORD_ROUTE_THROTTLE.burstLimit).toBeGreaterThanOrEqual(2 * DISCORD_ROUTE_THROTTLE.rateLimit);
    // Refused in memory at about 1 ms each past the address's refusals, the whole rate needs under one reserved instance.
    expect((DISCORD_ROUTE_THROTTLE.rateLimit * 1) / 1000).toBeLessThan(RESERVED_CONCURRENCY.discord / 10);
  });

  it("never meets a single client before its usage plan does: the stage's burst and rate are above the plan's", () => {
    expect(STAGE_METHOD_THROTTLE.burstLimit).toBeGreaterThanOrEqual(USAGE_PLAN_THROTTLE.burstLimit);
    expect(STAGE_METHOD_THROTTLE.rateLimit).toBeGreaterThanOrEqual(USAGE_PLAN_THROTTLE.rateLimit);
  });

  it('stays inside the account rate docs/operations.md asks for with every method at its limit', () => {
    const ownerRoutes = ROUTES.reduce((sum, route) => sum + (isQuiet(route) ? QUIET_ROUTE_THROTTLE : STAGE_METHOD_THROTTLE).rateLimit, 0);
    const ownThrottle = new Map<string, number>([
      [STUB_ROUTE.entry, STUB_ROUTE_THROTTLE.rateLimit],
      [DISCORD_ROUTE.entry, DISCORD_ROUTE_THROTTLE.rateLimit],
      [SHOP_ROUTE.entry, SHOP_ROUTE_THROTTLE.rateLimit],
      ...FREE_KEY_ROUTES.map((route): [string, number] => [route.entry, FREE_KEY_ROUTE_THROTTLE.rateLimit]),
    ]);
    const publicRoutes = PUBLIC_ROUTES.reduce((sum, route) => sum + (ownThrottle.get(route.entry) ?? LOADER_ROUTE_THROTTLE.rateLimit), 0);
    expect(ownerRoutes + publicRoutes).toBeLessThanOrEqual(ACCOUNT_API_RATE.requested);
  });

  it("throttles each quiet route (ban, unban, extend, edit a key) at its own rate, still above the usage plan's", () => {
    const [, stage] = lookups.only('AWS::ApiGateway::Stage');
    const settings = stage.Properties.MethodSettings as {
      HttpMethod: string;
      ResourcePath: string;
      ThrottlingRateLimit?: number;
      ThrottlingBurstLimit?: number;
    }[];
    const quiet = settings.filter((setting) => setting.ThrottlingRateLimit === QUIET_ROUTE_THROTTLE.rateLimit);
    // CloudFormation's form of a resource path: a leading slash, then the path with each of its slashes as ~1.
    expect(quiet.map((setting) => `${setting.HttpMethod} ${setting.ResourcePath.slice(1).replaceAll('~1', '/')}`).toSorted()).toEqual(
      ROUTES.filter(isQuiet)
        .map((route) => `${route.method} ${route.path}`)
        .toSorted(),
    );
    for (const setting of quiet) expect(setting.ThrottlingBurstLimit).toBe(QUIET_ROUTE_THROTTLE.burstLimit);
    expect(QUIET_ROUTE_THROTTLE.rateLimit).toBeGreaterThanOrEqual(USAGE_PLAN_THROTTLE.rateLimit);
    expect(QUIET_ROUTE_THROTTLE.burstLimit).toBeGreaterThanOrEqual(USAGE_PLAN_THROTTLE.burstLimit);
  });

  it('refuses a malformed Authorization header before any function runs: the TOKEN authorizer has a validation expression', () => {
    const [, authorizer] = lookups.only('AWS::ApiGateway::Authorizer');
    expect(authorizer.Properties).toMatchObject({ Type: 'TOKEN', IdentitySource: 'method.request.header.Authorization' });
    expect(String(authorizer.Properties.IdentityValidationExpression)).toMatch(/^\^.*\$$/);
  });
});

describe('reserved concurrency per function group', () => {
  /** An owner route's function's logical id, as the stack names it from the route's entry (`ban-key` → `BanKeyFunction…`). */
  const routeFunctions = (routes: readonly (typeof ROUTES)[number][]) =>
    new RegExp(
      `^(${routes.map((route) => route.entry.replace(/(^|-)([a-z])/g, (_, _dash, letter: string) => letter.toUpperCase())).join('|')})Function[0-9A-F]{8}$`,
    );
  /** Which group each function of the stack is in, by the logical id the stack gives it. */
  const GROUPS: [RegExp, keyof typeof RESERVED_CONCURRENCY][] = [
    [routeFunctions(ROUTES.filter((route) => !isQuiet(route))), 'route'],
    [routeFunctions(ROUTES.filter(isQuiet)), 'quietRoute'],
    [/^AuthorizerFunction[0-9A-F]{8}$/, 'authorizer'],
    [/^LoaderCheckFunction[0-9A-F]{8}$/, 'loaderCheck'],
    [/^WebhooksFanoutFunction[0-9A-F]{8}$/, 'fanout'],
    [/^WebhooksDeliveryFunction[0-9A-F]{8}$/, 'delivery'],
    [/^AnalyticsIngestFunction[0-9A-F]{8}$/, 'ingest'],
    [/^AnalyticsQueueIngestFunction[0-9A-F]{8}$/, 'queueIngest'],
    [/^AnalyticsStreamIngestFunction[0-9A-F]{8}$/, 'streamIngest'],
    [/^AnalyticsDailyDetectorFunction[0-9A-F]{8}$/, 'dailyDetector'],
    [/^AnalyticsAlertDigestFunction[0-9A-F]{8}$/, 'alertDigest'],
    [/^DiscordFunction[0-9A-F]{8}$/, 'discord'],
    [/^ConsoleApiFunction[0-9A-F]{8}$/, 'console'],
    [/^ShopsFunction[0-9A-F]{8}$/, 'shops'],
    [/^FreeKeysFunction[0-9A-F]{8}$/, 'freeKeys'],
  ];
  const reservationOf = (built: Built, id: string) => built.resources[id]?.Properties.ReservedConcurrentExecutions as number | undefined;
  const reservedIn = (built: Built) => functionsOf(built).reduce((sum, [id]) => sum + (reservationOf(built, id) ?? 0), 0);
  const groupOf = (id: string) => GROUPS.filter(([pattern]) => pattern.test(id)).map(([, group]) => group);

  it('puts every function of the stack in one group, as many a group as FUNCTIONS_PER_GROUP says (the deploy preflight plans with it)', () => {
    const functions = functionsOf(standard);
    expect(functions).toHaveLength(ROUTES.length + GROUPS.length - 2);
    const counted: Record<string, number> = {};
    for (const [id] of functions) {
      expect(groupOf(id), id).toHaveLength(1);
      const group = groupOf(id)[0] ?? 'route';
      counted[group] = (counted[group] ?? 0) + 1;
    }
    expect(counted).toEqual(FUNCTIONS_PER_GROUP);
  });

  // A new account's quota can be 10 ("New AWS accounts have reduced concurrency and memory quotas", Lambda quotas):
  // a reservation there fails the create and rolls the stack back, since Lambda keeps 100 unreserved.
  it('reserves nothing by default, so the default template deploys in a new account whose concurrency quota is 10', () => {
    const newAccountQuota = 10;
    const reservable = Math.max(0, newAccountQuota - ACCOUNT_CONCURRENCY.unreservedMinimum);
    expect(reservedIn(standard)).toBeLessThanOrEqual(reservable);
    for (const [id, fn] of functionsOf(standard)) expect(fn.Properties.ReservedConcurrentExecutions, id).toBeUndefined();
    expect(standard.stack.reservations.reserved).toEqual([]);
  });

  it('with -c reservableConcurrency=900 (a default account of 1,000) gives every function the reservation of its group', () => {
    for (const [id] of functionsOf(reserving)) expect(reservationOf(reserving, id), id).toBe(RESERVED_CONCURRENCY[groupOf(id)[0] ?? 'route']);
  });

  it(`leaves at least ${ACCOUNT_CONCURRENCY.unreservedMinimum} of the default ${ACCOUNT_CONCURRENCY.total} instances unreserved, as Lambda requires`, () => {
    expect(reservedIn(reserving)).toBe(900);
    expect(ACCOUNT_CONCURRENCY.total - reservedIn(reserving)).toBeGreaterThanOrEqual(ACCOUNT_CONCURRENCY.unreservedMinimum);
  });

  it('with less reservable than every group needs, reserves whole groups in priority order and never more than allowed', () => {
    expect(reservedIn(partly)).toBeLessThanOrEqual(250);
    // 100 + 100 + 20 + 5 + 10 + 10 + 2 + 2 = 249: then neither ingest's 50 nor the routes' fit.
    expect(partly.stack.reservations.reserved).toEqual([
      'loaderCheck',
      'authorizer',
      'queueIngest',
      'delivery',
      'fanout',
      'streamIngest',
      'dailyDetector',
      'alertDigest',
    ]);
    for (const [id] of functionsOf(partly)) {
      const group = groupOf(id)[0] ?? 'route';
      expect(reservationOf(partly, id), id).toBe(partly.stack.reservations.reserved.includes(group) ? RESERVED_CONCURRENCY[group] : undefined);
    }
  });

  it("caps each SQS event source at its function's reservation when reserved, so a poller is never throttled into spending receives", () => {
    for (const built of [reserving, partly]) {
      const mappings = ofType(built, 'AWS::Lambda::EventSourceMapping').filter(([, mapping]) =>
        JSON.stringify(mapping.Properties.EventSourceArn).includes('Queue'),
      );
      expect(mappings).toHaveLength(2);
      for (const [id, mapping] of mappings) {
        const maximum = (mapping.Properties.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency;
        const functionId = (mapping.Properties.FunctionName as { Ref: string }).Ref;
        expect(maximum, id).toBeDefined();
        expect(maximum, id).toBeLessThanOrEqual(Number(reservationOf(built, functionId)));
      }
    }
  });

  it('refuses the old -c reservedConcurrency flag, naming the one that replaced it', () => {
    expect(() => synthesizeApiStack({ reservedConcurrency: 'false' })).toThrow('-c reservedConcurrency is replaced by -c reservableConcurrency=N');
  });

  it('refuses a -c reservableConcurrency that is not a whole number, instead of guessing', () => {
    expect(() => synthesizeApiStack({ reservableConcurrency: 'lots' })).toThrow('-c reservableConcurrency=lots: give a whole number from 0 to');
  });

  it(`refuses -c wafRateLimit below ${WAF_MIN_REQUESTS_PER_MINUTE}, where WAF would refuse buyers the key check admits`, () => {
    expect(WAF_MIN_REQUESTS_PER_MINUTE).toBe(LOADER_LIMITS.perAddressPerMinute);
    expect(() => synthesizeApiStack({ waf: 'true', wafRateLimit: '2399' }, { region: EDGE_FIREWALL_REGION })).toThrow(
      `-c wafRateLimit=2399: give a whole number from ${WAF_MIN_REQUESTS_PER_MINUTE} to`,
    );
  });
});

describe('the optional AWS WAF web ACL, on the front door', () => {
  const webAcl = (resources: Record<string, CfnResource>): [string, CfnResource] => {
    const acls = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::WAFv2::WebACL');
    expect(acls).toHaveLength(1);
    return acls[0] as [string, CfnResource];
  };
  const distribution = (built: Built) => templateLookups(() => built.resources).only('AWS::CloudFront::Distribution')[1];

  it('is absent by default', () => {
    expect(ofType(standard, 'AWS::WAFv2::WebACL')).toEqual([]);
    expect(distribution(standard).Properties.DistributionConfig).not.toHaveProperty('WebACLId');
  });

  it(`with -c waf=true refuses a viewer address over -c wafRateLimit requests a minute (default ${WAF_DEFAULT_REQUESTS_PER_MINUTE}), with the loader's and the API's 429`, () => {
    const [, acl] = webAcl(firewalled.resources);
    expect(acl.Properties).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    const rules = acl.Properties.Rules as Record<string, unknown>[];
    expect(rules.filter((rule) => rule.Name === 'PerAddressRateLimit')).toEqual([
      expect.objectContaining({
        Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: 2500, EvaluationWindowSec: 60 } },
        Action: {
          Block: {
            CustomResponse: {
              ResponseCode: 429,
              CustomResponseBodyKey: 'TooManyRequests',
              ResponseHeaders: [
                { Name: 'Cache-Control', Value: SECURITY_HEADERS['Cache-Control'] },
                { Name: 'X-Content-Type-Options', Value: SECURITY_HEADERS['X-Content-Type-Options'] },
                { Name: 'Retry-After', Value: '60' },
              ],
            },
          },
        },
      }),
    ]);
    const bodies = acl.Properties.CustomResponseBodies as Record<string, { ContentType: string; Content: string }>;
    expect(bodies.TooManyRequests?.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(bodies.TooManyRequests?.Content ?? '')).toEqual({ error: 'Too many requests from this address: at most 2500 per minute' });
  });

  it('limits sign-ins (POST /console/api/session) and stub fetches of one address on their own, before the rule over every path', () => {
    // Verified on paper: WAF's rate-based rules with a scope-down statement count only the requests it matches.
    const [, acl] = webAcl(firewalled.resources);
    const rules = acl.Properties.Rules as { Name: string; Priority: number; Statement: { RateBasedStatement: Record<string, unknown> }; Action: unknown }[];
    expect(rules.map((rule) => [rule.Name, rule.Priority])).toEqual([
      ['SignInRateLimit', 0],
      ['StubRateLimit', 1],
      ['PerAddressRateLimit', 2],
    ]);
    const [signIn, stub] = rules;
    expect(signIn?.Statement.RateBasedStatement).toMatchObject({
      AggregateKeyType: 'IP',
      Limit: WAF_PATH_RATE_LIMITS.signIn.requests,
      EvaluationWindowSec: 300,
    });
    expect(signIn?.Statement.RateBasedStatement.ScopeDownStatement).toEqual({
      AndStatement: {
        Statements: [
          expect.objectContaining({
            ByteMatchStatement: expect.objectContaining({
              FieldToMatch: { UriPath: {} },
              PositionalConstraint: 'EXACTLY',
              SearchString: '/console/api/session',
            }),
          }),
          expect.objectContaining({
            ByteMatchStatement: expect.objectContaining({ FieldToMatch: { Method: {} }, PositionalConstraint: 'EXACTLY', SearchString: 'POST' }),
          }),
        ],
      },
    });
    expect(stub?.Statement.RateBasedStatement).toMatchObject({
      Limit: LOADER_LIMITS.perAddressPerMinute,
      EvaluationWindowSec: 60,
      ScopeDownStatement: { ByteMatchStatement: { FieldToMatch: { UriPath: {} }, PositionalConstraint: 'STARTS_WITH', SearchString: '/v1/loader/stub/' } },
    });
    expect(JSON.stringify(signIn?.Action)).toContain('"ResponseCode":429');
    expect(JSON.stringify(signIn?.Action)).toContain('{"Name":"Retry-After","Value":"300"}');
    const bodies = acl.Properties.CustomResponseBodies as Record<string, { Content: string }>;
    expect(JSON.parse(bodies.TooManySignIns?.Content ?? '')).toEqual({ error: 'Too many sign-ins from this address: at most 20 in 5 minutes' });
  });

  it('guards the distribution (every route), not a regional stage that would see only CloudFront', () => {
    const [aclId] = webAcl(firewalled.resources);
    expect(distribution(firewalled).Properties.DistributionConfig).toMatchObject({ WebACLId: { 'Fn::GetAtt': [aclId, 'Arn'] } });
    expect(ofType(firewalled, 'AWS::WAFv2::WebACLAssociation')).toEqual([]);
  });

  it('lives in a companion stack in us-east-1 when the stack is in another Region, its ARN read across Regions', () => {
    const edge = firewalledElsewhere.stack.edgeFirewallStack;
    if (!edge) throw new Error('-c waf=true in sa-east-1 built no companion stack');
    expect(edge.region).toBe(EDGE_FIREWALL_REGION);
    expect(ofType(firewalledElsewhere, 'AWS::WAFv2::WebACL')).toEqual([]);
    const [, acl] = webAcl(Template.fromStack(edge).toJSON().Resources as Record<string, CfnResource>);
    expect(acl.Properties.Scope).toBe('CLOUDFRONT');
    const reference = JSON.stringify(distribution(firewalledElsewhere).Properties.DistributionConfig);
    expect(reference).toMatch(/"WebACLId":\{"Fn::GetAtt":\["ExportsReader[0-9A-F]+","\/cdk\/exports\/DeveloperApiTest\/.*FirewallWebAcl/);
    expect(firewalledElsewhere.stack.dependencies).toContain(edge);
  });

  it("refuses -c waf=true when the stack's Region is not known at synth, instead of a web ACL CloudFormation would reject", () => {
    expect(() => synthesizeApiStack({ waf: 'true' })).toThrow("-c waf=true: CloudFront's web ACL lives in us-east-1");
  });

  it('leaves cdk-nag AwsSolutions with no unacknowledged finding in either stack', () => {
    for (const built of [firewalled, firewalledElsewhere]) {
      const report = new AwsSolutionsChecks(built.app, { verbose: true }).validateScope(built.stack);
      expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
    }
    const edge = firewalledElsewhere.stack.edgeFirewallStack;
    if (!edge) throw new Error('no companion stack');
    expect(new AwsSolutionsChecks(firewalledElsewhere.app, { verbose: true }).validateScope(edge).violations).toEqual([]);
  });
});
