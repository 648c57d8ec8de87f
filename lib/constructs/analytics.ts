import { Duration } from 'aws-cdk-lib';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { ServiceFunction } from './service-function';
import { grantItems } from './table-access';

export interface AnalyticsProps {
  table: TableV2;
}

/** 00:05 UTC daily: a few minutes' margin after midnight for the day's last telemetry to land. */
export const DAILY_DETECTOR_CRON = { minute: '5', hour: '0' } as const;

/**
 * Telemetry to analytics events: the ingest Lambda (invoked directly by the loader side with
 * `{ "records": [...] }`, no HTTP; grant callers `ingestFunction.grantInvoke`) and the daily detector on an
 * EventBridge schedule. Each function may use only the DynamoDB actions its code sends, on the table only (no
 * index), and only on items whose partition key begins as the telemetry store's do:
 * - ingest: `UpdateItem` (counters, last-seen, hashes, validation windows), `BatchGetItem` (last-seen, key use
 *   caps), `Query` (a script's hashes) and `PutItem` (event items, conditional);
 * - daily detector: `Query` of the daily counters and `PutItem` of execution_drop events.
 */
export class Analytics extends Construct {
  readonly ingestFunction: ServiceFunction;
  readonly dailyDetectorFunction: ServiceFunction;
  readonly dailySchedule: events.Rule;

  constructor(scope: Construct, id: string, { table }: AnalyticsProps) {
    super(scope, id);

    this.ingestFunction = new ServiceFunction(this, 'IngestFunction', {
      entry: 'analytics/ingest-handler.ts',
      description: 'Telemetry ingest: executions and key validations -> aggregates and analytics events',
      // A batch of up to 10,000 records is a few hundred requests at bounded parallelism.
      timeout: Duration.seconds(60),
      environment: { TABLE_NAME: table.tableName },
    });
    grantItems(this.ingestFunction, table, ['dynamodb:UpdateItem'], ['dailyExecutions', 'project', 'key']);
    grantItems(this.ingestFunction, table, ['dynamodb:BatchGetItem'], ['project', 'key']);
    grantItems(this.ingestFunction, table, ['dynamodb:Query', 'dynamodb:PutItem'], ['project']);

    this.dailyDetectorFunction = new ServiceFunction(this, 'DailyDetectorFunction', {
      entry: 'analytics/daily-handler.ts',
      description: 'Daily detector: execution_drop for the UTC day that just ended',
      timeout: Duration.minutes(2),
      environment: { TABLE_NAME: table.tableName },
    });
    grantItems(this.dailyDetectorFunction, table, ['dynamodb:Query'], ['dailyExecutions']);
    grantItems(this.dailyDetectorFunction, table, ['dynamodb:PutItem'], ['project']);

    this.dailySchedule = new events.Rule(this, 'DailyDetectorSchedule', {
      description: 'Runs the analytics daily detector shortly after 00:00 UTC',
      schedule: events.Schedule.cron(DAILY_DETECTOR_CRON),
      // A rerun is harmless (each project fires once per day), so retries may be generous.
      targets: [new targets.LambdaFunction(this.dailyDetectorFunction, { retryAttempts: 4, maxEventAge: Duration.hours(6) })],
    });
  }
}
