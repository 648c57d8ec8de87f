import { Stack, type StackProps } from 'aws-cdk-lib';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { SECURITY_HEADERS } from '#http/responses';
import { WAF_PATH_RATE_LIMITS } from '#lib/capacity';

export interface PerAddressFirewallProps {
  /** Requests a minute one IP address may send, over every route of the front door, before the rest of the minute is refused. */
  requestsPerMinute: number;
}

/** WAF counts a rate-based rule's requests over this window (60, 120, 300 or 600 s): the API's own limits are per minute. */
const WINDOW_SECONDS = 60;

/**
 * An AWS WAF web ACL for the front door's CloudFront distribution (scope CLOUDFRONT, so it must be created in
 * us-east-1) with one rate-based rule per viewer IP address: WAF at the edge sees the buyer's own address, so a
 * flood from one address is refused at the edge location, before API Gateway counts it against a route's throttle
 * and before any function runs. The refusal is the loader's and the API's own 429 (`{"error"}` JSON,
 * `Retry-After`, the security headers). Costs a web ACL and a rule a month plus a charge per request (docs/cost.md).
 */
export class PerAddressFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: PerAddressFirewallProps) {
    super(scope, id);
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    // WAF sets Content-Type from the body; it may not be given as a header.
    const headers = Object.fromEntries(Object.entries(SECURITY_HEADERS).filter(([name]) => name !== 'Content-Type'));
    const uriPath = (searchString: string, positionalConstraint: 'EXACTLY' | 'STARTS_WITH') => ({
      byteMatchStatement: { fieldToMatch: { uriPath: {} }, positionalConstraint, searchString, textTransformations: [{ priority: 0, type: 'NONE' }] },
    });
    const tooMany = (key: string, windowSeconds: number) => ({
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: key,
          responseHeaders: Object.entries({ ...headers, 'Retry-After': String(windowSeconds) }).map(([name, value]) => ({ name, value })),
        },
      },
    });
    const { signIn, stub } = WAF_PATH_RATE_LIMITS;
    const json = (error: string) => ({ contentType: 'APPLICATION_JSON', content: JSON.stringify({ error }) });
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      description: `Script Distribution front door: at most ${props.requestsPerMinute} requests a minute per IP address, fewer on sign-in and the stub`,
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('DeveloperApi'),
      customResponseBodies: {
        TooManyRequests: json(`Too many requests from this address: at most ${props.requestsPerMinute} per minute`),
        TooManySignIns: json(`Too many sign-ins from this address: at most ${signIn.requests} in ${signIn.windowSeconds / 60} minutes`),
        TooManyStubs: json(`Too many stub fetches from this address: at most ${stub.requests} per minute`),
      },
      rules: [
        {
          name: 'SignInRateLimit',
          priority: 0,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: signIn.requests,
              evaluationWindowSec: signIn.windowSeconds,
              scopeDownStatement: {
                andStatement: {
                  statements: [
                    uriPath(signIn.path, 'EXACTLY'),
                    {
                      byteMatchStatement: {
                        fieldToMatch: { method: {} },
                        positionalConstraint: 'EXACTLY',
                        searchString: signIn.method,
                        textTransformations: [{ priority: 0, type: 'NONE' }],
                      },
                    },
                  ],
                },
              },
            },
          },
          action: tooMany('TooManySignIns', signIn.windowSeconds),
          visibilityConfig: visibility('DeveloperApiSignInRateLimit'),
        },
        {
          name: 'StubRateLimit',
          priority: 1,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: stub.requests,
              evaluationWindowSec: stub.windowSeconds,
              scopeDownStatement: uriPath(stub.pathPrefix, 'STARTS_WITH'),
            },
          },
          action: tooMany('TooManyStubs', stub.windowSeconds),
          visibilityConfig: visibility('DeveloperApiStubRateLimit'),
        },
        {
          name: 'PerAddressRateLimit',
          priority: 2,
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: props.requestsPerMinute, evaluationWindowSec: WINDOW_SECONDS } },
          action: tooMany('TooManyRequests', WINDOW_SECONDS),
          visibilityConfig: visibility('DeveloperApiPerAddressRateLimit'),
        },
      ],
    });
  }
}

/**
 * The web ACL's own stack in us-east-1, where CloudFront's web ACLs must be, for a main stack in any other Region;
 * the main stack reads its ARN through CDK's cross-Region references (an SSM parameter in us-east-1). `cdk deploy`
 * of the main stack deploys this one first.
 */
export class EdgeFirewallStack extends Stack {
  readonly firewall: PerAddressFirewall;

  constructor(scope: Construct, id: string, props: StackProps & PerAddressFirewallProps) {
    super(scope, id, { ...props, crossRegionReferences: true });
    this.firewall = new PerAddressFirewall(this, 'Firewall', { requestsPerMinute: props.requestsPerMinute });
  }
}
