import { beforeAll, describe, expect, it } from 'vitest';
import { ITERATOR_AGE_ALARM_MS, SERVER_ERROR_RATE_ALARM } from '#lib/constructs/monitoring';
import type { CfnResource } from '#test-support/cdk';
import { synthesizeApiStack, templateLookups } from '#test-support/stack-template';

/** Alarms that reach someone: one topic as every alarm's action, and the dashboard. */

type Built = ReturnType<typeof synthesizeApiStack>;
let built: Built;
let withEmail: Built;

beforeAll(() => {
  built = synthesizeApiStack();
  withEmail = synthesizeApiStack({ alarmEmail: 'ops@example.com' });
}, 300_000);

const { ofType, serviceFunctions, only, authorizerFunctionId } = templateLookups(() => built.resources);
const topicId = () => only('AWS::SNS::Topic')[0];
const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
const dimension = (alarm: Record<string, unknown>, name: string) =>
  (alarm.Dimensions as { Name: string; Value: unknown }[] | undefined)?.find((d) => d.Name === name)?.Value;

/** The alarms on a metric (namespace and name) whose `name` dimension is `value`. */
const alarmsOn = (namespace: string, metricName: string, name?: string, value?: unknown) =>
  alarms().filter(
    (alarm) =>
      alarm.Namespace === namespace &&
      alarm.MetricName === metricName &&
      (name === undefined || JSON.stringify(dimension(alarm, name)) === JSON.stringify(value)),
  );

describe('the alarm topic', () => {
  it('is one SNS topic, and every alarm of the stack notifies it going into ALARM and back to OK', () => {
    const all = alarms();
    // Errors and throttles of each function but the authorizer (throttles only), and the stack's own alarms (the
    // loader routes' 429 and 5xx rates, the check stream's failures and age among them).
    expect(all.length).toBe(76);
    for (const alarm of all) {
      expect(alarm.AlarmActions, String(alarm.AlarmDescription)).toEqual([{ Ref: topicId() }]);
      expect(alarm.OKActions, String(alarm.AlarmDescription)).toEqual([{ Ref: topicId() }]);
    }
  });

  it('lets CloudWatch alarms of this account publish to it, and only over TLS', () => {
    const [, policy] = only('AWS::SNS::TopicPolicy');
    const statements = (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Condition: expect.objectContaining({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
      }),
    );
    expect(statements).toContainEqual(expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
  });

  it('has no subscription by default, and an email subscription with -c alarmEmail', () => {
    expect(ofType('AWS::SNS::Subscription')).toEqual([]);
    const subscriptions = Object.values(withEmail.resources).filter((resource) => resource.Type === 'AWS::SNS::Subscription');
    expect(subscriptions.map((subscription) => subscription.Properties)).toEqual([expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@example.com' })]);
  });

  it('refuses an alarm email that is not an address', () => {
    expect(() => synthesizeApiStack({ alarmEmail: 'ops' })).toThrow('-c alarmEmail=ops: give an email address');
  });

  it('is an output, for subscribing other endpoints', () => {
    expect((built.template.toJSON().Outputs as Record<string, { Value: unknown }>).AlarmTopicArn?.Value).toEqual({ Ref: topicId() });
  });
});

describe('the alarms', () => {
  const functions = () => serviceFunctions().map(([id]) => id);

  it("alarms on the API's 5xx rate: above 1% of answers for two 5-minute periods", () => {
    const [alarm] = alarmsOn('AWS/ApiGateway', '5XXError');
    expect(alarm).toMatchObject({
      Statistic: 'Average',
      Period: 300,
      Threshold: SERVER_ERROR_RATE_ALARM,
      EvaluationPeriods: 2,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(dimension(alarm ?? {}, 'Stage')).toBeDefined();
  });

  it("alarms on the loader routes' 5xx rate the same way, on their HTTP API's stage", () => {
    const [httpApiId] = ofType('AWS::ApiGatewayV2::Api')[0] ?? [];
    const [alarm] = alarmsOn('AWS/ApiGateway', '5xx', 'ApiId', { Ref: httpApiId });
    expect(alarm).toMatchObject({
      Statistic: 'Average',
      Period: 300,
      Threshold: SERVER_ERROR_RATE_ALARM,
      EvaluationPeriods: 2,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it("alarms on every function's errors, but the authorizer's (each refused token is one), and on every function's throttles", () => {
    for (const id of functions()) {
      expect(alarmsOn('AWS/Lambda', 'Throttles', 'FunctionName', { Ref: id }), id).toHaveLength(1);
      expect(alarmsOn('AWS/Lambda', 'Errors', 'FunctionName', { Ref: id }), id).toHaveLength(id === authorizerFunctionId() ? 0 : 1);
    }
  });

  it("alarms on the authorizer's failures, counted from the access log where API Gateway reports them", () => {
    const filters = ofType('AWS::Logs::MetricFilter').filter(([, filter]) =>
      JSON.stringify(filter.Properties.MetricTransformations).includes('AuthorizerFailures'),
    );
    expect(filters).toHaveLength(1);
    const [, filter] = filters[0] as [string, CfnResource];
    const [stageLogGroup] =
      ofType('AWS::Logs::LogGroup').find(([id]) => JSON.stringify(only('AWS::ApiGateway::Stage')[1].Properties.AccessLogSetting).includes(`"${id}"`)) ?? [];
    expect(filter.Properties.LogGroupName).toEqual({ Ref: stageLogGroup });
    expect(filter.Properties.FilterPattern).toBe('{ ($.errorType = "AUTHORIZER_FAILURE") || ($.errorType = "AUTHORIZER_CONFIGURATION_ERROR") }');
    expect(alarmsOn('ScriptDistribution', 'AuthorizerFailures')).toHaveLength(1);
  });

  it("alarms on the depth of every dead-letter queue: webhook deliveries, fan-out failures, telemetry, the check stream's failures", () => {
    const depthAlarms = alarmsOn('AWS/SQS', 'ApproximateNumberOfMessagesVisible');
    const queues = depthAlarms.map((alarm) => JSON.stringify(dimension(alarm, 'QueueName')));
    expect(queues).toHaveLength(4);
    for (const queue of ['WebhooksDeadLetterQueue', 'WebhooksFanoutFailureQueue', 'AnalyticsTelemetryDeadLetterQueue', 'AnalyticsCheckStreamFailureQueue'])
      expect(
        queues.some((name) => name.includes(queue)),
        queue,
      ).toBe(true);
  });

  it("alarms when the fan-out's stream iterator is more than 5 minutes behind", () => {
    const fanout = functions().filter((id) => id.startsWith('WebhooksFanoutFunction'));
    expect(alarmsOn('AWS/Lambda', 'IteratorAge', 'FunctionName', { Ref: fanout[0] })).toEqual([
      expect.objectContaining({ Statistic: 'Maximum', Threshold: ITERATOR_AGE_ALARM_MS }),
    ]);
  });

  it('alarms when EventBridge fails to run the daily detector or the hourly alert digest', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules.map(([, rule]) => rule.Properties.ScheduleExpression).sort()).toEqual(['cron(2 * * * ? *)', 'cron(5 0 * * ? *)']);
    for (const [ruleId] of rules) expect(alarmsOn('AWS/Events', 'FailedInvocations', 'RuleName', { Ref: ruleId }), ruleId).toHaveLength(1);
  });

  it('keeps the alarm on key checks whose telemetry could not be queued', () => {
    expect(alarmsOn('ScriptDistribution', 'TelemetryNotQueued')).toHaveLength(1);
  });
});

describe('the dashboard', () => {
  interface Widget {
    type: string;
    properties: { title: string; metrics?: unknown[][]; alarms?: string[] };
  }

  /** The dashboard's widgets, with each CloudFormation reference in the body written as `<Ref:logical id>`. */
  function widgets(): Widget[] {
    const [, dashboard] = only('AWS::CloudWatch::Dashboard');
    const parts = (dashboard.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const body = parts.map((part) => (typeof part === 'string' ? part : `<Ref:${JSON.stringify(part).replace(/[{}"]/g, '')}>`)).join('');
    return (JSON.parse(body) as { widgets: Widget[] }).widgets;
  }
  const widget = (title: string) => widgets().find((candidate) => candidate.properties.title === title);
  const functionRef = (prefix: string) => `<Ref:Ref:${ofType('AWS::Lambda::Function').find(([id]) => id.startsWith(prefix))?.[0]}>`;

  it("shows the API's requests, latency and errors, bulk revoke duration, webhook deliveries, loader checks and every alarm", () => {
    expect(widgets().map((candidate) => candidate.properties.title)).toEqual([
      'API requests',
      'API latency',
      'API errors',
      'Bulk revoke duration',
      'Webhook deliveries',
      'Loader checks',
      'Alarms',
    ]);
  });

  it("graphs the bulk revoke function's duration, the delivery function's outcomes and the delivery dead letters", () => {
    expect(widget('Bulk revoke duration')?.properties.metrics?.map((metric) => metric.slice(0, 4))).toEqual(
      Array(3).fill(['AWS/Lambda', 'Duration', 'FunctionName', functionRef('RevokeBulkFunction')]),
    );
    const deliveries = widget('Webhook deliveries')?.properties.metrics?.map((metric) => metric.slice(1, 4).join(' '));
    expect(deliveries).toEqual([
      `Invocations FunctionName ${functionRef('WebhooksDeliveryFunction')}`,
      `Errors FunctionName ${functionRef('WebhooksDeliveryFunction')}`,
      expect.stringMatching(/^ApproximateNumberOfMessagesVisible QueueName <Ref:Fn::GetAtt:\[WebhooksQueue/),
      expect.stringMatching(/^ApproximateNumberOfMessagesVisible QueueName <Ref:Fn::GetAtt:\[WebhooksDeadLetterQueue/),
    ]);
  });

  it('lists every alarm of the stack', () => {
    expect(widget('Alarms')?.properties.alarms).toHaveLength(alarms().length);
  });
});
