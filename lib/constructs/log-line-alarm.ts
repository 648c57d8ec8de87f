import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/**
 * An alarm on a log line: a function logs `message` when something needs a person's look (a check's telemetry not
 * queued, an audit entry left unsettled, a stream record unreadable); a metric filter named `id` counts those
 * lines, and the alarm `${id}Alarm` fires on the first one in five minutes.
 */
export function logLineAlarm(scope: Construct, id: string, props: { logGroup: logs.ILogGroup; message: string; description: string }): cloudwatch.Alarm {
  return new logs.MetricFilter(scope, id, {
    logGroup: props.logGroup,
    filterPattern: logs.FilterPattern.stringValue('$.message', '=', props.message),
    metricNamespace: 'ScriptDistribution',
    metricName: id,
    metricValue: '1',
    defaultValue: 0,
  })
    .metric({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM })
    .createAlarm(scope, `${id}Alarm`, {
      alarmDescription: props.description,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
}
