import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { SECURITY_HEADERS } from '#http/responses';

export interface PerAddressFirewallProps {
  /** The stage the web ACL guards. */
  stage: apigateway.Stage;
  /** Requests a minute one IP address may send, over the owner API's routes, before the rest of the minute is refused. */
  requestsPerMinute: number;
}

/** WAF counts a rate-based rule's requests over this window (60, 120, 300 or 600 s): the API's own limits are per minute. */
const WINDOW_SECONDS = 60;

/**
 * An AWS WAF regional web ACL on the owner API's REST stage (the loader routes' HTTP API cannot carry one) with one
 * rate-based rule per client IP address: a flood from one
 * address is refused at the edge, before the authorizer or any function runs. The refusal is the API's own 429
 * (`{"error"}` JSON, `Retry-After`, the security headers); WAF's custom response takes precedence over API
 * Gateway's gateway responses. Costs a web ACL and a rule a month plus a charge per request (docs/operations.md).
 */
export class PerAddressFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: PerAddressFirewallProps) {
    super(scope, id);
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true });
    // WAF sets Content-Type from the body; it may not be given as a header.
    const headers = {
      ...Object.fromEntries(Object.entries(SECURITY_HEADERS).filter(([name]) => name !== 'Content-Type')),
      'Retry-After': String(WINDOW_SECONDS),
    };
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      description: `Developer API: at most ${props.requestsPerMinute} requests a minute per IP address`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('DeveloperApi'),
      customResponseBodies: {
        TooManyRequests: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({ error: `Too many requests from this address: at most ${props.requestsPerMinute} per minute` }),
        },
      },
      rules: [
        {
          name: 'PerAddressRateLimit',
          priority: 0,
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: props.requestsPerMinute, evaluationWindowSec: WINDOW_SECONDS } },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: 'TooManyRequests',
                responseHeaders: Object.entries(headers).map(([name, value]) => ({ name, value })),
              },
            },
          },
          visibilityConfig: visibility('DeveloperApiPerAddressRateLimit'),
        },
      ],
    });
    new wafv2.CfnWebACLAssociation(this, 'Association', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });
  }
}
