import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOADER_LIMITS } from '#domain/key-check';
import { SECURITY_HEADERS } from '#http/responses';
import { DISCORD_ROUTE, PUBLIC_ROUTES, ROUTES, STUB_ROUTE } from '#http/routes';
import {
  ACCOUNT_API_RATE,
  ACCOUNT_CONCURRENCY,
  DISCORD_ROUTE_THROTTLE,
  LOADER_PLANNED_CHECKS_PER_SECOND,
  LOADER_RESERVED_CONCURRENCY,
  LOADER_ROUTE_THROTTLE,
  RESERVED_CONCURRENCY,
  STAGE_METHOD_THROTTLE,
  STUB_ROUTE_THROTTLE,
  USAGE_PLAN_THROTTLE,
  WAF_DEFAULT_REQUESTS_PER_MINUTE,
  WAF_MIN_REQUESTS_PER_MINUTE,
} from '#lib/capacity';
import type { CfnResource } from '#test-support/cdk';
import { synthesizeApiStack, templateLookups } from '#test-support/stack-template';

/** Unauthenticated and authenticated floods: stage and method throttles, reserved concurrency per group, the optional WAF. */

type Built = ReturnType<typeof synthesizeApiStack>;
let standard: Built;
let withoutReservations: Built;
let firewalled: Built;

// Three syntheses of a few seconds each, more on a loaded machine.
beforeAll(() => {
  standard = synthesizeApiStack();
  // As the CLI passes `-c reservedConcurrency=false` and `-c wafRateLimit=1200`: strings.
  withoutReservations = synthesizeApiStack({ reservedConcurrency: 'false' });
  firewalled = synthesizeApiStack({ waf: 'true', wafRateLimit: '1200' });
}, 300_000);

const lookups = templateLookups(() => standard.resources);
const ofType = (built: Built, type: string) => Object.entries(built.resources).filter(([, resource]) => resource.Type === type);

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
    expect(methodSettings().filter((setting) => setting.HttpMethod !== '*')).toEqual([]);
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

  it("never meets a single client before its usage plan does: the stage's burst and rate are above the plan's", () => {
    expect(STAGE_METHOD_THROTTLE.burstLimit).toBeGreaterThanOrEqual(USAGE_PLAN_THROTTLE.burstLimit);
    expect(STAGE_METHOD_THROTTLE.rateLimit).toBeGreaterThanOrEqual(USAGE_PLAN_THROTTLE.rateLimit);
  });

  it('stays inside the account rate docs/operations.md asks for with every method at its limit', () => {
    const ownThrottle = new Map<string, number>([
      [STUB_ROUTE.entry, STUB_ROUTE_THROTTLE.rateLimit],
      [DISCORD_ROUTE.entry, DISCORD_ROUTE_THROTTLE.rateLimit],
    ]);
    const publicRoutes = PUBLIC_ROUTES.reduce((sum, route) => sum + (ownThrottle.get(route.entry) ?? LOADER_ROUTE_THROTTLE.rateLimit), 0);
    expect(ROUTES.length * STAGE_METHOD_THROTTLE.rateLimit + publicRoutes).toBeLessThanOrEqual(ACCOUNT_API_RATE.requested);
  });

  it('refuses a malformed Authorization header before any function runs: the TOKEN authorizer has a validation expression', () => {
    const [, authorizer] = lookups.only('AWS::ApiGateway::Authorizer');
    expect(authorizer.Properties).toMatchObject({ Type: 'TOKEN', IdentitySource: 'method.request.header.Authorization' });
    expect(String(authorizer.Properties.IdentityValidationExpression)).toMatch(/^\^.*\$$/);
  });
});

describe('reserved concurrency per function group', () => {
  /** Which group each function of the stack is in, by the logical id the stack gives it. */
  const GROUPS: [RegExp, keyof typeof RESERVED_CONCURRENCY][] = [
    [/^(ListKeys|IssueKeys|GetKey|ResetHwid|RevokeKey|RevokeBulk|ListVersions|Rollback|ListWebhooks)Function[0-9A-F]{8}$/, 'route'],
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
  ];
  const reservationOf = (built: Built, id: string) => built.resources[id]?.Properties.ReservedConcurrentExecutions;

  it('gives every function of the stack the reservation of its group', () => {
    const functions = ofType(standard, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(ROUTES.length + GROUPS.length - 1);
    for (const [id] of functions) {
      const groups = GROUPS.filter(([pattern]) => pattern.test(id)).map(([, group]) => group);
      expect(groups, id).toHaveLength(1);
      expect(reservationOf(standard, id), id).toBe(RESERVED_CONCURRENCY[groups[0] ?? 'route']);
    }
  });

  it(`leaves at least ${ACCOUNT_CONCURRENCY.unreservedMinimum} of the default ${ACCOUNT_CONCURRENCY.total} instances unreserved, as Lambda requires`, () => {
    const reserved = ofType(standard, 'AWS::Lambda::Function').reduce((sum, [id]) => sum + Number(reservationOf(standard, id)), 0);
    expect(reserved).toBe(849);
    expect(ACCOUNT_CONCURRENCY.total - reserved).toBeGreaterThanOrEqual(ACCOUNT_CONCURRENCY.unreservedMinimum);
  });

  it("caps each SQS event source at its function's reservation, so a poller is never throttled into spending receives", () => {
    const mappings = ofType(standard, 'AWS::Lambda::EventSourceMapping').filter(([, mapping]) =>
      JSON.stringify(mapping.Properties.EventSourceArn).includes('Queue'),
    );
    expect(mappings).toHaveLength(2);
    for (const [id, mapping] of mappings) {
      const maximum = (mapping.Properties.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency;
      const functionId = (mapping.Properties.FunctionName as { Ref: string }).Ref;
      expect(maximum, id).toBeDefined();
      expect(maximum, id).toBeLessThanOrEqual(Number(reservationOf(standard, functionId)));
    }
  });

  it('reserves nothing with -c reservedConcurrency=false, for a new account with a lower concurrency quota', () => {
    const functions = ofType(withoutReservations, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(ofType(standard, 'AWS::Lambda::Function').length);
    for (const [id, fn] of functions) expect(fn.Properties.ReservedConcurrentExecutions, id).toBeUndefined();
  });

  it('refuses a context value that is neither true nor false, instead of guessing', () => {
    expect(() => synthesizeApiStack({ reservedConcurrency: 'no' })).toThrow('-c reservedConcurrency=no: give true or false');
  });

  it(`refuses -c wafRateLimit below ${WAF_MIN_REQUESTS_PER_MINUTE}, which would break the key check's promise to one address`, () => {
    expect(() => synthesizeApiStack({ waf: 'true', wafRateLimit: '999' })).toThrow(
      `-c wafRateLimit=999: give a whole number from ${WAF_MIN_REQUESTS_PER_MINUTE} to`,
    );
  });
});

describe('the optional AWS WAF web ACL', () => {
  const webAcl = (built: Built): CfnResource => {
    const acls = ofType(built, 'AWS::WAFv2::WebACL');
    expect(acls).toHaveLength(1);
    return acls[0]?.[1] as CfnResource;
  };

  it('is absent by default', () => {
    expect(ofType(standard, 'AWS::WAFv2::WebACL')).toEqual([]);
    expect(ofType(standard, 'AWS::WAFv2::WebACLAssociation')).toEqual([]);
  });

  it(`with -c waf=true refuses an address over -c wafRateLimit requests a minute (default ${WAF_DEFAULT_REQUESTS_PER_MINUTE}), with the API's 429`, () => {
    const acl = webAcl(firewalled);
    expect(acl.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    const rules = acl.Properties.Rules as Record<string, unknown>[];
    expect(rules).toEqual([
      expect.objectContaining({
        Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: 1200, EvaluationWindowSec: 60 } },
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
    expect(JSON.parse(bodies.TooManyRequests?.Content ?? '')).toEqual({ error: 'Too many requests from this address: at most 1200 per minute' });
  });

  it("is associated with the API's stage", () => {
    const [stageId] = ofType(firewalled, 'AWS::ApiGateway::Stage')[0] ?? [];
    const associations = ofType(firewalled, 'AWS::WAFv2::WebACLAssociation');
    expect(associations).toHaveLength(1);
    const association = associations[0]?.[1];
    expect(JSON.stringify(association?.Properties.ResourceArn)).toContain(`{"Ref":"${stageId}"}`);
    const acl = firewalled.stack.firewall?.webAcl;
    if (!acl) throw new Error('-c waf=true built no firewall');
    expect(association?.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [firewalled.stack.getLogicalId(acl), 'Arn'] });
  });

  it('leaves cdk-nag AwsSolutions with no unacknowledged finding, and no APIG3 acknowledgement to hide behind', () => {
    const report = new AwsSolutionsChecks(firewalled.app, { verbose: true }).validateScope(firewalled.stack);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});
