import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as events from 'aws-cdk-lib/aws-events';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface MonitoringProps {
  stage: apigateway.Stage;
  /** The stage's access log group: authorizer failures are counted from it. */
  accessLogs: logs.ILogGroup;
  /** Every function of the stack, each alarmed on its errors and throttles. */
  functions: readonly lambda.Function[];
  /** Its errors include every refused token, so its failures are read from the access log instead. */
  authorizerFunction: lambda.IFunction;
  fanoutFunction: lambda.IFunction;
  revokeBulkFunction: lambda.IFunction;
  deliveryFunction: lambda.IFunction;
  deliveryQueue: sqs.IQueue;
  deliveryDeadLetterQueue: sqs.IQueue;
  loaderCheckFunction: lambda.IFunction;
  telemetryNotQueued: cloudwatch.IMetric;
  dailySchedule: events.IRule;
  alertDigestSchedule: events.IRule;
  /** Subscribed to the alarm topic by email (the address must confirm the subscription). */
  alarmEmail?: string;
}

const FIVE_MINUTES = Duration.minutes(5);
/** The fan-out is this far behind the table's writes before it alarms; records an hour old are given up on. */
export const ITERATOR_AGE_ALARM_MS = 5 * 60 * 1000;
/** Share of the API's answers that may be 5xx over 5 minutes, twice running, before it alarms. */
export const SERVER_ERROR_RATE_ALARM = 0.01;

/**
 * The stack's operations: one SNS topic that every alarm of the stack notifies (going into ALARM and back to OK),
 * the alarms of the API and of every function, and a CloudWatch dashboard. Create it last: it attaches the topic to
 * every alarm the stack holds when it is built.
 */
export class Monitoring extends Construct {
  readonly topic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: 'Script Distribution Developer API alarms', enforceSSL: true });
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` },
        },
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    const authorizerFailures = new logs.MetricFilter(this, 'AuthorizerFailures', {
      logGroup: props.accessLogs,
      // A refused token is UNAUTHORIZED; these are the authorizer failing (error, timeout, throttle, bad answer).
      filterPattern: logs.FilterPattern.any(
        logs.FilterPattern.stringValue('$.errorType', '=', 'AUTHORIZER_FAILURE'),
        logs.FilterPattern.stringValue('$.errorType', '=', 'AUTHORIZER_CONFIGURATION_ERROR'),
      ),
      metricNamespace: 'ScriptDistribution',
      metricName: 'AuthorizerFailures',
      metricValue: '1',
      defaultValue: 0,
    }).metric({ period: FIVE_MINUTES, statistic: cloudwatch.Stats.SUM });

    const serverErrorRate = props.stage.metricServerError({ period: FIVE_MINUTES, statistic: cloudwatch.Stats.AVERAGE });
    serverErrorRate.createAlarm(this, 'ApiServerErrorRate', {
      alarmDescription: `More than ${SERVER_ERROR_RATE_ALARM * 100}% of the API's answers were 5xx for 10 minutes.`,
      threshold: SERVER_ERROR_RATE_ALARM,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    anyAlarm(
      this,
      'AuthorizerFailuresAlarm',
      authorizerFailures,
      'The token authorizer failed (error, timeout or throttle): callers without a cached answer got 500.',
    );
    for (const fn of props.functions) {
      const name = nameOf(fn);
      if (fn !== props.authorizerFunction)
        anyAlarm(
          this,
          `${name}Errors`,
          fn.metricErrors({ period: FIVE_MINUTES }),
          `${name}: invocations failed (an unhandled error, a timeout or running out of memory).`,
        );
      anyAlarm(this, `${name}Throttles`, fn.metricThrottles({ period: FIVE_MINUTES }), `${name}: invocations were throttled at its reserved concurrency.`);
    }
    props.fanoutFunction.metric('IteratorAge', { period: FIVE_MINUTES, statistic: cloudwatch.Stats.MAXIMUM }).createAlarm(this, 'FanoutIteratorAge', {
      alarmDescription: 'Webhook fan-out is more than 5 minutes behind the table; stream records an hour old go to the fan-out failure queue.',
      threshold: ITERATOR_AGE_ALARM_MS,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const failedRuns = (rule: events.IRule) =>
      new cloudwatch.Metric({
        namespace: 'AWS/Events',
        metricName: 'FailedInvocations',
        dimensionsMap: { RuleName: rule.ruleName },
        period: FIVE_MINUTES,
        statistic: cloudwatch.Stats.SUM,
      });
    anyAlarm(
      this,
      'DailyScheduleFailures',
      failedRuns(props.dailySchedule),
      'EventBridge could not run the daily detector (execution_drop is not being judged).',
    );
    anyAlarm(
      this,
      'AlertDigestScheduleFailures',
      failedRuns(props.alertDigestSchedule),
      'EventBridge could not run the hourly alert digest (owners are not told of alerts held back).',
    );

    const alarms = stack.node.findAll().filter((construct): construct is cloudwatch.Alarm => construct instanceof cloudwatch.Alarm);
    const notify = new SnsAction(this.topic);
    for (const alarm of alarms) {
      alarm.addAlarmAction(notify);
      alarm.addOkAction(notify);
    }

    this.dashboard = this.buildDashboard(props, authorizerFailures, alarms);
  }

  private buildDashboard(props: MonitoringProps, authorizerFailures: cloudwatch.IMetric, alarms: cloudwatch.Alarm[]): cloudwatch.Dashboard {
    const { stage } = props;
    const minute = { period: Duration.minutes(1) };
    const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
      new cloudwatch.GraphWidget({ title, left, right, width: 12 });
    const sum = (metric: cloudwatch.Metric, label: string) => metric.with({ ...minute, statistic: cloudwatch.Stats.SUM, label });
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: `${Stack.of(this).stackName}-operations` });
    dashboard.addWidgets(
      graph('API requests', [sum(stage.metricCount(), 'requests')]),
      graph('API latency', [
        stage.metricLatency({ ...minute, statistic: cloudwatch.Stats.p(50), label: 'latency p50' }),
        stage.metricLatency({ ...minute, statistic: cloudwatch.Stats.p(99), label: 'latency p99' }),
        stage.metricIntegrationLatency({ ...minute, statistic: cloudwatch.Stats.p(99), label: 'integration p99' }),
      ]),
      graph('API errors', [sum(stage.metricClientError(), '4xx'), sum(stage.metricServerError(), '5xx'), authorizerFailures]),
      graph(
        'Bulk revoke duration',
        [cloudwatch.Stats.p(50), cloudwatch.Stats.p(99), cloudwatch.Stats.MAXIMUM].map((statistic) =>
          props.revokeBulkFunction.metricDuration({ ...minute, statistic, label: `duration ${statistic}` }),
        ),
      ),
      graph(
        'Webhook deliveries',
        [sum(props.deliveryFunction.metricInvocations(), 'delivery invocations'), sum(props.deliveryFunction.metricErrors(), 'delivery errors')],
        [
          props.deliveryQueue.metricApproximateNumberOfMessagesVisible({ ...minute, statistic: cloudwatch.Stats.MAXIMUM, label: 'queued' }),
          props.deliveryDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ ...minute, statistic: cloudwatch.Stats.MAXIMUM, label: 'dead letters' }),
        ],
      ),
      graph('Loader checks', [
        sum(props.loaderCheckFunction.metricInvocations(), 'checks'),
        sum(props.loaderCheckFunction.metricErrors(), 'errors'),
        sum(props.loaderCheckFunction.metricThrottles(), 'throttles'),
        props.telemetryNotQueued,
      ]),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms, width: 24 }),
    );
    return dashboard;
  }
}

/** `LoaderCheckFunction` for `<stack>/LoaderCheck/Function`: a function's place in the stack, as a name. */
const nameOf = (construct: Construct) => construct.node.path.split('/').slice(1).join('');

/** An alarm as soon as a count is above zero in a period. */
function anyAlarm(scope: Construct, id: string, metric: cloudwatch.IMetric, description: string): cloudwatch.Alarm {
  return new cloudwatch.Alarm(scope, id, {
    metric,
    alarmDescription: description,
    threshold: 0,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
}
