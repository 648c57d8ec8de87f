import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CHECK_STREAM_FILTER_PATTERN } from '#adapters/check-stream';
import { CHECK_RECORD_UNREADABLE, CHECK_STREAM, INGEST_TIMEOUT_SECONDS, TELEMETRY_QUEUE } from '#adapters/telemetry-queue';
import { DIGEST_DELAY_SECONDS } from '#domain/analytics/alert-budget';
import { TELEMETRY_MAX_CONCURRENCY } from '#lib/capacity';
import { logLineAlarm } from './log-line-alarm';
import { acknowledgeQueueFailures, deadLetterQueue, depthAlarm, secureQueue } from './queues';
import { ServiceFunction, type ServiceFunctionProps } from './service-function';
import { grantItems } from './table-access';

export interface AnalyticsProps {
  table: TableV2;
}

/** 00:05 UTC daily: a few minutes' margin after midnight for the day's last telemetry to land. */
const DAILY_DETECTOR_CRON = { minute: '5', hour: '0' } as const;
/** Every hour at :02 (DIGEST_DELAY_SECONDS): the digest of the hour that just ended. */
const ALERT_DIGEST_CRON = { minute: String(DIGEST_DELAY_SECONDS / 60) } as const;

/**
 * Telemetry to analytics events: the telemetry queue the loader check writes to and the function that ingests it in
 * batches, the ingest Lambda the loader side may also invoke directly with `{ "records": [...] }` (no HTTP; grant
 * callers `ingestFunction.grantInvoke`), and the daily detector on an EventBridge schedule. Each function may use
 * only the DynamoDB actions its code sends, on the table only (no index), and only on items whose partition key
 * begins as the telemetry store's do. Telemetry has partitions of its own (layout.ts), so no analytics function can
 * write a project or a key record:
 * - ingest: `UpdateItem` of daily counters (EXECUTIONS#), executors, hashes and script tallies (TELEMETRY#) and
 *   validation windows (VALIDATIONS#); `PutItem` of event items (EVENTS#); `BatchGetItem` of executors' last-seen
 *   times and of fired events; `GetItem`/`BatchGetItem` of project and key records (PROJECT#, KEY#) to refuse records
 *   of unknown projects and keys and to read a key's use cap; `UpdateItem` of the hourly alert counters (ALERTS#);
 *   one `TransactWriteItems` per project and day of the stats counters (UpdateItem of STATS#, PutItem of the
 *   delivery units' marks, STATS_UNIT#) after a `BatchGetItem` of the counters that keep names.
 *   No Query, no write outside those partitions;
 * - daily detector: `Query` of the daily counters and `PutItem` of execution_drop event items;
 * - alert digest: `Query` of the hour's alert counters and `PutItem` of digest event items.
 */
export class Analytics extends Construct {
  readonly ingestFunction: ServiceFunction;
  readonly telemetryQueue: sqs.Queue;
  readonly telemetryDeadLetterQueue: sqs.Queue;
  readonly queueIngestFunction: ServiceFunction;
  readonly streamIngestFunction: ServiceFunction;
  readonly checkStreamFailureQueue: sqs.Queue;
  readonly dailyDetectorFunction: ServiceFunction;
  readonly dailySchedule: events.Rule;
  readonly alertDigestFunction: ServiceFunction;
  readonly alertDigestSchedule: events.Rule;
  readonly alarms: cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, { table }: AnalyticsProps) {
    super(scope, id);

    this.ingestFunction = this.ingest(
      'IngestFunction',
      'functions/ingest.ts',
      'Telemetry ingest: executions and key validations -> aggregates and analytics events',
      table,
    );

    this.telemetryDeadLetterQueue = deadLetterQueue(this, 'TelemetryDeadLetterQueue');
    this.telemetryQueue = secureQueue(this, 'TelemetryQueue', {
      visibilityTimeout: Duration.seconds(TELEMETRY_QUEUE.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.telemetryDeadLetterQueue, maxReceiveCount: TELEMETRY_QUEUE.maxReceiveCount },
    });
    this.queueIngestFunction = this.ingest(
      'QueueIngestFunction',
      'functions/ingest-queue.ts',
      "Telemetry ingest of the loader check's queue, in batches",
      table,
      'event source',
    );
    acknowledgeQueueFailures(this.queueIngestFunction);
    this.queueIngestFunction.addEventSource(
      new SqsEventSource(this.telemetryQueue, {
        batchSize: TELEMETRY_QUEUE.batchSize,
        maxBatchingWindow: Duration.seconds(TELEMETRY_QUEUE.maxBatchingWindowSeconds),
        maxConcurrency: TELEMETRY_MAX_CONCURRENCY,
      }),
    );

    // Counted checks' telemetry rides on the key item's write; this consumer reads it off the table's stream (stream
    // reads by Lambda cost nothing), filtered to key items' MODIFY records so the rest of the stream never invokes it.
    this.streamIngestFunction = this.ingest(
      'StreamIngestFunction',
      'functions/ingest-stream.ts',
      "Telemetry ingest of counted checks from the table's stream, in batches",
      table,
      'event source',
    );
    this.checkStreamFailureQueue = deadLetterQueue(this, 'CheckStreamFailureQueue');
    this.streamIngestFunction.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: CHECK_STREAM.batchSize,
        maxBatchingWindow: Duration.seconds(CHECK_STREAM.maxBatchingWindowSeconds),
        filters: [lambda.FilterCriteria.filter(CHECK_STREAM_FILTER_PATTERN)],
        // Retried whole, not halved: the batch is the stats' delivery unit (ingest-stream.ts), and a half of it would
        // count again what the whole had counted. Ingest refuses a bad record by itself rather than failing the batch,
        // so a batch fails only on a store error, which a retry of the whole batch heals as well as a half.
        bisectBatchOnError: false,
        retryAttempts: CHECK_STREAM.retryAttempts,
        maxRecordAge: Duration.seconds(CHECK_STREAM.maxRecordAgeSeconds),
        onFailure: new SqsDlq(this.checkStreamFailureQueue),
      }),
    );

    this.dailyDetectorFunction = new ServiceFunction(this, 'DailyDetectorFunction', {
      invokedBy: 'schedule',
      entry: 'functions/daily-detectors.ts',
      description: 'Daily detector: execution_drop for the UTC day that just ended',
      timeout: Duration.minutes(2),
      environment: { TABLE_NAME: table.tableName },
    });
    grantItems(this.dailyDetectorFunction, table, ['dynamodb:Query'], ['dailyExecutions']);
    grantItems(this.dailyDetectorFunction, table, ['dynamodb:PutItem'], ['events']);

    this.dailySchedule = new events.Rule(this, 'DailyDetectorSchedule', {
      description: 'Runs the analytics daily detector shortly after 00:00 UTC',
      schedule: events.Schedule.cron(DAILY_DETECTOR_CRON),
      // A rerun is harmless (each project fires once per day), so retries may be generous.
      targets: [new targets.LambdaFunction(this.dailyDetectorFunction, { retryAttempts: 4, maxEventAge: Duration.hours(6) })],
    });

    this.alertDigestFunction = new ServiceFunction(this, 'AlertDigestFunction', {
      invokedBy: 'schedule',
      entry: 'functions/alert-digest.ts',
      description: 'Hourly alert digest: one event per project and kind whose alerts of the hour went past the budget',
      timeout: Duration.minutes(2),
      environment: { TABLE_NAME: table.tableName },
    });
    grantItems(this.alertDigestFunction, table, ['dynamodb:Query'], ['alerts']);
    grantItems(this.alertDigestFunction, table, ['dynamodb:PutItem'], ['events']);

    this.alertDigestSchedule = new events.Rule(this, 'AlertDigestSchedule', {
      description: 'Posts the digest of alerts held back in the hour that just ended',
      schedule: events.Schedule.cron(ALERT_DIGEST_CRON),
      // A rerun is harmless (each digest fires once per hour), so retries may be generous.
      targets: [new targets.LambdaFunction(this.alertDigestFunction, { retryAttempts: 4, maxEventAge: Duration.hours(6) })],
    });

    for (const schedule of [this.dailySchedule, this.alertDigestSchedule]) {
      Validations.of(schedule).acknowledge({
        id: 'Serverless-EventBusDLQ',
        reason:
          'A scheduled event carries only its time: EventBridge retries the target 4 times within 6 hours, and an alarm watches the failed invocations (a held event would replay nothing).',
      });
    }

    this.alarms = [
      depthAlarm(this, 'TelemetryDeadLetterAlarm', this.telemetryDeadLetterQueue, 'Telemetry batches the ingest gave up on are waiting in the telemetry DLQ.'),
      depthAlarm(
        this,
        'CheckStreamFailureAlarm',
        this.checkStreamFailureQueue,
        "Stream batches of counted checks' telemetry the ingest gave up on (their records are not in the aggregates).",
      ),
      // After the first deploy of stream telemetry, the stream's last 24 hours hold counted checks from before it
      // (no lastCheck; their telemetry was queued then): this fires once for them.
      logLineAlarm(this, 'CheckRecordUnreadable', {
        logGroup: this.streamIngestFunction.logGroup,
        message: CHECK_RECORD_UNREADABLE,
        description: "Counted checks' stream records ingest could not read: their telemetry did not reach the detectors.",
      }),
      this.streamIngestFunction
        .metric('IteratorAge', { period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM })
        .createAlarm(this, 'CheckStreamIteratorAge', {
          alarmDescription: "Ingest of counted checks' telemetry is more than 15 minutes behind the table.",
          threshold: 15 * 60 * 1000,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
    ];
  }

  /** An ingest function: the telemetry store's reads and writes, on its partitions only. */
  private ingest(
    id: string,
    entry: string,
    description: string,
    table: TableV2,
    invokedBy: ServiceFunctionProps['invokedBy'] = 'synchronous',
  ): ServiceFunction {
    const fn = new ServiceFunction(this, id, {
      invokedBy,
      entry,
      description,
      timeout: Duration.seconds(INGEST_TIMEOUT_SECONDS),
      environment: { TABLE_NAME: table.tableName },
    });
    // The stats counters (STATS#) move in one TransactWriteItems with their units' marks (STATS_UNIT#), which IAM
    // authorizes as the UpdateItem and PutItem of each item.
    grantItems(fn, table, ['dynamodb:UpdateItem'], ['dailyExecutions', 'telemetry', 'validations', 'alerts', 'stats']);
    grantItems(fn, table, ['dynamodb:PutItem'], ['events', 'statsUnits']);
    grantItems(fn, table, ['dynamodb:BatchGetItem'], ['telemetry', 'events', 'stats']);
    // Read only: does the project exist, is the key the project's, what is its use cap.
    grantItems(fn, table, ['dynamodb:GetItem', 'dynamodb:BatchGetItem'], ['project', 'key']);
    return fn;
  }
}
