import { type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { scriptObjectKey } from '#adapters/layout';
import { TELEMETRY_NOT_QUEUED } from '#adapters/telemetry-queue';
import { LOADER_FUNCTION_ROUTES } from '#http/public-routes';
import { mergeGrants } from '#http/table-grants';
import { logLineAlarm } from './log-line-alarm';
import { ServiceFunction } from './service-function';
import { grantTable } from './table-access';

export interface LoaderCheckProps {
  table: TableV2;
  /** Where every check's telemetry goes; the analytics construct ingests it. */
  telemetryQueue: sqs.IQueue;
  /** The version scripts `/v1/loader/script` serves. */
  scripts: s3.IBucket;
}

/**
 * The loader's routes (`POST /v1/loader/validate` and `POST /v1/loader/script`, the same key check): public, so no
 * token authorizer and no usage-plan key; one function of their own, limited in the handler per key and per client
 * address, behind their own HTTP API (LoaderApi) whose stage throttles each route, and kept to its reserved
 * concurrency (set by the stack). The function may update key items (one conditional write counts a use) and rate
 * windows, read key items (a fetch with nothing to serve judges without counting) and project items (the current
 * version pointer and the version it names), read script objects, and send to the telemetry queue: nothing else.
 */
export class LoaderCheck extends Construct {
  readonly function: ServiceFunction;
  readonly telemetryNotQueuedAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: LoaderCheckProps) {
    super(scope, id);
    const { table } = props;
    this.function = new ServiceFunction(this, 'Function', {
      entry: 'functions/loader.ts',
      description: `Loader key check and script delivery ${LOADER_FUNCTION_ROUTES.map((route) => `${route.method} ${route.path}`).join(', ')} (public)`,
      environment: { TABLE_NAME: table.tableName, TELEMETRY_QUEUE_URL: props.telemetryQueue.queueUrl, SCRIPT_BUCKET: props.scripts.bucketName },
      // X-Ray's default sampling traces about 5% of a busy function's requests at $5 a million traces: $0.25 a
      // million checks, a tenth of the check's own price (docs/cost.md). The check's logs and alarms say what failed.
      tracing: lambda.Tracing.DISABLED,
    });
    // What its routes need of the table (each route's `tableAccess`): a check counts a use on its key item, naming
    // only what the count writes and tests, and counts itself in its rate windows; a script fetch reads the
    // current-version pointer and version items, and a key when there is nothing to serve; the stub reads its project.
    grantTable(this.function, table, mergeGrants(LOADER_FUNCTION_ROUTES.flatMap((route) => route.tableAccess)));
    props.telemetryQueue.grantSendMessages(this.function);
    // GetObject of script objects only: not the bucket's listing, nor any other object it may hold.
    const scriptObjects = props.scripts.arnForObjects(scriptObjectKey({ projectId: '*', versionId: '*' }));
    this.function.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [scriptObjects] }));
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason: "Untraced on purpose: X-Ray's sampling would cost a tenth of the check's own price (docs/cost.md); its logs and alarms say what failed.",
    });
    Validations.of(this.function).acknowledge({
      // cdk-nag names the resource by the bucket's logical id, which the stack resolves to a plain string.
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).resolve(Stack.of(this).getLogicalId(props.scripts.node.defaultChild as CfnElement)) as string}.Arn>/${scriptObjectKey({ projectId: '*', versionId: '*' })}]`,
      reason: 'The function serves the current version of any project, so it reads any script object, and only script objects (GetObject, no listing).',
    });

    // A check whose telemetry could not be queued is logged with this message; counted here, alarmed on.
    this.telemetryNotQueuedAlarm = logLineAlarm(this, 'TelemetryNotQueued', {
      logGroup: this.function.logGroup,
      message: TELEMETRY_NOT_QUEUED,
      description: 'Key checks whose telemetry could not be queued: the analytics detectors did not see them.',
    });
  }
}
