import { Duration, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { TELEMETRY_NOT_QUEUED } from '#analytics/telemetry-queue';
import { LOADER_ROUTE } from '#api/routes';
import { KEY_CHECK_ATTRIBUTES, KEY_CHECK_RETURN_VALUES } from '#store/key-check-store';
import { UPDATED_ATTRIBUTES } from '#store/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#store/rate-limit-store';
import { ServiceFunction } from './service-function';
import { grantItems } from './table-access';

export interface LoaderCheckProps {
  table: TableV2;
  api: apigateway.RestApi;
  /** Where every check's telemetry goes; the analytics construct ingests it. */
  telemetryQueue: sqs.IQueue;
}

/**
 * The loader's key check (`POST /v1/loader/validate`): public, so no token authorizer and no usage-plan key; its
 * own function, limited in the handler per key and per client address, throttled per method in API Gateway (see
 * the stack's stage) and kept to its reserved concurrency (set by the stack). The function may update key items (one conditional
 * write counts a use) and rate windows, and send to the telemetry queue: nothing else of the table or the account.
 */
export class LoaderCheck extends Construct {
  readonly function: ServiceFunction;
  readonly method: apigateway.Method;
  readonly telemetryNotQueuedAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: LoaderCheckProps) {
    super(scope, id);
    const { table } = props;
    this.function = new ServiceFunction(this, 'Function', {
      entry: 'loader/validate.ts',
      description: `Loader key check ${LOADER_ROUTE.method} ${LOADER_ROUTE.path} (public)`,
      environment: { TABLE_NAME: table.tableName, TELEMETRY_QUEUE_URL: props.telemetryQueue.queueUrl },
    });
    // A check counts a use on its key item, naming only what the count writes and tests: not a key's note, owner
    // fields or index keys' neighbours; and counts itself in its rate windows.
    grantItems(this.function, table, ['dynamodb:UpdateItem'], ['key'], { attributes: KEY_CHECK_ATTRIBUTES, returnValues: KEY_CHECK_RETURN_VALUES });
    grantItems(this.function, table, ['dynamodb:UpdateItem'], ['rateWindow'], { attributes: UPDATED_ATTRIBUTES.rateWindow, returnValues: RATE_WINDOW_RETURN_VALUES });
    props.telemetryQueue.grantSendMessages(this.function);

    this.method = props.api.root.resourceForPath(LOADER_ROUTE.path).addMethod(
      LOADER_ROUTE.method,
      new apigateway.LambdaIntegration(this.function, { allowTestInvoke: false }),
      { authorizationType: apigateway.AuthorizationType.NONE, apiKeyRequired: false },
    );
    Validations.of(this.method).acknowledge(
      {
        id: 'AwsSolutions-APIG4',
        reason: "Public by design (DESIGN.md): a buyer's loader has no API token; the key in the body is the credential, checked by the function, which is limited per key and per address.",
      },
      { id: 'AwsSolutions-COG4', reason: 'Buyers are not Cognito users; the key in the body is the credential.' },
    );

    // A check whose telemetry could not be queued is logged with this message; counted here, alarmed on.
    const notQueued = new logs.MetricFilter(this, 'TelemetryNotQueued', {
      logGroup: this.function.logGroup,
      filterPattern: logs.FilterPattern.stringValue('$.message', '=', TELEMETRY_NOT_QUEUED),
      metricNamespace: 'ScriptDistribution',
      metricName: 'TelemetryNotQueued',
      metricValue: '1',
      defaultValue: 0,
    });
    this.telemetryNotQueuedAlarm = notQueued.metric({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }).createAlarm(this, 'TelemetryNotQueuedAlarm', {
      alarmDescription: 'Key checks whose telemetry could not be queued: the analytics detectors did not see them.',
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
