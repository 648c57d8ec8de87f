import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** Every queue of the stack: TLS-only access and SQS-managed encryption at rest. */
export function secureQueue(scope: Construct, id: string, props: sqs.QueueProps): sqs.Queue {
  return new sqs.Queue(scope, id, { ...props, enforceSSL: true, encryption: sqs.QueueEncryption.SQS_MANAGED });
}

/** A dead-letter queue: what lands in it is kept 14 days and raises an alarm (see depthAlarm). */
export function deadLetterQueue(scope: Construct, id: string): sqs.Queue {
  const queue = secureQueue(scope, id, { retentionPeriod: Duration.days(14) });
  const reason = 'This queue is itself a dead-letter destination; what lands in it is kept 14 days and raises an alarm.';
  Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason }, { id: 'Serverless-SQSRedrivePolicy', reason });
  return queue;
}

/** An alarm as soon as a queue holds anything: for dead-letter queues, where every message is a failure. */
export function depthAlarm(scope: Construct, id: string, queue: sqs.IQueue, description: string): cloudwatch.Alarm {
  return queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: cloudwatch.Stats.MAXIMUM }).createAlarm(scope, id, {
    alarmDescription: description,
    threshold: 0,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
}

/** cdk-nag Serverless-LambdaEventSourceMappingDestination on a function an SQS queue feeds. */
export function acknowledgeQueueFailures(fn: Construct): void {
  Validations.of(fn).acknowledge({
    id: 'Serverless-LambdaEventSourceMappingDestination',
    reason:
      "Fed by an SQS queue, which keeps a failed message and moves it to the queue's DLQ after its receive count; Lambda's on-failure destination is for stream and Kafka sources.",
  });
}
